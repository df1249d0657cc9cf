import Foundation
import Testing
import MoCore
import MoTestSupport

/// mo-sendmail as neomutt runs it, against the private Postfix (scripts/test-smtp-server) with SASL and the
/// Sent folder from the private Dovecot. Messages are told apart by a unique token in their Subject.
@Suite(.serialized) struct SendmailCLITests {
    /// One Postfix + Dovecot pair for the whole suite.
    static let servers: Result<MailServers, Error> = Result {
        let servers = try MailServers.start()
        atexit { if case .success(let s) = SendmailCLITests.servers { s.stop() } }
        return servers
    }

    // MARK: - Sending

    @Test func plainSendIsDeliveredAndTheSentCopyLandsOnTheNextFlush() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let r = try t.sendmail(["-oem", "-oi", "--", "rcpt@mo.test"], t.message(token: token))
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(r.stderrString.isEmpty)
        #expect(try t.servers.waitDelivered(token, count: 1).count == 1)
        #expect(try t.sendmail(["--queue"]).stdoutString.isEmpty)
        // The Sent copy is an append action, performed by the next flush (mo-sync's, or --flush).
        #expect(t.servers.sentCopies(token).isEmpty)
        let flush = try t.sendmail(["--flush"])
        #expect(flush.status == 0, "\(flush.stdoutString)\(flush.stderrString)")
        #expect(t.servers.sentCopies(token).count == 1)
        #expect(try t.sendmail(["--flush"]).status == 0)
        #expect(t.servers.sentCopies(token).count == 1)
        #expect(try t.servers.waitDelivered(token, count: 1, settle: 0.5).count == 1)
    }

    @Test func neomuttDefaultStyleBccOnlyInArgumentsIsDeliveredAndKeptInTheSentCopy() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let r = try t.sendmail(
            [
                "-B8BITMIME", "-f", "sender@mo.test", "-N", "failure,delay", "-R", "hdrs", "--",
                "rcpt@mo.test", "hidden@mo.test"
            ], t.message(token: token))
        #expect(r.status == 0, "\(r.stderrString)")
        let delivered = try t.servers.waitDelivered(token, count: 2)
        #expect(delivered.count == 2)
        for m in delivered { #expect(!Fixture.header(m).lowercased().contains("\nbcc:")) }
        #expect(delivered.contains { Fixture.header($0).contains("Delivered-To: hidden@mo.test") })
        _ = try t.sendmail(["--flush"])
        let sent = t.servers.sentCopies(token)
        #expect(sent.count == 1)
        #expect(sent.first.map { Fixture.header($0).contains("Bcc: hidden@mo.test") } == true)
    }

    @Test func dashTReadsToCcBccAndStripsBcc() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let message =
            "From: Sender <sender@mo.test>\nTo: rcpt@mo.test\nCc: Copy <copy@mo.test>\nBcc: secret@mo.test\n"
            + "Subject: \(token)\n\nhello\n"
        let r = try t.sendmail(["-t", "-i"], Array(message.utf8))
        #expect(r.status == 0, "\(r.stderrString)")
        let delivered = try t.servers.waitDelivered(token, count: 3)
        #expect(delivered.count == 3)
        for m in delivered {
            #expect(!Fixture.header(m).lowercased().contains("\nbcc:"))
            #expect(
                !String(decoding: m, as: UTF8.self).contains("secret@mo.test") || Fixture.header(m).contains("Delivered-To: secret@mo.test")
            )
        }
        #expect(delivered.contains { Fixture.header($0).contains("Delivered-To: secret@mo.test") })
        // Date and Message-ID were added.
        #expect(Fixture.header(delivered[0]).contains("\nDate: "))
        #expect(Fixture.header(delivered[0]).contains("\nMessage-ID: <"))
    }

    /// With -t, a recipient given only on the command line is delivered and recorded in the Sent copy's one
    /// Bcc field, after the header's own Bcc addresses (issue #15).
    @Test func dashTWithAnExtraArgumentKeepsItInTheSentCopysBcc() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let message = "From: Sender <sender@mo.test>\nTo: rcpt@mo.test\nBcc: secret@mo.test\nSubject: \(token)\n\nhello\n"
        let r = try t.sendmail(["-t", "-i", "extra@mo.test"], Array(message.utf8))
        #expect(r.status == 0, "\(r.stderrString)")
        let delivered = try t.servers.waitDelivered(token, count: 3)
        #expect(delivered.count == 3)
        for m in delivered { #expect(!Fixture.header(m).lowercased().contains("\nbcc:")) }
        _ = try t.sendmail(["--flush"])
        let sent = t.servers.sentCopies(token)
        #expect(sent.count == 1)
        let header = sent.first.map { Fixture.header($0) } ?? ""
        #expect(header.contains("Bcc: secret@mo.test, extra@mo.test"), "\(header)")
        #expect(header.components(separatedBy: "\nBcc:").count <= 2, "\(header)")
    }

    @Test func eightBitBodyArrivesIntact() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let body = "Grüße aus Köln — ✓ ½\n"
        let r = try t.sendmail(
            ["rcpt@mo.test"],
            t.message(
                token: token, body: body,
                extra: "MIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n"))
        #expect(r.status == 0, "\(r.stderrString)")
        let delivered = try t.servers.waitDelivered(token, count: 1)
        #expect(String(decoding: delivered[0], as: UTF8.self).hasSuffix(body))
    }

    @Test func twentyMegabyteAttachment() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        var text =
            "From: sender@mo.test\nTo: rcpt@mo.test\nSubject: \(token)\nMIME-Version: 1.0\n"
            + "Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nsee attachment\n--b\n"
            + "Content-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\n"
        var bytes = Array(text.utf8)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for i in 0..<(20 * 1024 * 1024 * 4 / 3 / 76) {
            for j in 0..<76 { bytes.append(alphabet[(i &* 7 &+ j) & 63]) }
            bytes.append(10)
        }
        text = "--b--\n"
        bytes += Array(text.utf8)
        let r = try t.sendmail(["rcpt@mo.test"], bytes)
        #expect(r.status == 0, "\(r.stderrString)")
        let delivered = try t.servers.waitDelivered(token, count: 1, timeout: 90)
        #expect(delivered.count == 1 && delivered[0].count > bytes.count)
        #expect(Array(delivered[0].suffix(bytes.count - 200)) == Array(bytes.suffix(bytes.count - 200)))
    }

    // MARK: - Permanent failures: non-zero, the server's words, nothing queued

    @Test func rejectedRecipientFailsWithTheServersWordsAndQueuesNothing() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let r = try t.sendmail(["rcpt@mo.test", t.servers.rejectAddress], t.message(token: token))
        #expect(r.status == 69)
        #expect(r.stderrString.hasPrefix("mo-sendmail: smtp 127.0.0.1:"))
        #expect(r.stderrString.contains("550 5.1.1"))
        #expect(r.stderrString.components(separatedBy: "\n").count == 2)
        #expect(try t.sendmail(["--queue"]).stdoutString.isEmpty)
        #expect(t.outboxFiles().isEmpty)
        Thread.sleep(forTimeInterval: 1)
        #expect(t.servers.delivered(token).isEmpty)
    }

    @Test func badPasswordFailsWith77AndQueuesNothing() throws {
        let t = try Fixture(password: "wrong-password")
        defer { t.remove() }
        let r = try t.sendmail(["rcpt@mo.test"], t.message(token: Fixture.token()))
        #expect(r.status == 77, "\(r.stderrString)")
        #expect(r.stderrString.contains("authentication"))
        #expect(try t.sendmail(["--queue"]).stdoutString.isEmpty)
        #expect(t.outboxFiles().isEmpty)
    }

    @Test func usageErrors() throws {
        let t = try Fixture()
        defer { t.remove() }
        #expect(try t.sendmail([], t.message(token: "x")).status == 64)
        #expect(try t.sendmail(["-Z"], t.message(token: "x")).status == 64)
        #expect(try t.sendmail(["-bd"], t.message(token: "x")).status == 64)
        #expect(try t.sendmail(["-a", "nosuch", "a@mo.test"], t.message(token: "x")).status == 78)
    }

    // MARK: - Offline queue

    @Test func serverDownQueuesThenFlushDeliversExactlyOnceWithSentCopy() throws {
        let t = try Fixture(smtpPort: closedLoopbackPort())
        defer { t.remove() }
        let token = Fixture.token()
        let r = try t.sendmail(["-oem", "-oi", "--", "rcpt@mo.test"], t.message(token: token))
        #expect(r.status == 0)
        #expect(r.stderrString.hasPrefix("mo-sendmail: queued: "), "\(r.stderrString)")
        #expect(r.stderrString.components(separatedBy: "\n").count == 2)
        let queue = try t.sendmail(["--queue"]).stdoutString.split(separator: "\n")
        #expect(queue.count == 1)
        #expect(queue.first?.contains("send queued to rcpt@mo.test \"\(token)\"") == true)

        try t.writeConfig(smtpPort: t.servers.submissionPort)
        let flush = try t.sendmail(["--flush"])
        #expect(flush.status == 0, "\(flush.stdoutString)\(flush.stderrString)")
        #expect(try t.servers.waitDelivered(token, count: 1, settle: 1).count == 1)
        #expect(t.servers.sentCopies(token).count == 1)
        #expect(try t.sendmail(["--queue"]).stdoutString.isEmpty)
        #expect(try t.sendmail(["--flush"]).status == 0)
        #expect(try t.servers.waitDelivered(token, count: 1, settle: 0.5).count == 1)
        #expect(t.servers.sentCopies(token).count == 1)
        #expect(t.journalLines() == ["mo-actions 1"])
        #expect(t.outboxFiles().isEmpty)
    }

    // MARK: - Send-only accounts

    @Test func sendOnlyAccountSendsWithNoSentCopyAndMoSyncFlushesItsQueue() throws {
        let t = try Fixture()
        defer { t.remove() }
        try t.writeSendOnlyConfig(smtpPort: t.servers.submissionPort)
        let token = Fixture.token()
        let r = try t.sendmail(["-oi", "rcpt@mo.test"], t.message(token: token))
        #expect(r.status == 0 && r.stderrString.isEmpty, "\(r.stderrString)")
        #expect(try t.servers.waitDelivered(token, count: 1).count == 1)
        // No Sent copy is queued: nothing is left for a flush.
        #expect(!t.journalLines().contains { $0.contains(" append ") })
        #expect(try t.sendmail(["--flush"]).status == 0 && t.journalLines() == ["mo-actions 1"])

        // Queued while the server is unreachable; mo-sync skips the account quietly but flushes the queue,
        // at its first run after the server is back (no backoff from the outage).
        try t.writeSendOnlyConfig(smtpPort: closedLoopbackPort())
        let later = Fixture.token()
        #expect(try t.sendmail(["rcpt@mo.test"], t.message(token: later)).stderrString.hasPrefix("mo-sendmail: queued: "))
        try t.writeSendOnlyConfig(smtpPort: t.servers.submissionPort)
        let sync = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "--quiet"], environment: t.environment)
        #expect(sync.status == 0 && sync.stdoutString.isEmpty && sync.stderrString.isEmpty, "\(sync.stdoutString)\(sync.stderrString)")
        #expect(try t.servers.waitDelivered(later, count: 1, settle: 1).count == 1)
        #expect(try t.sendmail(["--queue"]).stdoutString.isEmpty)
        #expect(t.servers.sentCopies(token).isEmpty && t.servers.sentCopies(later).isEmpty)
    }

    @Test func eachToolNamesWhatTheAccountLacks() throws {
        let t = try Fixture()
        defer { t.remove() }
        try t.writeSendOnlyConfig(smtpPort: t.servers.submissionPort, synced: true)
        // mo-sync on the send-only account: nothing to sync.
        let sync = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "relay"], environment: t.environment)
        #expect(sync.status == 78)
        #expect(
            sync.stderrString
                == "mo-sync: \(t.configPath):3: account.relay: send-only account (no maildir, no [account.relay.imap] or .jmap table): nothing to sync\n"
        )
        // mo-sendmail with the synced account that has no [smtp].
        let send = try t.sendmail(["-a", "synced", "rcpt@mo.test"], t.message(token: Fixture.token()))
        #expect(send.status == 78)
        #expect(
            send.stderrString
                == "mo-sendmail: \(t.configPath):12: account.synced: no [account.synced.smtp] table (nor [account.synced.jmap]): mo-sendmail needs one to send\n"
        )
        #expect(t.outboxFiles().isEmpty)
    }

    // MARK: - neomutt

    /// neomutt (Debian package `neomutt`) in a tmux session composes and sends through mo-sendmail; the Bcc
    /// recipient is delivered and no delivered copy has a Bcc field.
    @Test func neomuttSendsThroughMoSendmailInTmux() throws {
        guard access("/usr/bin/neomutt", X_OK) == 0, access("/usr/bin/tmux", X_OK) == 0 else {
            Issue.record("neomutt or tmux is not installed (apt-get install neomutt tmux)")
            return
        }
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let d = t.dir.path
        try FileManager.default.createDirectory(atPath: d + "/Mail/cur", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: d + "/Mail/new", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: d + "/Mail/tmp", withIntermediateDirectories: true)
        let muttrc =
            try NeomuttSession.sendingSettings(dir: d, config: t.configPath, bodyLine: "hello from neomutt")
                + """
                set folder = "\(d)"
                set spoolfile = "\(d)/Mail"
                set mbox_type = Maildir

                """
        try muttrc.write(toFile: d + "/muttrc", atomically: true, encoding: .utf8)
        let session = NeomuttSession(socket: "mo-test-\(token)", artifacts: TestPaths.projectRoot + "/.build/artifacts/neomutt-send")
        defer { session.stop() }
        try session.start("TERM=xterm HOME=\(d) neomutt -n -F \(d)/muttrc -s \(token) -b hidden@mo.test rcpt@mo.test; echo $? > \(d)/exit")
        // Wait for the compose screen (100 × 0.1 s, as before), then send with "y".
        session.wait(for: "y:Send", step: "compose")
        #expect(session.screen.contains("Bcc: hidden@mo.test"), "\(session.screen)")
        session.keys("y")
        _ = session.waitExit(d + "/exit")
        #expect((try? String(contentsOfFile: d + "/exit", encoding: .utf8)) == "0\n")
        let delivered = try t.servers.waitDelivered(token, count: 2, settle: 0.5)
        #expect(delivered.count == 2)
        #expect(delivered.contains { Fixture.header($0).contains("Delivered-To: hidden@mo.test") })
        for m in delivered {
            #expect(!Fixture.header(m).lowercased().contains("\nbcc:"))
            #expect(String(decoding: m, as: UTF8.self).contains("hello from neomutt"))
        }
    }

    // MARK: - Crashes (MO_CRASH_AT makes the binary _exit(137) at a named step)

    /// mo-sendmail killed at each step of a direct send, then a flush: the message arrives at most once,
    /// and exactly once unless the journal says it is in doubt.
    @Test(arguments: ["outbox-written", "queued", "sending", "committing", "accepted", "sent"])
    func sendmailKilledAtStep(step: String) throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let r = try t.sendmail(["rcpt@mo.test"], t.message(token: token), crashAt: step)
        #expect(r.status == 137)
        _ = try t.sendmail(["--flush"])
        let expected = step == "outbox-written" || step == "committing" ? 0 : 1
        #expect(try t.servers.waitDelivered(token, count: max(expected, 1), timeout: expected == 0 ? 1.5 : 30, settle: 1).count == expected)
        let queue = try t.sendmail(["--queue"]).stdoutString
        if step == "committing" || step == "accepted" {
            // In doubt: kept, shown, never resent by itself.
            #expect(queue.contains("send unknown"), "\(queue)")
            let id = String(queue.prefix { $0 != " " })
            if step == "committing" {
                #expect(try t.sendmail(["--retry", id]).status == 0)
                _ = try t.sendmail(["--flush"])
                #expect(try t.servers.waitDelivered(token, count: 1, settle: 1).count == 1)
            } else {
                #expect(try t.sendmail(["--drop", id]).status == 0)
            }
        } else {
            #expect(queue.isEmpty, "\(queue)")
        }
        #expect(try t.sendmail(["--queue"]).stdoutString.isEmpty)
        #expect(t.servers.sentCopies(token).count == (step == "outbox-written" || step == "accepted" ? 0 : 1))
    }

    /// A flush killed at each step, after mo-sendmail queued (exit 0) while the server was down.
    @Test(arguments: ["sending", "committing", "accepted", "sent", "appending", "appended", "compacting"])
    func flushKilledAtStep(step: String) throws {
        let t = try Fixture(smtpPort: closedLoopbackPort())
        defer { t.remove() }
        let token = Fixture.token()
        #expect(try t.sendmail(["rcpt@mo.test"], t.message(token: token)).status == 0)
        try t.writeConfig(smtpPort: t.servers.submissionPort)
        #expect(try t.sendmail(["--flush"], crashAt: step).status == 137)
        _ = try t.sendmail(["--flush"])
        if step == "committing" {
            // The one window SMTP cannot settle: the journal says "unknown"; the user retries.
            let queue = try t.sendmail(["--queue"]).stdoutString
            #expect(queue.contains("send unknown"), "\(queue)")
            _ = try t.sendmail(["--retry", String(queue.prefix { $0 != " " })])
            _ = try t.sendmail(["--flush"])
        } else if step == "accepted" {
            let queue = try t.sendmail(["--queue"]).stdoutString
            #expect(queue.contains("send unknown"), "\(queue)")
            _ = try t.sendmail(["--drop", String(queue.prefix { $0 != " " })])
        }
        #expect(try t.servers.waitDelivered(token, count: 1, settle: 1).count == 1)
        #expect(try t.sendmail(["--queue"]).stdoutString.isEmpty)
        #expect(t.servers.sentCopies(token).count == (step == "accepted" ? 0 : 1))
    }

    /// mo-sync flushes the journal before it fetches: killed at each step of that flush and run again, the
    /// queued message is delivered exactly once and its Sent copy lands once (the mail sync runs too).
    @Test(arguments: ["sending", "accepted", "sent", "appending", "appended"])
    func flushingMoSyncKilledAtStep(step: String) throws {
        let t = try Fixture(smtpPort: closedLoopbackPort())
        defer { t.remove() }
        let token = Fixture.token()
        #expect(try t.sendmail(["rcpt@mo.test"], t.message(token: token)).status == 0)
        try t.writeConfig(smtpPort: t.servers.submissionPort)
        // The unreachable server left no backoff: mo-sync (which honours retry times) sends it at once.
        var env = t.environment
        env["MO_CRASH_AT"] = step
        let sync = [TestPaths.binDirectory + "/mo-sync", "--quiet"]
        #expect(try ChildProcess.run(sync, environment: env).status == 137)
        env["MO_CRASH_AT"] = ""
        let rerun = try ChildProcess.run(sync, environment: env)
        #expect(rerun.status == 0, "\(rerun.stderrString)")
        if step == "accepted" {
            // Accepted by the server, then the process died before recording it: SMTP cannot tell, so the
            // action is in doubt and shown, never resent on its own.
            let status = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "status"], environment: env).stdoutString
            #expect(status.contains("unknown"), "\(status)")
        } else {
            #expect(try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "status"], environment: env).stdoutString.isEmpty)
        }
        #expect(try t.servers.waitDelivered(token, count: 1, settle: 1).count == 1)
        #expect(t.servers.sentCopies(token).count == (step == "accepted" ? 0 : 1))
    }

    /// Real SIGKILLs at random moments of mo-sendmail runs: every message that got exit 0 arrives exactly
    /// once in the end (or is reported in doubt), none arrives twice.
    @Test func randomKillsNeverLoseOrDuplicate() throws {
        let t = try Fixture()
        defer { t.remove() }
        var tokens: [(String, Int32)] = []
        for round in 0..<12 {
            let token = Fixture.token()
            let delayMicros = UInt32.random(in: 0...UInt32(40_000 + round * 10_000))
            let status = try t.sendmailKilled(["rcpt@mo.test"], t.message(token: token), afterMicroseconds: delayMicros)
            tokens.append((token, status))
        }
        _ = try t.sendmail(["--flush"])
        let queue = try t.sendmail(["--queue"]).stdoutString
        Thread.sleep(forTimeInterval: 2)
        for (token, status) in tokens {
            let n = t.servers.delivered(token).count
            #expect(n <= 1, "\(token) delivered \(n) times")
            if status == 0 { #expect(n == 1 || queue.contains(token), "\(token) exited 0 but was not delivered") }
        }
    }
}

