import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue #30: the shipped snippet's send-later binding (contrib/neomutt/mo-sendmail.muttrc) in neomutt
/// under tmux, against the private Postfix and Dovecot: Esc l in the compose menu asks the time, and the
/// message waits in mo-sendmail's queue until then.
@Suite(.serialized) struct NeomuttSendLaterTests {
    /// `m` to rcpt@mo.test with `subject`, up to the compose menu (the editor adds the body).
    static func compose(_ session: NeomuttSession, subject: String, steps: (String, String)) {
        session.keys("m", "rcpt@mo.test", "Enter")
        #expect(session.wait(for: "Subject:", step: steps.0), "\(session.screen)")
        session.keys(subject, "Enter")
        #expect(session.wait(for: "y:Send", step: steps.1), "\(session.screen)")
    }

    @Test func escLAsksTheTimeAndTheMessageWaitsForIt() throws {
        guard access("/usr/bin/neomutt", X_OK) == 0, access("/usr/bin/tmux", X_OK) == 0 else {
            Issue.record("neomutt or tmux is not installed (apt-get install neomutt tmux)")
            return
        }
        let servers = try MailServers.start()
        defer { servers.stop() }
        let dir = try TemporaryDirectory("mo-e2e-later")
        defer { dir.remove() }
        let d = dir.path, bin = TestPaths.binDirectory
        let token = "later" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        let config = d + "/config.toml"
        try writePrivateFile(config, servers.dovecot.accountConfig(in: d, address: "sender@mo.test") + servers.smtpTable())
        let env = ["MO_CONFIG": config, "HOME": d]
        #expect(try ChildProcess.run([bin + "/mo-sync", "--quiet"], environment: env).status == 0)
        let editor = d + "/editor.sh"
        try "#!/bin/sh\nprintf 'see you later\\n' >> \"$1\"\n".write(toFile: editor, atomically: true, encoding: .utf8)
        chmod(editor, 0o755)
        let muttrc = """
            set folder = "\(d)/Mail"
            set spoolfile = "+INBOX"
            set mbox_type = Maildir
            set from = "sender@mo.test"
            set realname = "Sender"
            set editor = "\(editor)"
            set autoedit = no
            set fast_reply = yes
            set wait_key = no
            set quit = yes
            source \(TestPaths.projectRoot)/contrib/neomutt/mo-sendmail.muttrc

            """
        try muttrc.write(toFile: d + "/muttrc", atomically: true, encoding: .utf8)
        let session = NeomuttSession(socket: "mo-e2e-\(token)", artifacts: TestPaths.projectRoot + "/.build/artifacts/neomutt-later")
        defer { session.stop() }
        try session.start("TERM=xterm HOME=\(d) MO_CONFIG=\(config) PATH=\(bin):$PATH neomutt -n -F \(d)/muttrc; echo $? > \(d)/exit")
        #expect(session.wait(for: "INBOX", step: "01-index") || session.wait(for: "Mail", step: "01-index"), "\(session.screen)")
        Self.compose(session, subject: token, steps: ("02-subject", "03-compose"))
        session.keys("Escape", "l")
        #expect(session.wait(for: "Send at", step: "04-asked"), "\(session.screen)")
        session.keys("tomorrow 09:00", "Enter")
        #expect(session.waitGone("y:Send", step: "05-sent"), "\(session.screen)")
        var queue = ""
        for _ in 0..<50 {
            queue = try ChildProcess.run([bin + "/mo-sendmail", "--queue"], environment: env).stdoutString
            if queue.contains(token) { break }
            usleep(100_000)
        }
        #expect(queue.contains(token) && queue.contains("sends ") && queue.contains(" 09:00 "), "\(queue)")
        #expect(try servers.waitDelivered(token, count: 1, timeout: 1.5).isEmpty, "not before its time")
        // The next message is sent at once again (the send-hook).
        let next = "now" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        Self.compose(session, subject: next, steps: ("06-subject", "07-compose"))
        session.keys("y")
        #expect(try servers.waitDelivered(next, count: 1).count == 1)
        // A day and a half on, the first goes.
        let flush = try ChildProcess.run([bin + "/mo-sendmail", "--flush"], environment: env.merging(["MO_CLOCK_SKEW": "129600"]) { $1 })
        #expect(try servers.waitDelivered(token, count: 1).count == 1, "\(flush.stdoutString)\(flush.stderrString)")
        session.keys("q")
        _ = session.waitExit(d + "/exit")

        // Undo send: with a delay, Esc u in the index takes the message back to Drafts.
        let text = try String(contentsOfFile: config, encoding: .utf8)
        try writePrivateFile(config, text.replacingOccurrences(of: "[general]\n", with: "[general]\nsend-delay = \"6s\"\n"))
        let undone = "undo" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)
        try? FileManager.default.removeItem(atPath: d + "/exit")
        try session.start("TERM=xterm HOME=\(d) MO_CONFIG=\(config) PATH=\(bin):$PATH neomutt -n -F \(d)/muttrc; echo $? > \(d)/exit")
        #expect(session.wait(for: "INBOX", step: "08-index") || session.wait(for: "Mail", step: "08-index"), "\(session.screen)")
        Self.compose(session, subject: undone, steps: ("09-subject", "10-compose"))
        session.keys("y")
        #expect(session.waitGone("y:Send", step: "11-sent"), "\(session.screen)")
        session.keys("Escape", "u")
        var drafts: [String] = []
        for _ in 0..<50 where drafts.isEmpty {
            usleep(100_000)
            drafts = ((try? FileManager.default.contentsOfDirectory(atPath: d + "/Mail/Drafts/cur")) ?? []).filter {
                ((try? String(contentsOfFile: d + "/Mail/Drafts/cur/" + $0, encoding: .utf8)) ?? "").contains(undone)
            }
        }
        #expect(drafts.count == 1, "\(session.screen)")
        #expect(try servers.waitDelivered(undone, count: 1, timeout: 9).isEmpty, "past its delay, still not sent")
        session.keys("q")
        _ = session.waitExit(d + "/exit")
    }
}
