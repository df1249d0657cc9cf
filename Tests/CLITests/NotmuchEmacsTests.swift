import Foundation
import MoCore
import MoTestSupport
import Testing

let notmuchEmacsLisp = "/usr/share/emacs/site-lisp/elpa/notmuch-0.37"

/// notmuch-emacs itself (Debian's elpa-notmuch 0.37, in `emacs --batch`) on mo-index's notmuch command
/// line, over a Maildir that mo-sync keeps with the private Dovecot: the hello screen, a search, a thread
/// opened (and so read), a tag, a reply. Then one mo-sync: the read flag and the tag are on the server.
/// CI installs emacs-nox and elpa-notmuch (.ci/run sets MO_CI): there their absence is a failure.
@Suite(
    .enabled(
        if: (FileManager.default.isExecutableFile(atPath: "/usr/bin/emacs")
            && FileManager.default.fileExists(atPath: notmuchEmacsLisp + "/notmuch.el")) || getenv("MO_CI") != nil))
struct NotmuchEmacsTests {
    static let lisp = notmuchEmacsLisp

    /// Each step prints `ok NAME` or `FAIL NAME: what was there`; the exit status is 1 after a failure.
    static let script = """
        (add-to-list 'load-path "\(lisp)")
        (require 'notmuch)
        (setq notmuch-command (getenv "NOTMUCH_LINK"))
        (defvar mo-failed nil)
        (defun mo-check (name ok got)
          (princ (format "%s %s%s\\n" (if ok "ok" "FAIL") name (if ok "" (format ": %S" got))))
          (unless ok (setq mo-failed t)))
        (defun mo-wait () (while (get-buffer-process (current-buffer)) (accept-process-output nil 0.1)))
        (condition-case err
            (progn
              (notmuch-hello)
              (mo-check "hello" (string-match-p "Saved searches" (buffer-string)) (buffer-string))
              (notmuch-search "tag:unread")
              (mo-wait)
              (mo-check "search" (string-match-p "readme" (buffer-string)) (buffer-string))
              (goto-char (point-min))
              (notmuch-search-show-thread)
              (set-buffer (window-buffer (selected-window)))
              (mo-check "show" (string-match-p "Hello readme\\\\." (buffer-string)) (buffer-string))
              (notmuch-show-mark-read)
              (notmuch-show-tag '("+todo"))
              (mo-check "tags" (equal (sort (notmuch-show-get-tags) #'string<) '("todo")) (notmuch-show-get-tags))
              (notmuch-show-reply)
              (set-buffer (window-buffer (selected-window)))
              (mo-check "reply" (and (string-match-p "^Subject: Re: readme$" (buffer-string))
                                     (string-match-p "^To: Bob <bob@mo.test>" (buffer-string))
                                     (string-match-p "^> Hello readme\\\\.$" (buffer-string)))
                        (buffer-string)))
          (error (mo-check "no error" nil err)))
        (kill-emacs (if mo-failed 1 0))
        """

    @Test func helloSearchShowTagReply() throws {
        let (server, tmp) = try SnoozeUndoTests.seededServer("mo-notmuch-emacs", subjects: ["readme", "other"])
        defer { server.stop(); tmp.remove() }
        let a = try SnoozeUndoTests.Device(server, tmp.path + "/a")
        try a.sync()
        #expect(try a.index(["update", "--quiet"]).status == 0)
        #expect(try a.index(["notmuch", "tag", "+unread", "--", "subject:readme"]).status == 0)
        try a.sync()
        #expect(try SnoozeUndoTests.serverFlags(server, "readme")["INBOX"]?.first == "")

        let link = tmp.path + "/bin/notmuch"
        try FileManager.default.createDirectory(atPath: tmp.path + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: TestPaths.binDirectory + "/mo-index")
        try writePrivateFile(tmp.path + "/test.el", Self.script)
        let emacs = try ChildProcess.run(
            ["timeout", "120", "/usr/bin/emacs", "--batch", "-Q", "-l", tmp.path + "/test.el"],
            environment: a.env.merging(["NOTMUCH_LINK": link]) { $1 })
        #expect(emacs.status == 0, "\(emacs.stdoutString)\n\(emacs.stderrString)")
        for step in ["hello", "search", "show", "tags", "reply"] {
            #expect(emacs.stdoutString.contains("ok \(step)\n"), "\(step): \(emacs.stdoutString)")
        }

        try a.sync()
        let flags = try SnoozeUndoTests.serverFlags(server, "readme")["INBOX"]?.first ?? ""
        // The tag `todo` travels as Thunderbird's keyword for it (Maildir's TagVocabulary).
        #expect(flags.contains("\\Seen") && flags.contains("$label4"), "\(flags)")
    }
}