// MARK: - Fixture

/// A temporary config and state directory pointing at the shared servers.
struct Fixture {
    let servers: MailServers
    let dir: TemporaryDirectory
    let password: String
    var configPath: String { dir.path + "/config.toml" }

    init(smtpPort: Int? = nil, password: String? = nil) throws {
        servers = try SendmailCLITests.servers.get()
        dir = try TemporaryDirectory("mo-sendmail")
        self.password = password ?? servers.password
        try writeConfig(smtpPort: smtpPort ?? servers.submissionPort)
    }

    func remove() { dir.remove() }

    static func token() -> String { "t" + String(UInt64.random(in: 0..<UInt64.max), radix: 36) }

    /// `test`: a synced account (maildir and [imap] on the private Dovecot) sending through `smtpPort`.
    func writeConfig(smtpPort: Int) throws {
        try writeConfig(accountTables("test", address: "sender@mo.test", synced: true, smtpPort: smtpPort))
    }

    /// `relay`: a send-only account ([smtp] alone). With `synced`, also `synced`: maildir and [imap], no [smtp].
    func writeSendOnlyConfig(smtpPort: Int, synced: Bool = false) throws {
        try writeConfig(
            accountTables("relay", address: "sender@mo.test", synced: false, smtpPort: smtpPort)
                + (synced ? accountTables("synced", address: "other@mo.test", synced: true, smtpPort: nil) : ""))
    }

