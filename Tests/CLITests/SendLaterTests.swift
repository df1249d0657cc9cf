import Foundation
import Glibc
import Testing
import MoCore
import MoTestSupport

/// Send later, undo send and their cancel, against the private Postfix and Dovecot (issue 30). The clock
/// is moved with MO_CLOCK_SKEW instead of waiting: "two hours later" is a flush run with the clock two
/// hours on. Messages are told apart by a token in their Subject.
@Suite(.serialized) struct SendLaterTests {
    static func run(_ t: Fixture, _ args: [String], _ input: [UInt8] = [], skew: Int = 0, crashAt: String = "") throws
        -> ChildProcess.Result
    {
        var env = t.environment
        env["MO_CLOCK_SKEW"] = String(skew)
        env["MO_CRASH_AT"] = crashAt
        return try ChildProcess.run([TestPaths.binDirectory + "/mo-sendmail"] + args, input: input, environment: env)
    }

    /// Adds `line` to the fixture's [general] table.
    static func general(_ t: Fixture, _ line: String) throws {
        let text = try String(contentsOfFile: t.configPath, encoding: .utf8)
        try writePrivateFile(t.configPath, text.replacingOccurrences(of: "[general]\n", with: "[general]\n\(line)\n"))
    }

    static func queueID(_ t: Fixture) throws -> String {
        String(try run(t, ["--queue"]).stdoutString.prefix { $0 != " " })
    }

