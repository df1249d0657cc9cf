import Foundation
import Testing
import MoCore
import MoTestSupport

/// A user's session, end to end: `mo-sync` fills the Maildir from the private Dovecot; neomutt (Debian's, in
/// tmux) reads one message, flags one, deletes one, saves one to Archive, completes a recipient from
/// `mo-index address`, sends through `mo-sendmail` to the private Postfix, and opens `mo-index`'s search
/// results; the next `mo-sync` carries it all to the server. e2e-1 carries a tag (the server keyword
/// `project-x`, a keyword letter in its file name): neomutt's read keeps the letter, so the tag survives on
/// the server too (issue 17). Each step's screen is saved under
/// `.build/artifacts/neomutt-e2e/`.
@Suite(.serialized) struct NeomuttEndToEndTests {
    @Test func aSessionReachesTheServer() throws {
        guard access("/usr/bin/neomutt", X_OK) == 0, access("/usr/bin/tmux", X_OK) == 0 else {
            Issue.record("neomutt or tmux is not installed (apt-get install neomutt tmux)")
            return
        }
        let servers = try MailServers.start()
        defer { servers.stop() }
        let dir = try TemporaryDirectory("mo-e2e")
        defer { dir.remove() }
        let d = dir.path, bin = TestPaths.binDirectory
        let token = "e2e" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)

        // The server: four messages in INBOX, and an Archive folder.
        let seed = """
            import imaplib, os, ssl, sys
            ctx = ssl.create_default_context(cafile=sys.argv[2])
            c = imaplib.IMAP4_SSL("127.0.0.1", int(sys.argv[1]), ssl_context=ctx)
            c.login(sys.argv[3], sys.argv[4])
            c.create("Archive")
            for i in range(1, 5):
                m = ("From: Alice Example <alice@mo.test>\\r\\nTo: sender@mo.test\\r\\nSubject: e2e-%d\\r\\n"
                     "Message-ID: <e2e-%d@mo.test>\\r\\nDate: Tue, 24 Nov 2026 10:0%d:00 +0000\\r\\n\\r\\nbody of e2e-%d\\r\\n") % (i, i, i, i)
                c.append("INBOX", "(project-x)" if i == 1 else "", None, m.encode())
            c.logout()
            """
        let seeded = try ChildProcess.run([
            "python3", "-c", seed, String(servers.dovecot.imapsPort), servers.dovecot.caFile,
            servers.dovecot.user, servers.dovecot.password
        ])
        try #require(seeded.status == 0, "\(seeded.stderrString)")

        let config = d + "/config.toml"
        try (servers.dovecot.accountConfig(in: d, address: "sender@mo.test") + servers.smtpTable())
            .write(toFile: config, atomically: true, encoding: .utf8)
        let env = ["MO_CONFIG": config, "HOME": d]
        func mo(_ argv: [String]) throws -> ChildProcess.Result {
            try ChildProcess.run([bin + "/" + argv[0]] + argv.dropFirst(), environment: env)
        }

        // 1. mo-sync fills the Maildir; mo-index indexes it.
        let first = try mo(["mo-sync", "--quiet"])
        #expect(first.status == 0, "\(first.stderrString)")
        #expect(try mo(["mo-index", "update", "--quiet"]).status == 0)

        // 2.–5. neomutt.
        let index = "\(bin)/mo-index --config \(config)"
        let muttrc =
            try NeomuttSession.sendingSettings(dir: d, config: config, bodyLine: "hello from neomutt \(token)")
                + """
                set folder = "\(d)/Mail"
                set spoolfile = "+INBOX"
                set mbox_type = Maildir
                set delete = yes
                set confirmappend = no
                set confirmcreate = no
                set mark_old = no
                set wait_key = no
                set sort = date
                set quit = yes
                set query_command = "\(index) address '%s'"
                macro index \\\\s "<shell-escape>read -p 'mo-index query: ' q; \(index) query --links \(d)/search --output threads \\"\\$q\\" >/dev/null<enter><change-folder-readonly>\(d)/search<enter>" "search with mo-index"

                """
        try muttrc.write(toFile: d + "/muttrc", atomically: true, encoding: .utf8)
        let session = NeomuttSession(socket: "mo-e2e-\(token)", artifacts: TestPaths.projectRoot + "/.build/artifacts/neomutt-e2e")
        defer { session.stop() }
        try session.start("TERM=xterm HOME=\(d) neomutt -n -F \(d)/muttrc; echo $? > \(d)/exit")
        #expect(session.wait(for: "e2e-4", step: "01-inbox"), "\(session.screen)")