    private func writeConfig(_ accounts: String) throws {
        try writePrivateFile(configPath, "[general]\nstate-dir = \"\(dir.path)/state\"\n" + accounts)
    }

    /// One account's tables: maildir and [imap] (STARTTLS) when `synced`, [smtp] on `smtpPort` when given.
    private func accountTables(_ name: String, address: String, synced: Bool, smtpPort: Int?) -> String {
        var lines = ["[account.\(name)]", "address = \"\(address)\""]
        if synced {
            lines += [
                "maildir = \"\(dir.path)/Mail\"", "[account.\(name).imap]", "host = \"127.0.0.1\"",
                "port = \(servers.imapPort)", "tls = \"starttls\"", "user = \"\(servers.user)\"",
                "password-command = \"echo \(servers.password)\"", "ca-file = \"\(servers.caFile)\""
            ]
        }
        return lines.map { $0 + "\n" }.joined() + (smtpPort.map { servers.smtpTable(account: name, port: $0, password: password) } ?? "")
    }

    func message(token: String, body: String = "hello\n", extra: String = "") -> [UInt8] {
        Array("From: Sender <sender@mo.test>\nTo: rcpt@mo.test\nSubject: \(token)\n\(extra)\n\(body)".utf8)
    }

    var environment: [String: String] { ["MO_CONFIG": configPath, "XDG_STATE_HOME": dir.path + "/xdg-state"] }

