import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue #29: the shipped neomutt snippet's `\f` fetches the placeholder under the cursor (`max-size`):
/// neomutt in tmux, the private Dovecot, the real `mo-sync`. The placeholder shows its notice; after `\f`
/// the same file holds the message, and neomutt shows its body.
@Suite(.serialized) struct NeomuttPlaceholderTests {
    @Test func theSnippetsMacroFetchesThePlaceholderUnderTheCursor() throws {
        guard access("/usr/bin/neomutt", X_OK) == 0, access("/usr/bin/tmux", X_OK) == 0 else {
            Issue.record("neomutt or tmux is not installed (apt-get install neomutt tmux)")
            return
        }
        let server = try TestServer.start(seed: [])
        defer { server.stop() }
        let dir = try TemporaryDirectory("mo-e2e-placeholder")
        defer { dir.remove() }
        let d = dir.path, bin = TestPaths.binDirectory
        let token = "ph" + String(UInt32.random(in: 0..<UInt32.max), radix: 36)

        let seed = """
            import imaplib, ssl, sys
            ctx = ssl.create_default_context(cafile=sys.argv[2])
            c = imaplib.IMAP4_SSL("127.0.0.1", int(sys.argv[1]), ssl_context=ctx)
            c.login(sys.argv[3], sys.argv[4])
            body = "".join("line %d of the big message, padded to about fifty bytes.\\r\\n" % i for i in range(4000))
            m = ("From: Alice <alice@mo.test>\\r\\nTo: me@mo.test\\r\\nSubject: big-one\\r\\nMessage-ID: <big-one@mo.test>\\r\\n"
                 "Date: Tue, 24 Nov 2026 10:00:00 +0000\\r\\n\\r\\n" + body)
            c.append("INBOX", "(\\\\Seen)", None, m.encode())
            c.logout()
            """
        let seeded = try ChildProcess.run(["python3", "-c", seed, String(server.imapsPort), server.caFile, server.user, server.password])
        try #require(seeded.status == 0, "\(seeded.stderrString)")
        let config = d + "/config.toml"
        try (server.accountConfig(in: d) + "[account.test.sync]\nmax-size = \"100K\"\n").write(
            toFile: config, atomically: true, encoding: .utf8)
        let env = ["MO_CONFIG": config, "HOME": d]
        #expect(try ChildProcess.run([bin + "/mo-sync", "--quiet"], environment: env).status == 0)
        #expect(try ChildProcess.run([bin + "/mo-index", "update", "--quiet"], environment: env).status == 0)
        let cur = d + "/Mail/INBOX/cur"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: cur).first)
        #expect((try? String(contentsOfFile: cur + "/" + name, encoding: .utf8))?.hasPrefix("X-Mo-Placeholder: ") == true)

        let muttrc = """
            set folder = "\(d)/Mail"
            set spoolfile = "+INBOX"
            set mbox_type = Maildir
            set wait_key = no
            set quit = yes
            source \(TestPaths.projectRoot)/contrib/neomutt/mo-index.muttrc
            unset new_mail_command

            """
        try muttrc.write(toFile: d + "/muttrc", atomically: true, encoding: .utf8)
        let session = NeomuttSession(socket: "mo-e2e-\(token)", artifacts: TestPaths.projectRoot + "/.build/artifacts/neomutt-placeholder")
        defer { session.stop() }
        try session.start("TERM=xterm HOME=\(d) MO_CONFIG=\(config) PATH=\(bin):$PATH neomutt -n -F \(d)/muttrc; echo $? > \(d)/exit")
        #expect(session.wait(for: "big-one", step: "01-inbox"), "\(session.screen)")
        session.keys("\\", "f")
        var filled = false
        for _ in 0..<100 where !filled {
            usleep(100_000)
            filled = (try? String(contentsOfFile: cur + "/" + name, encoding: .utf8))?.contains("line 3999") == true
        }
        #expect(filled, "\\f did not fill the placeholder: \(session.screen)")
        session.keys("Enter")  // open it
        #expect(session.wait(for: "line 1 of the big message", step: "03-body"), "\(session.screen)")
        session.keys("q", "q")
        _ = session.waitExit(d + "/exit")
        let after = try FileManager.default.contentsOfDirectory(atPath: cur)
        #expect(after == [name], "the same file name: \(after)")
        let text = (try? String(contentsOfFile: cur + "/" + name, encoding: .utf8)) ?? ""
        #expect(!text.hasPrefix("X-Mo-Placeholder") && text.contains("line 3999 of the big message"))
    }
}
