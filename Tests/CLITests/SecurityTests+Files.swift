#if canImport(Glibc)
    import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

extension SecurityTests {
    /// A full `--debug` trace, stdout, stderr and the state files never hold the password or token, plain
    /// or inside base64 SASL (LOGIN, PLAIN, XOAUTH2, OAUTHBEARER; Dovecot takes the password as the token).
    @Test func credentialsNeverInTracesOrState() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        for auth in ["login", "plain", "xoauth2", "oauthbearer"] {
            let dir = try TemporaryDirectory()
            defer { dir.remove() }
            let config = try Self.tlsConfig(
                dir, port: server.imapsPort, caFile: server.caFile, user: server.user,
                password: server.password, auth: auth)
            let r = try Self.sync(config, ["--debug"])
            #expect(r.status == 0, "\(auth): \(r.stderrString.suffix(500))")
            #expect(r.stderrString.contains("<redacted>"), "\(auth): no redacted login in the trace")
            let state = try ChildProcess.run(["sh", "-c", "find \"$0\" -type f -exec cat {} +", dir.path + "/state"]).stdoutString
            let everything = r.stdoutString + r.stderrString + state
            #expect(!everything.contains(server.password), "\(auth): the password is in the output")
            for token in Self.base64Words(everything) {
                let decoded = try ChildProcess.run(["base64", "-d"], input: Array(token.utf8)).stdoutString
                #expect(!decoded.contains(server.password), "\(auth): the password is in base64 \(token)")
            }
        }
    }

    /// Words that could be base64 (16 characters or more of its alphabet).
    static func base64Words(_ text: String) -> [String] {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
        return text.split { !alphabet.contains($0) }.map(String.init).filter { $0.count >= 16 }
    }

    /// Under umask 022, a sync and a queued mo-sendmail leave the state directory, the journal, the outbox
    /// and the Maildir private: files 0600, directories 0700.
    @Test func stateQueueAndMailArePrivate() throws {
        let server = try ScriptedIMAPServer(mailboxes: HostileServerTests.twoFolders())
        let run = try ScriptedRun(
            server,
            account: """
                [account.t.smtp]
                host = "127.0.0.1"
                port = \(closedLoopbackPort())
                tls = "none"
                """)
        defer { run.remove() }
        let sync = try ChildProcess.run([
            "sh", "-c", "umask 022 && exec \"$0\" --config \"$1\"", TestPaths.binDirectory + "/mo-sync", run.config
        ])
        #expect(sync.status == 0, "\(sync.stderrString)")
        let message = Array("From: me@example.com\nTo: you@example.com\nSubject: queued\n\nHello.\n".utf8)
        let send = try ChildProcess.run(
            [
                "sh", "-c", "umask 022 && exec \"$0\" --config \"$1\" you@example.com",
                TestPaths.binDirectory + "/mo-sendmail", run.config
            ], input: message)
        #expect(send.stderrString.hasPrefix("mo-sendmail: queued: "), "\(send.stderrString)")
        #expect(access(run.stateDirectory + "/actions.journal", F_OK) == 0)
        for root in [run.stateDirectory, run.maildir] {
            let open = try ChildProcess.run([
                "find", root, "(", "-type", "f", "!", "-perm", "600", ")", "-o",
                "(", "-type", "d", "!", "-perm", "700", ")"
            ])
            #expect(open.stdoutString.isEmpty, "not private: \(open.stdoutString)")
        }
    }

    /// A config file other users can read or change gets one warning line; the run goes on.
    @Test func configOpenToOthersIsWarnedAbout() throws {
        let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX")])
        let run = try ScriptedRun(server)
        defer { run.remove() }
        #expect(try run.sync().lines.isEmpty)
        for (mode, word) in [(0o644, "readable"), (0o640, "readable"), (0o666, "writable")] {
            chmod(run.config, mode_t(mode))
            let r = try run.sync()
            #expect(r.status == 0)
            #expect(
                r.lines == ["mo-sync: warning: \(run.config) is \(word) by other users (mode 0\(String(mode, radix: 8))); chmod 600 it"],
                "\(r.stderrString)")
        }
    }
}