    func sendmail(_ args: [String], _ input: [UInt8] = [], crashAt: String? = nil) throws -> ChildProcess.Result {
        var env = environment
        env["MO_CRASH_AT"] = crashAt ?? ""
        return try ChildProcess.run([TestPaths.binDirectory + "/mo-sendmail"] + args, input: input, environment: env)
    }

    /// Runs mo-sendmail and SIGKILLs it after the delay (if it is still running); returns its status.
    func sendmailKilled(_ args: [String], _ input: [UInt8], afterMicroseconds delay: UInt32) throws -> Int32 {
        let inputFile = dir.path + "/input-\(UInt32.random(in: 0..<UInt32.max)).eml"
        try Data(input).write(to: URL(fileURLWithPath: inputFile))
        var pid: pid_t = 0
        let argv = [TestPaths.binDirectory + "/mo-sendmail"] + args
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputFile, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let envStrings = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        let cArgv = argv.map { strdup($0) } + [nil]
        let cEnv = envStrings.map { strdup($0) } + [nil]
        defer { cArgv.forEach { free($0) }; cEnv.forEach { free($0) } }
        let rc = posix_spawn(&pid, argv[0], &actions, nil, cArgv, cEnv)
        guard rc == 0 else { throw GenericError(.software, "posix_spawn: \(rc)") }
        usleep(delay)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    func outboxFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir.path + "/state/outbox")) ?? []).filter { !$0.hasPrefix(".") }
    }

    func journalLines() -> [String] {
        ((try? String(contentsOfFile: dir.path + "/state/actions.journal", encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    /// The header section of a stored message, starting with "\n" so "\nName:" matches any field.
    static func header(_ message: [UInt8]) -> String {
        let text = String(decoding: message, as: UTF8.self)
        return "\n" + (text.components(separatedBy: "\n\n").first ?? text)
    }
}

/// Dovecot (IMAP, SASL, the Sent folder) and Postfix (submission) from the project's scripts.
typealias MailServers = SubmissionServers

extension SubmissionServers {
    /// Delivered messages whose text contains `token`.
    func delivered(_ token: String) -> [[UInt8]] { postfix.delivered(token) }

    func waitDelivered(_ token: String, count: Int, timeout: Double = 30, settle: Double = 0) throws -> [[UInt8]] {
        postfix.waitDelivered(token, count: count, timeout: timeout, settle: settle)
    }

    /// Copies in Dovecot's Sent folder containing `token`.
    func sentCopies(_ token: String) -> [[UInt8]] {
        messages(in: [dovecot.maildir + "/Sent/new", dovecot.maildir + "/Sent/cur"], containing: token)
    }

    private func messages(in dirs: [String], containing token: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        for dir in dirs {
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() {
                guard let data = FileManager.default.contents(atPath: dir + "/" + name) else { continue }
                if String(decoding: data.prefix(4096), as: UTF8.self).contains(token) { out.append(Array(data)) }
            }
        }
        return out
    }
}
