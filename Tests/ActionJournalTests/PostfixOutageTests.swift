import Testing
import MoConfig
import MoCore
import MoTestSupport
import SMTPClient
@testable import ActionJournal

/// The outbox across a real outage: the private Postfix (scripts/test-smtp-server) stopped while mail is
/// queued and flushed, for longer (on the injected clock) than the old give-up point of five tries, then
/// started again.
@Suite(.serialized) struct PostfixOutageTests {
    @Test func mailQueuedDuringAnOutageGoesOutOnceAtTheFirstFlushThatReachesTheServer() throws {
        let postfix = try SMTPTestServer.start()
        defer { postfix.remove() }
        let dir = try TemporaryDirectory("mo-outage")
        defer { dir.remove() }
        // A send-only account on Postfix's plain loopback port, read by the real loader.
        let config = try ConfigLoader.parse(
            text: """
                [general]
                state-dir = "\(dir.path)/state"
                [account.relay]
                address = "sender@mo.test"
                [account.relay.smtp]
                host = "127.0.0.1"
                port = \(postfix.plainPort)
                tls = "none"
                """, path: dir.path + "/config.toml")
        let account = config.accounts[0]
        postfix.stop()

        // mo-sendmail's path: each message is queued, not refused, and costs no try.
        let t0 = 1_800_000_000
        let tokens = (0..<3).map { "outage\($0)x" + String(UInt64.random(in: 0..<UInt64.max), radix: 36) }
        for token in tokens {
            let message = Array("From: sender@mo.test\nTo: rcpt@mo.test\nSubject: \(token)\n\nqueued while down\n".utf8)
            let outcome = try JournalRunner(config: config).submit(
                message: message, envelope: SMTPEnvelope(sender: "sender@mo.test", recipients: ["rcpt@mo.test"]),
                account: account, now: t0)
            guard case .queued(_, let reason) = outcome else { Issue.record("\(outcome)"); return }
            #expect(reason.contains("cannot connect"), "\(reason)")
        }
        // mo-sync's path, every hour for eight hours: the old rules gave up after five tries (~8 minutes).
        for hour in 1...8 {
            let report = try JournalRunner.flush(config: config, now: t0 + hour * 3600)
            // One attempt meets the dead server; the others are not tried against it.
            #expect(report.retrying == 1 && report.failed == 0 && report.performed == 0, "\(report.lines)")
            let queued = try JournalRunner(config: config).journal.load().actions
            #expect(queued.count == 3 && queued.allSatisfy { $0.state == .queued && $0.tries == 0 && $0.next == nil })
        }
        let lines = try JournalRunner(config: config).queue(now: t0 + 8 * 3600)
        #expect(
            lines.count == 3
                && lines.allSatisfy { $0.contains("(queued 8 h ago; 0 tries; next try at the next flush; last error: smtp 127.0.0.1:") },
            "\(lines)")

        // The server is back: the very next flush sends all three, each exactly once.
        try postfix.restart()
        let report = try JournalRunner.flush(config: config, now: t0 + 8 * 3600 + 1)
        #expect(report.performed == 3 && report.retrying == 0 && report.failed == 0, "\(report.lines)")
        #expect(try JournalRunner.flush(config: config, now: t0 + 9 * 3600).performed == 0)
        for (i, token) in tokens.enumerated() {
            #expect(postfix.waitDelivered(token, count: 1, settle: i == tokens.count - 1 ? 1 : 0).count == 1, "\(token)")
        }
        #expect(try JournalRunner(config: config).queue().isEmpty)
        // Send-only: no Sent copy was queued.
        #expect(try JournalRunner(config: config).journal.load().actions.isEmpty)
    }
}