        session.keys("/", "e2e-1", "Enter", "Enter")  // read e2e-1
        #expect(session.wait(for: "body of e2e-1", step: "02-read"), "\(session.screen)")
        session.keys("q")
        #expect(session.wait(for: "e2e-4", step: "03-back"))
        session.keys("/", "e2e-2", "Enter", "F")  // flag e2e-2
        session.keys("/", "e2e-3", "Enter", "d", "$")  // delete e2e-3, sync the mailbox
        #expect(session.waitGone("e2e-3", step: "04-deleted"), "\(session.screen)")
        session.keys("/", "e2e-4", "Enter", "s")  // save e2e-4 to Archive
        #expect(session.wait(for: "Save to mailbox", step: "05-save-prompt"), "\(session.screen)")
        session.keys("C-u", "=Archive", "Enter", "$")
        #expect(session.waitGone("e2e-4", step: "06-saved"), "\(session.screen)")

        session.keys("m", "alic", "C-t")  // compose: complete a recipient (query)
        #expect(session.wait(for: "alice@mo.test", step: "07-completed"), "\(session.screen)")
        session.keys("Enter")
        #expect(session.wait(for: "Subject:", step: "08-subject"), "\(session.screen)")
        session.keys(token, "Enter")
        #expect(session.wait(for: "y:Send", step: "09-compose"), "\(session.screen)")
        session.keys("y")
        #expect(session.wait(for: "e2e-1", step: "10-sent"), "\(session.screen)")

        session.keys("\\", "s")  // search with mo-index
        #expect(session.wait(for: "mo-index query:", step: "11-query-prompt"), "\(session.screen)")
        session.keys("e2e-1", "Enter")
        #expect(session.wait(for: "search", step: "12-results") && session.screen.contains("e2e-1"), "\(session.screen)")
        session.keys("q")
        _ = session.waitExit(d + "/exit")

        // neomutt marked e2e-1 read with one rename that kept its keyword letter (the tag).
        let inbox = d + "/Mail/INBOX"
        let keywords = (try? String(contentsOfFile: inbox + "/dovecot-keywords", encoding: .utf8)) ?? ""
        let letter = keywords.split(separator: "\n").first { $0.hasSuffix(" project-x") }
            .flatMap { Int($0.split(separator: " ")[0]) }.map { Character(Unicode.Scalar(UInt8(ascii: "a") + UInt8($0))) }
        #expect(letter != nil, "dovecot-keywords: \(keywords)")
        let readFile = try FileManager.default.contentsOfDirectory(atPath: inbox + "/cur").first {
            (try? String(contentsOfFile: inbox + "/cur/" + $0, encoding: .utf8))?.contains("Subject: e2e-1\n") == true
        }
        let info = readFile.flatMap { $0.split(separator: ":").last }.map(String.init) ?? ""
        #expect(info.hasPrefix("2,") && info.contains("S") && letter.map(info.contains) == true, "e2e-1 is \(readFile ?? "gone")")

        // The server, after the next sync.
        let second = try mo(["mo-sync", "--quiet", "--debug"])
        #expect(second.status == 0, "\(second.stderrString.suffix(2000))")
        // neomutt's save writes a copy under a new name with a Content-Length field added: other bytes than
        // the server's, so it goes up as a new message (APPEND) and the original is expunged, not moved.
        let commands = second.stderrString.split(separator: "\n").filter { $0.hasPrefix("C: ") }
        #expect(commands.contains { $0.contains(" APPEND Archive") } && commands.contains { $0.contains(" UID EXPUNGE ") }, "\(commands)")
        try? commands.joined(separator: "\n").write(toFile: session.artifacts + "/13-sync-commands.txt", atomically: true, encoding: .utf8)
        let check = """
            import imaplib, ssl, sys
            ctx = ssl.create_default_context(cafile=sys.argv[2])
            c = imaplib.IMAP4_SSL("127.0.0.1", int(sys.argv[1]), ssl_context=ctx)
            c.login(sys.argv[3], sys.argv[4])
            for box in ("INBOX", "Archive", "Sent"):
                c.select(box, readonly=True)
                typ, data = c.fetch("1:*", "(FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
                for item in data:
                    if isinstance(item, tuple):
                        flags = item[0].decode().split("FLAGS (")[1].split(")")[0]
                        subject = item[1].decode().strip().replace("Subject: ", "")
                        print(box, subject, "[" + flags + "]")
            """
        let listing = try ChildProcess.run([
            "python3", "-c", check, String(servers.dovecot.imapsPort), servers.dovecot.caFile,
            servers.dovecot.user, servers.dovecot.password
        ]).stdoutString
        let lines = listing.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("INBOX e2e-1 ") && $0.contains("\\Seen") && $0.contains("project-x") }, "\(listing)")
        #expect(lines.contains { $0.hasPrefix("INBOX e2e-2 ") && $0.contains("\\Flagged") }, "\(listing)")
        #expect(!lines.contains { $0.contains(" e2e-3 ") }, "\(listing)")
        #expect(
            !lines.contains { $0.hasPrefix("INBOX e2e-4 ") } && lines.filter { $0.hasPrefix("Archive e2e-4 ") }.count == 1, "\(listing)")
        #expect(lines.filter { $0.hasPrefix("Sent \(token) ") }.count == 1, "\(listing)")
        let delivered = try servers.waitDelivered(token, count: 1, settle: 0.5)
        #expect(delivered.count == 1 && delivered.allSatisfy { String(decoding: $0, as: UTF8.self).contains("alice@mo.test") })
        try? listing.write(toFile: session.artifacts + "/14-server.txt", atomically: true, encoding: .utf8)
    }
}

