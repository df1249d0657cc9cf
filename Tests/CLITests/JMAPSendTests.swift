import Foundation
import MoCore
import MoTestSupport
import Testing

/// Issue 27, sending: mo-sendmail for a JMAP account submits through the private Cyrus
/// (`EmailSubmission/set`), which relays to a private Postfix; the Sent copy is the submitted Email, moved
/// to Sent by the server. Online, refused, queued while the server is down, and killed at each step.
@Suite(.serialized, .enabled(if: CyrusTestServer.usable)) struct JMAPSendTests {
    /// One Postfix for the suite; a Cyrus per test (`JMAPSyncTests.Account`).
    static let postfix: Result<SMTPTestServer, Error> = Result {
        let p = try SMTPTestServer.start()
        atexit { if case .success(let p) = JMAPSendTests.postfix { p.remove() } }
        return p
    }

    static func account() throws -> (JMAPSyncTests.Account, SMTPTestServer) {
        let postfix = try postfix.get()
        return (try JMAPSyncTests.Account(smtp: "127.0.0.1:\(postfix.plainPort)"), postfix)
    }

    static func message(_ token: String) -> [UInt8] {
        Array(
            ("From: Mo <mo@example.org>\nTo: rcpt@mo.test\nSubject: \(token)\nMessage-ID: <\(token)@example.org>\n"
                + "Date: Sat, 28 Nov 2026 07:00:00 +0000\n\nbody \(token)\n").utf8)
    }

    static func token() -> String { "jmap-send-\(UInt32.random(in: 0..<UInt32.max))" }

    func sendmail(_ a: JMAPSyncTests.Account, _ args: [String], _ input: [UInt8] = [], crashAt: String? = nil) throws -> ChildProcess.Result
    {
        try ChildProcess.run(
            [TestPaths.binDirectory + "/mo-sendmail", "--config", a.dir.path + "/mo.toml"] + args, input: input,
            environment: ["MO_CRASH_AT": crashAt ?? ""])
    }

    @Test func sendsThroughTheServerAndTheSentCopyIsTheSubmittedEmail() throws {
        let (a, postfix) = try Self.account()
        let token = Self.token()
        // Bcc only on the command line (neomutt's way), DSN options passed as JMAP envelope parameters.
        let r = try sendmail(a, ["-oi", "-N", "failure,delay", "-R", "hdrs", "--", "rcpt@mo.test", "hidden@mo.test"], Self.message(token))
        #expect(r.status == 0 && r.stderrString.isEmpty, "\(r.stderrString)")
        let delivered = postfix.waitDelivered(token, count: 2, settle: 0.5)
        #expect(delivered.count == 2)
        for m in delivered { #expect(!String(decoding: m, as: UTF8.self).lowercased().contains("\nbcc:")) }
        // On the server: one Email, in Sent only, $draft gone.
        let remote = try a.remote()
        #expect(remote[token]?.boxes == ["Sent"], "\(remote)")
        #expect(remote[token]?.keywords == ["$seen"])
        #expect(try sendmail(a, ["--queue"]).stdoutString.isEmpty)
        // Synced down once, into Sent, Bcc kept in the copy; checker-clean.
        _ = try a.sync()
        let local = a.local()[token] ?? []
        #expect(local.map(\.folder) == ["Sent"], "\(local)")
        let copy = local.first.flatMap { a.dir.read(a.dir.path + "/Mail/Sent/" + $0.name) } ?? ""
        #expect(copy.contains("\nBcc: hidden@mo.test\n"), "\(copy)")
        try a.check()
    }

    @Test func aRefusedRecipientFailsAtOnceAndLeavesNoDraft() throws {
        let (a, postfix) = try Self.account()
        let token = Self.token()
        let r = try sendmail(a, ["--", "reject@mo.test"], Self.message(token))
        #expect(r.status == 69, "\(r.stderrString)")
        #expect(r.stderrString.contains("invalidRecipients") && r.stderrString.contains("reject@mo.test"), "\(r.stderrString)")
        #expect(try a.remote()[token] == nil)
        #expect(postfix.waitDelivered(token, count: 1, timeout: 1).isEmpty)
        #expect(try sendmail(a, ["--queue"]).stdoutString.isEmpty)
        // The same bytes sent once, then refused: the Email the refusal met is the first send's Sent copy
        // (the import found it), and it stays.
        #expect(try sendmail(a, ["--", "rcpt@mo.test"], Self.message(token)).status == 0)
        #expect(try sendmail(a, ["--", "reject@mo.test"], Self.message(token)).status == 69)
        #expect(try a.remote()[token]?.boxes == ["Sent"])
    }

    @Test func serverDownQueuesAndTheNextSyncSendsItOnce() throws {
        let (a, postfix) = try Self.account()
        let token = Self.token()
        a.server.halt()
        let r = try sendmail(a, ["--", "rcpt@mo.test"], Self.message(token))
        #expect(r.status == 0 && r.stderrString.hasPrefix("mo-sendmail: queued: "), "\(r.stderrString)")
        #expect(try sendmail(a, ["--queue"]).stdoutString.contains("send queued to rcpt@mo.test"))
        try a.server.restart()
        // mo-sync flushes the queue before it syncs.
        _ = try a.sync()
        #expect(postfix.waitDelivered(token, count: 1, settle: 0.5).count == 1)
        #expect(try sendmail(a, ["--queue"]).stdoutString.isEmpty)
        _ = try a.sync()
        #expect(a.local()[token]?.map(\.folder) == ["Sent"])
        #expect(try a.remote()[token]?.boxes == ["Sent"])
        try a.check()
        _ = try a.sync()
        #expect(postfix.waitDelivered(token, count: 1, settle: 0.5).count == 1)
    }

    /// Killed at each step of a send, then flushed: before the message is queued the sender was told it
    /// failed (nothing sent); before the commit point it is sent once (the draft imported again is the same
    /// Email); from it on it is in doubt and never resent by itself, until `--retry`, which sends the same
    /// Email once.
    @Test(arguments: ["outbox-written", "sending", "committing", "accepted", "sent"])
    func killedAtAStepThenFlushed(step: String) throws {
        let (a, postfix) = try Self.account()
        let token = Self.token()
        let r = try sendmail(a, ["--", "rcpt@mo.test"], Self.message(token), crashAt: step)
        #expect(r.status == 137, "\(r.stderrString)")
        _ = try sendmail(a, ["--flush"])
        let delivered = step == "committing" || step == "outbox-written" ? 0 : 1
        #expect(postfix.waitDelivered(token, count: max(delivered, 1), timeout: delivered == 0 ? 1.5 : 30, settle: 1).count == delivered)
        let queue = try sendmail(a, ["--queue"]).stdoutString
        if step == "committing" || step == "accepted" {
            #expect(queue.contains("send unknown"), "\(queue)")
            let id = try #require(queue.split(separator: " ").first.map(String.init))
            if step == "committing" {
                #expect(try sendmail(a, ["--retry", id]).status == 0)
                _ = try sendmail(a, ["--flush"])
                #expect(postfix.waitDelivered(token, count: 1, settle: 1).count == 1)
            } else {
                #expect(try sendmail(a, ["--drop", id]).status == 0)
            }
        }
        #expect(try sendmail(a, ["--queue"]).stdoutString.isEmpty)
        guard step != "outbox-written" else {
            #expect(try a.remote()[token] == nil)
            return
        }
        // One Email on the server, in Sent; synced down once.
        #expect(try a.remote()[token]?.boxes == ["Sent"])
        _ = try a.sync()
        #expect(a.local()[token]?.map(\.folder) == ["Sent"])
        try a.check()
    }
}