    @Test func aMessageSentLaterArrivesAfterItsTimeAndNotBefore() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let r = try Self.run(t, ["--at", "+2h", "rcpt@mo.test"], t.message(token: token, extra: "Date: Mon, 2 Mar 2026 10:00:00 +0000\n"))
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(r.stderrString.contains(" sends ") && r.stderrString.contains("(in 2 h)"), "\(r.stderrString)")
        let queue = try Self.run(t, ["--queue"]).stdoutString
        #expect(queue.contains("send queued to rcpt@mo.test") && queue.contains("sends "), "\(queue)")
        // A forced flush, and one an hour on: not yet.
        #expect(try Self.run(t, ["--flush"]).status == 0)
        #expect(try Self.run(t, ["--flush"], skew: 3600).status == 0)
        #expect(try t.servers.waitDelivered(token, count: 1, timeout: 1.5).isEmpty)
        // Two hours on: sent once, dated with its time (not the Date it was written with).
        #expect(try Self.run(t, ["--flush"], skew: 7205).status == 0)
        let delivered = try t.servers.waitDelivered(token, count: 1, settle: 0.5)
        #expect(delivered.count == 1)
        #expect(delivered.first.map { !Fixture.header($0).contains("Mon, 2 Mar 2026") } == true)
        #expect(try Self.run(t, ["--flush"], skew: 9000).status == 0)
        #expect(try t.servers.waitDelivered(token, count: 1, settle: 0.5).count == 1)
        #expect(try Self.run(t, ["--queue"], skew: 9000).stdoutString.isEmpty)
    }

    @Test func theSendAtFieldSchedulesIsRemovedAndACancelledMessageNeverArrives() throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let r = try Self.run(t, ["rcpt@mo.test"], t.message(token: token, extra: "X-Mo-Send-At: tomorrow 09:00\n"))
        #expect(r.status == 0 && r.stderrString.contains(" sends "), "\(r.stderrString)")
        let id = try Self.queueID(t)
        let cancel = try Self.run(t, ["--cancel", id])
        #expect(cancel.status == 0, "\(cancel.stderrString)")
        #expect(
            cancel.stdoutString.contains("Subject: \(token)") && !cancel.stdoutString.contains("X-Mo-Send-At"), "\(cancel.stdoutString)")
        #expect(cancel.stderrString.contains("cancelled"), "\(cancel.stderrString)")
        #expect(try Self.run(t, ["--queue"]).stdoutString.isEmpty)
        _ = try Self.run(t, ["--flush"], skew: 3 * 86_400)
        #expect(try t.servers.waitDelivered(token, count: 1, timeout: 1.5).isEmpty)
        // Cancelled twice: said so.
        let again = try Self.run(t, ["--cancel", id])
        #expect(again.status == 64 && again.stderrString.contains("no message \(id) in the queue"), "\(again.stderrString)")
    }

    @Test func undoSendInsideTheWindowStopsItAndOutsideItIsTooLate() throws {
        let t = try Fixture()
        defer { t.remove() }
        try Self.general(t, "send-delay = \"4s\"")
        // Inside: cancelled at once, into Drafts.
        let kept = Fixture.token()
        #expect(try Self.run(t, ["rcpt@mo.test"], t.message(token: kept)).status == 0)
        let cancel = try Self.run(t, ["--cancel", "last", "--to-drafts"])
        #expect(cancel.status == 0 && cancel.stderrString.contains("put in Drafts"), "\(cancel.stderrString)")
        let drafts = try FileManager.default.contentsOfDirectory(atPath: t.dir.path + "/Mail/Drafts/cur")
        #expect(drafts.count == 1 && drafts.first?.hasSuffix(":2,DS") == true, "\(drafts)")
        // Outside: the waiter mo-sendmail left sends it on time, and a cancel is too late.
        let sent = Fixture.token()
        let r = try Self.run(t, ["rcpt@mo.test"], t.message(token: sent))
        #expect(r.status == 0 && r.stderrString.contains("(in 4 s)"), "\(r.stderrString)")
        #expect(try t.servers.waitDelivered(sent, count: 1, timeout: 2).isEmpty, "not before its time")
        #expect(try t.servers.waitDelivered(sent, count: 1, timeout: 30, settle: 0.5).count == 1)
        let late = try Self.run(t, ["--cancel", "last"])
        #expect(late.status == 69 && late.stderrString.contains("too late to cancel"), "\(late.stderrString)")
        #expect(try t.servers.waitDelivered(kept, count: 1, timeout: 1).isEmpty)
    }

    @Test func aDelayThatPassedWithNoSenderRunningIsSentByTheNextRun() throws {
        let t = try Fixture()
        defer { t.remove() }
        try Self.general(t, "send-delay = \"1h\"")  // past the waiter's horizon: nobody waits for it
        let token = Fixture.token()
        #expect(try Self.run(t, ["rcpt@mo.test"], t.message(token: token)).status == 0)
        let sync = try ChildProcess.run(
            [TestPaths.binDirectory + "/mo-sync", "--quiet"], environment: t.environment.merging(["MO_CLOCK_SKEW": "3700"]) { $1 })
        #expect(sync.status == 0, "\(sync.stderrString)")
        #expect(try t.servers.waitDelivered(token, count: 1, settle: 0.5).count == 1)
    }

    @Test func malformedTimesAreUsageErrorsNamingThem() throws {
        let t = try Fixture()
        defer { t.remove() }
        let r = try Self.run(t, ["--at", "soonish", "rcpt@mo.test"], t.message(token: Fixture.token()))
        #expect(r.status == 64 && r.stderrString.contains("--at \"soonish\": not a time"), "\(r.stderrString)")
        let field = try Self.run(t, ["rcpt@mo.test"], t.message(token: Fixture.token(), extra: "X-Mo-Send-At: 25:99\n"))
        #expect(field.status == 64 && field.stderrString.contains("X-Mo-Send-At: \"25:99\""), "\(field.stderrString)")
        let past = try Self.run(t, ["--at", "2020-01-01T00:00:00Z", "rcpt@mo.test"], t.message(token: Fixture.token()))
        #expect(past.status == 64 && past.stderrString.contains("in the past"), "\(past.stderrString)")
        try Self.general(t, "send-delay = \"soon\"")
        let config = try Self.run(t, ["--queue"])
        #expect(config.status == 78 && config.stderrString.contains("send-delay"), "\(config.stderrString)")
        #expect(try Self.run(t, ["--queue"]).stdoutString.isEmpty)
    }

    /// Killed at each step of a timed send: at its queuing, and in a cancel between keeping the message and
    /// dropping it. Nothing is lost: a message whose queuing finished is sent once at its time; a cancel
    /// cut short leaves it queued (sent, once), never gone.
    @Test(arguments: ["outbox-written", "queued", "cancel-kept"])
    func killedAtATimedStep(step: String) throws {
        let t = try Fixture()
        defer { t.remove() }
        let token = Fixture.token()
        let queuing = step != "cancel-kept"
        let r = try Self.run(t, ["--at", "+1h", "rcpt@mo.test"], t.message(token: token), crashAt: queuing ? step : "")
        #expect(r.status == (queuing ? 137 : 0), "\(r.stderrString)")
        if !queuing {
            let c = try Self.run(t, ["--cancel", "last"], crashAt: step)
            #expect(c.status == 137 && c.stdoutString.contains(token))
        }
        _ = try Self.run(t, ["--flush"], skew: 3700)
        let expected = step == "outbox-written" ? 0 : 1
        #expect(try t.servers.waitDelivered(token, count: max(expected, 1), timeout: expected == 0 ? 1.5 : 30, settle: 1).count == expected)
        #expect(try Self.run(t, ["--queue"], skew: 3700).stdoutString.isEmpty)
    }

    /// `mo-sync --watch` wakes for a message's time: sent within seconds of it, not before.
    @Test func watchSendsAMessageWithinSecondsOfItsTime() throws {
        let t = try Fixture()
        defer { t.remove() }
        let log = t.dir.path + "/watch.log"
        let env = t.environment
        let watcher = try BackgroundProcess(
            ["/bin/sh", "-c", "exec \"$0\" --watch --verbose >>\"$1\" 2>&1", TestPaths.binDirectory + "/mo-sync", log], environment: env)
        defer { watcher.kill() }
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        let end = monotonicSeconds() + 30
        while monotonicSeconds() < end && !logText().contains("listening with") { usleep(100_000) }
        let token = Fixture.token()
        // 20 s: past the waiter's horizon would be a long test; a near time gets a waiter too, so it is
        // stopped here (its session's pkill) to leave the watcher alone with the message.
        let r = try Self.run(t, ["--at", "+6s", "rcpt@mo.test"], t.message(token: token))
        #expect(r.status == 0, "\(r.stderrString)")
        _ = try ChildProcess.run(["pkill", "-f", "mo-sendmail --send-due"])
        #expect(try t.servers.waitDelivered(token, count: 1, timeout: 3).isEmpty, "not before its time")
        #expect(try t.servers.waitDelivered(token, count: 1, timeout: 15, settle: 0.5).count == 1, "\(logText())")
        #expect(logText().contains("syncing (timer)"), "\(logText())")
    }
}