/// neomutt in a detached tmux session: keys in, screens out (each wait saves the screen as an artefact).
final class NeomuttSession {
    let socket: String
    let artifacts: String
    private(set) var screen = ""

    /// The muttrc lines for sending as sender@mo.test through mo-sendmail with `config`, composing with
    /// an editor (`dir`/editor.sh, written here) that appends `bodyLine` to the body.
    static func sendingSettings(dir: String, config: String, bodyLine: String) throws -> String {
        let editor = dir + "/editor.sh"
        try "#!/bin/sh\nprintf '\(bodyLine)\\n' >> \"$1\"\n".write(toFile: editor, atomically: true, encoding: .utf8)
        chmod(editor, 0o755)
        return """
            set sendmail = "\(TestPaths.binDirectory)/mo-sendmail -oem -oi --config \(config)"
            set use_envelope_from = yes
            set record = ""
            set from = "sender@mo.test"
            set realname = "Sender"
            set editor = "\(editor)"
            set sendmail_wait = 0
            set fast_reply = yes
            set autoedit = no
            set edit_headers = no

            """
    }

    init(socket: String, artifacts: String) {
        self.socket = socket
        self.artifacts = artifacts
        try? FileManager.default.createDirectory(atPath: artifacts, withIntermediateDirectories: true)
    }

    func start(_ command: String) throws {
        let r = try ChildProcess.run(["tmux", "-L", socket, "new-session", "-d", "-x", "160", "-y", "40", command])
        guard r.status == 0 else { throw GenericError(.software, "tmux: \(r.stderrString)") }
    }

    /// Named keys (Enter, Tab, C-u, ...) and literal text, one tmux send-keys each.
    func keys(_ keys: String...) {
        for k in keys {
            let named = ["Enter", "Tab", "C-u", "C-t", "Escape"].contains(k)
            _ = try? ChildProcess.run(["tmux", "-L", socket, "send-keys"] + (named ? [k] : ["-l", k]))
            usleep(150_000)
        }
    }

    private func capture() -> String {
        screen = (try? ChildProcess.run(["tmux", "-L", socket, "capture-pane", "-p"]).stdoutString) ?? ""
        return screen
    }

    /// Waits until the screen shows `text`; saves the screen as `step`.txt either way.
    @discardableResult
    func wait(for text: String, timeout: Double = 10, step: String) -> Bool {
        let deadline = monotonicSeconds() + timeout
        var found = false
        repeat {
            if capture().contains(text) { found = true; break }
            usleep(100_000)
        } while monotonicSeconds() < deadline
        try? screen.write(toFile: artifacts + "/\(step).txt", atomically: true, encoding: .utf8)
        return found
    }

    /// Waits until the screen no longer shows `text`.
    func waitGone(_ text: String, timeout: Double = 10, step: String) -> Bool {
        let deadline = monotonicSeconds() + timeout
        var gone = false
        repeat {
            if !capture().contains(text) { gone = true; break }
            usleep(100_000)
        } while monotonicSeconds() < deadline
        try? screen.write(toFile: artifacts + "/\(step).txt", atomically: true, encoding: .utf8)
        return gone
    }

    func waitExit(_ marker: String, timeout: Double = 10) -> Bool {
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            if FileManager.default.fileExists(atPath: marker) { return true }
            usleep(100_000)
        }
        return false
    }

    func stop() { _ = try? ChildProcess.run(["tmux", "-L", socket, "kill-server"]) }
}
