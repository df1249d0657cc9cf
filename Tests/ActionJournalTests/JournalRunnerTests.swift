import Glibc
import Testing
import MailMessage
import MoConfig
import MoCore
import MoNet
import MoTestSupport
@testable import SMTPClient
@testable import ActionJournal
import IMAPClient

/// The runner's decisions with a scripted delivery: retries, give-up, crash recovery, Sent copies, performers.
@Suite(.serialized) struct JournalRunnerTests {
    final class FakeDelivery: MailDelivery {
        enum Step { case accept, fail(any Error), failAfterDot(any Error) }
        var script: [Step] = []
        var attempts = 0
        var sent: [(SMTPEnvelope, [UInt8])] = []
        var appended: [[UInt8]] = []
        var sentFolder: Set<String> = []
        /// Failures the next appends throw, in order.
        var appendFailures: [any Error] = []

        func send(
            envelope: SMTPEnvelope, message: [UInt8], account: Account,
            beforeFinalDot: @escaping () throws -> Void
        ) throws -> SMTPReply {
            attempts += 1
            let step = script.isEmpty ? .accept : script.removeFirst()
            switch step {
            case .accept:
                try beforeFinalDot()
                sent.append((envelope, message))
                return SMTPReply(code: 250, lines: ["2.0.0 Ok: queued as X"])
            case .fail(let e): throw e
            case .failAfterDot(let e): try beforeFinalDot(); throw e
            }
        }
        func mailboxHolds(messageID: String, mailbox: String?, account: Account) throws -> Bool { sentFolder.contains(messageID) }
        func append(message: [UInt8], flags: [String], mailbox: String?, account: Account) throws -> String {
            if !appendFailures.isEmpty { throw appendFailures.removeFirst() }
            appended.append(message)
            if let id = HeaderEdit.value("Message-ID", in: message) { sentFolder.insert(id) }
            return "Sent 1:\(appended.count)"
        }
        func finish() {}
    }

    final class Fixture {
        let dir: TemporaryDirectory
        let config: Config
        let delivery = FakeDelivery()
        let runner: JournalRunner
        var journal: ActionJournal { runner.journal }

        init(saveSent: Bool = true, performers: [ActionPerformer] = []) throws {
            dir = try TemporaryDirectory("mo-journal")
            let account = Account(
                name: "work", address: "me@x.org", maildir: dir.path + "/Mail",
                imap: IMAPConfig(host: "127.0.0.1", user: "me", passwordCommand: nil),
                smtp: SMTPConfig(host: "127.0.0.1", user: "me", passwordCommand: nil, saveSent: saveSent))
            config = Config(
                path: dir.path + "/config.toml", stateDirectory: dir.path + "/state",
                indexDirectory: dir.path + "/index", accounts: [account])
            runner = JournalRunner(config: config, delivery: delivery, performers: performers)
            runner.lockWait = 0.2
        }
        deinit { dir.remove() }

        var account: Account { config.accounts[0] }

        /// Queues a message the way mo-sendmail does when the server is down.
        func queue(_ subject: String = "hi", now: Int = 1000) throws -> String {
            let id = ActionJournal.newID(now: now)
            let message = Array("From: me@x.org\nTo: a@y.org\nBcc: b@y.org\nSubject: \(subject)\nMessage-ID: <\(id)@x.org>\n\nbody\n".utf8)
            let payload = try journal.storeMessage(message, id: id)
            try journal.append([
                .send(
                    id: id, payload: payload, account: "work", sender: "me@x.org",
                    recipients: ["a@y.org", "b@y.org"], messageID: "<\(id)@x.org>", time: now)
            ])
            return id
        }

        func state(_ id: String) throws -> ActionState? { try journal.load().actions.first { $0.id == id }?.state }
    }

    /// What SMTPSession throws when nothing listens: a connection-level failure.
    static let down = SMTPError(
        .network, host: "127.0.0.1", port: 1, detail: "cannot connect: Connection refused",
        network: NetError(.connect, host: "127.0.0.1", port: 1, detail: "Connection refused"),
        unreachable: true)
    static let busy = SMTPError(
        .rejected, host: "127.0.0.1", port: 1, detail: "MAIL FROM refused: 451 4.3.0 try later",
        reply: SMTPReply(code: 451, lines: ["4.3.0 try later"]))
    static let refused = GenericError(.unavailable, "smtp 127.0.0.1:1: recipient <a@y.org> rejected: 550 5.1.1 unknown")

    @Test func flushSendsStripsBccThenStoresTheSentCopyAndCompacts() throws {
        let f = try Fixture()
        let id = try f.queue()
        let report = try f.runner.flush(now: 1000)
        #expect(report.performed == 2)
        #expect(f.delivery.sent.count == 1)
        #expect(f.delivery.sent[0].0.recipients == ["a@y.org", "b@y.org"])
        #expect(!String(decoding: f.delivery.sent[0].1, as: UTF8.self).contains("Bcc:"))
        #expect(String(decoding: f.delivery.appended[0], as: UTF8.self).contains("Bcc: b@y.org"))
        #expect(try f.journal.load().actions.isEmpty)
        #expect(try f.runner.status(now: 1000).isEmpty)
        #expect(((try? directoryNames(f.journal.outboxDirectory).get()) ?? []).isEmpty)
        _ = id
    }

    @Test func saveSentFalseQueuesNoCopy() throws {
        let f = try Fixture(saveSent: false)
        _ = try f.queue()
        _ = try f.runner.flush(now: 1000)
        #expect(f.delivery.sent.count == 1 && f.delivery.appended.isEmpty)
    }

    @Test func anOutageSpendsNoTryAndLeavesNoBackoffUntilTheQueueLifetime() throws {
        let f = try Fixture()
        let id = try f.queue(now: 1000)
        // Ten flushes against a dead server over most of the lifetime: twice the old give-up point.
        let lifetime = f.config.queueLifetime
        for n in 0..<10 {
            f.delivery.script = [.fail(Self.down)]
            let now = 1000 + n * (lifetime / 10)
            _ = try f.runner.flush(now: now)
            let r = try f.journal.load().actions[0]
            #expect(r.state == .queued && r.tries == 0 && r.next == nil && r.since == 1000)
        }
        #expect(f.delivery.attempts == 10)
        let line = try f.runner.queue(now: 1000 + lifetime - 1)[0]
        #expect(
            line.hasPrefix(
                "\(id) send queued to a@y.org, b@y.org \"hi\" (queued 4 d ago; 0 tries; next try at the next flush; last error: smtp 127.0.0.1:1: cannot connect"
            ), "\(line)")
        // Past the lifetime, the next failure is the last: failed, with the reason.
        f.delivery.script = [.fail(Self.down)]
        _ = try f.runner.flush(now: 1000 + lifetime)
        #expect(try f.state(id) == .failed)
        let status = try f.runner.status(now: 1000 + lifetime)
        #expect(
            status.count == 1 && status[0].contains("not sent within the queue lifetime (5 d): smtp 127.0.0.1:1: cannot connect"),
            "\(status)")
        // The user retries: a fresh lifetime, and sent.
        try f.runner.retry(id: id, now: 1000 + lifetime)
        #expect(try f.journal.load().actions[0].since == 1000 + lifetime)
        _ = try f.runner.flush(now: 1000 + lifetime)
        #expect(f.delivery.sent.count == 1)
    }

    @Test func aBusyServerBacksOffAndIsNeverOutOfTries() throws {
        let f = try Fixture()
        let id = try f.queue()
        f.delivery.script = Array(repeating: .fail(Self.busy), count: 7)
        var now = 1000
        for (n, wait) in [30, 60, 120, 240, 480, 900, 900].enumerated() {
            _ = try f.runner.flush(now: now)
            let r = try f.journal.load().actions[0]
            #expect(r.state == .queued && r.tries == n + 1 && r.next == now + wait)
            // Not due yet: nothing happens.
            _ = try f.runner.flush(now: now + wait - 1)
            #expect(try f.journal.load().actions[0].tries == n + 1)
            now += wait
        }
        #expect(
            try f.runner.queue(now: now - 10)[0].contains("7 tries; next try in 10 s; last error: smtp 127.0.0.1:1: MAIL FROM refused: 451")
        )
        _ = try f.runner.flush(now: now)
        #expect(try f.state(id) == nil && f.delivery.sent.count == 1)
    }

    @Test func anOutageEndsTheSendPassAndTheNextFlushSendsEverything() throws {
        let f = try Fixture(saveSent: false)
        let ids = try (0..<3).map { try f.queue("m\($0)") }
        f.delivery.script = [.fail(Self.down)]
        let report = try f.runner.flush(now: 1000)
        // One attempt met the dead server; the other two were not tried against it.
        #expect(f.delivery.attempts == 1 && report.retrying == 1)
        #expect(try ids.map { try f.state($0) } == [.queued, .queued, .queued])
        // The server is back: the very next flush, at the same moment, sends all three.
        #expect(try f.runner.flush(now: 1000).performed == 3)
        #expect(f.delivery.sent.count == 3)
    }

    @Test func queueLinesEscapeControlCharactersFromOutside() throws {
        let f = try Fixture()
        _ = try f.queue("evil\u{1B}[2J")
        f.delivery.script = [
            .fail(
                SMTPError(
                    .rejected, host: "h", port: 1, detail: "451 a\rb",
                    reply: SMTPReply(code: 451, lines: ["a"])))
        ]
        _ = try f.runner.flush(now: 1000)
        let line = try f.runner.queue(now: 1000)[0]
        #expect(line.contains("\"evil\\u{1B}[2J\"") && line.contains("451 a\\u{D}b") && !line.contains("\u{1B}"), "\(line)")
    }

    @Test func permanentRefusalFailsAtOnceAndIsShown() throws {
        let f = try Fixture()
        let id = try f.queue()
        f.delivery.script = [.fail(Self.refused)]
        let report = try f.runner.flush(now: 1000)
        #expect(report.failed == 1)
        #expect(try f.state(id) == .failed)
        #expect(try f.runner.status(now: 1000)[0].contains("550 5.1.1"))
        try f.runner.drop(id: id, now: 1000)
        #expect(try f.runner.status(now: 1000).isEmpty)
        #expect(((try? directoryNames(f.journal.outboxDirectory).get()) ?? []).isEmpty)
    }

    @Test func crashBeforeTheFinalDotResends() throws {
        let f = try Fixture()
        let id = try f.queue()
        var r = try f.journal.load().actions[0]
        r = r.moved(to: .sending, at: 1001, tries: 1)
        try f.journal.append([r])
        _ = try f.runner.flush(now: 1002)
        #expect(f.delivery.sent.count == 1)
        #expect(try f.state(id) == nil)  // sent and compacted
    }

    @Test func crashAfterTheFinalDotIsUnknownAndNeverResentByItself() throws {
        let f = try Fixture()
        let id = try f.queue()
        let r = try f.journal.load().actions[0]
        try f.journal.append([r.moved(to: .sending, at: 1001, tries: 1), r.moved(to: .committing, at: 1001, tries: 1)])
        let report = try f.runner.flush(now: 1002)
        #expect(f.delivery.sent.isEmpty)
        #expect(report.lines.contains { $0.contains("unknown") })
        #expect(try f.state(id) == .unknown)
        _ = try f.runner.flush(now: 5000, force: true)
        #expect(f.delivery.sent.isEmpty)
        #expect(try f.runner.status(now: 5000)[0].contains("--retry \(id)"))
    }

    @Test func lostReplyAfterTheDotIsUnknown() throws {
        let f = try Fixture()
        let id = try f.queue()
        let lost = SMTPError(
            .network, host: "127.0.0.1", port: 1, detail: "timed out waiting for the reply to the message",
            afterFinalDot: true)
        f.delivery.script = [.failAfterDot(lost)]
        _ = try f.runner.flush(now: 1000)
        #expect(try f.state(id) == .unknown)
        #expect(f.delivery.sent.isEmpty)
        // An error before the dot is an ordinary retry.
        let other = try f.queue("other")
        f.delivery.script = [.fail(Self.down)]
        _ = try f.runner.flush(now: 1000)
        #expect(try f.state(other) == .queued)
    }

    /// A Sent copy waits out an outage (IMAP unreachable, or its token endpoint) without spending a try or
    /// backing off; any other failure counts one.
    @Test func aSentCopySpendsNoTryOnAnOutage() throws {
        let f = try Fixture()
        _ = try f.queue()
        f.delivery.appendFailures = [
            OutageError("http://127.0.0.1:1/token: cannot connect"),
            IMAPError(server: "127.0.0.1:1", .outage("cannot get a new OAuth2 token: cut")),
            GenericError(.authentication, "refused")
        ]
        let copy = { try f.journal.load().actions.first { $0.kind == .append }! }
        _ = try f.runner.flush(now: 1000)
        #expect(f.delivery.sent.count == 1)
        #expect(try copy().state == .queued && copy().tries == 0 && copy().next == nil)
        _ = try f.runner.flush(now: 1001)
        #expect(try copy().state == .queued && copy().tries == 0 && copy().next == nil)
        _ = try f.runner.flush(now: 1002)
        #expect(try copy().tries == 1 && copy().next != nil)
        _ = try f.runner.flush(now: 2000, force: true)
        #expect(f.delivery.appended.count == 1)
    }

    /// Past `queue-lifetime` an outage counts again: a server that never answers does not keep a Sent copy
    /// queued for ever.
    @Test func aSentCopysOutageCountsPastTheQueueLifetime() throws {
        let f = try Fixture()
        _ = try f.queue()
        f.delivery.appendFailures = [OutageError("down"), OutageError("down")]
        let copy = { try f.journal.load().actions.first { $0.kind == .append }! }
        _ = try f.runner.flush(now: 1000)
        #expect(try copy().tries == 0)
        _ = try f.runner.flush(now: 1000 + f.config.queueLifetime, force: true)
        #expect(try copy().tries == 1 && copy().next != nil)
    }

    @Test func interruptedAppendChecksTheFolderBeforeAppendingAgain() throws {
        let f = try Fixture()
        _ = try f.queue()
        _ = try f.runner.flush(now: 1000)
        #expect(f.delivery.appended.count == 1)
        // Replay the append as if a run had died after APPEND but before `done`.
        let msgid = f.delivery.sentFolder.first!
        let payload = try f.journal.storeMessage(Array("Message-ID: \(msgid)\n\nx\n".utf8), id: "zz-1")
        let append = ActionRecord.append(id: "zz-2", payload: payload, account: "work", messageID: msgid, time: 1000)
        try f.journal.append([append, append.moved(to: .appending, at: 1000, tries: 1)])
        _ = try f.runner.flush(now: 1001)
        #expect(f.delivery.appended.count == 1)
        #expect(try f.state("zz-2") == nil)
    }

    @Test func moveAndFlagWaitForAPerformer() throws {
        final class Flags: ActionPerformer {
            var seen: [String] = []
            func perform(_ action: ActionRecord, account: Account, resumed: Bool) throws -> Bool {
                guard action.kind == .flag else { return false }
                seen.append(action.id)
                return true
            }
        }
        let bare = try Fixture()
        try bare.journal.append([
            .move(id: "m-1", account: "work", folder: "INBOX", uidValidity: 1, uid: 2, destination: "Archive", time: 1),
            .flag(id: "f-1", account: "work", folder: "INBOX", uidValidity: 1, uid: 2, add: ["\\Seen"], remove: [], time: 1)
        ])
        let report = try bare.runner.flush(now: 10)
        #expect(report.unhandled == 2)
        #expect(try bare.journal.load().actions.map(\.state) == [.queued, .queued])

        let performer = Flags()
        let f = try Fixture(performers: [performer])
        try f.journal.append([
            .move(id: "m-1", account: "work", folder: "INBOX", uidValidity: 1, uid: 2, destination: "Archive", time: 1),
            .flag(id: "f-1", account: "work", folder: "INBOX", uidValidity: 1, uid: 2, add: ["\\Seen"], remove: [], time: 1)
        ])
        _ = try f.runner.flush(now: 10)
        #expect(performer.seen == ["f-1"])
        let left = try f.journal.load().actions
        #expect(left.map(\.id) == ["m-1"] && left[0].state == .queued && left[0].tries == 0)
    }

    @Test func aSecondFlusherSkipsWithAMessage() throws {
        let f = try Fixture()
        _ = try f.queue()
        let held = try FileLock(path: f.journal.flushLockPath, wait: 0)
        #expect(held != nil)
        let report = try f.runner.flush(now: 1000)
        #expect(report.skipped?.contains("already sending") == true)
        #expect(f.delivery.sent.isEmpty)
        withExtendedLifetime(held) {}
    }

    @Test func appendAfterATornTailCutsItFirst() throws {
        let f = try Fixture()
        let id = try f.queue()
        // A crash in the middle of writing a record.
        let fd = open(f.journal.path, O_WRONLY | O_APPEND)
        _ = write(fd, "zz send sen", 11)
        close(fd)
        let replay = try f.journal.load()
        #expect(replay.warnings.count == 1)
        _ = try f.queue("second")
        let after = try f.journal.load()
        #expect(after.warnings.isEmpty && after.actions.count == 2 && after.actions[0].id == id)
    }

    @Test func submitSendsAtOnceOrQueuesOrThrowsAndDrops() throws {
        let f = try Fixture()
        let message = Array("From: me@x.org\nTo: a@y.org\nSubject: s\nMessage-ID: <s1@x.org>\n\nb\n".utf8)
        let envelope = SMTPEnvelope(sender: "me@x.org", recipients: ["a@y.org"])
        guard case .sent = try f.runner.submit(message: message, envelope: envelope, account: f.account, now: 1) else {
            Issue.record("not sent"); return
        }
        f.delivery.script = [.fail(Self.down)]
        guard case .queued = try f.runner.submit(message: message, envelope: envelope, account: f.account, now: 2) else {
            Issue.record("not queued"); return
        }
        f.delivery.script = [.fail(Self.refused)]
        #expect(throws: GenericError.self) { try f.runner.submit(message: message, envelope: envelope, account: f.account, now: 3) }
        let states = try f.journal.load().actions.filter { $0.kind == .send }.map(\.state)
        // The sent and the dropped one are compacted away; the refused message left nothing behind.
        #expect(states == [.queued])
        // Left: the first (its Sent copy is still to be stored) and the queued one.
        #expect(((try? directoryNames(f.journal.outboxDirectory).get()) ?? []).count == 2)
        #expect(try f.runner.queue(now: 3).count == 1)
    }

    // MARK: - Send later, undo send (issue 30)

    @Test func aScheduledMessageWaitsForItsTimeEvenOnAForcedFlush() throws {
        let f = try Fixture()
        let message = Array("From: me@x.org\nTo: a@y.org\nSubject: later\nMessage-ID: <l1@x.org>\n\nb\n".utf8)
        let envelope = SMTPEnvelope(sender: "me@x.org", recipients: ["a@y.org"])
        guard
            case .scheduled(let id, let at) = try f.runner.submit(
                message: message, envelope: envelope, account: f.account, due: 5000, now: 1000)
        else { Issue.record("not scheduled"); return }
        #expect(at == 5000 && f.delivery.attempts == 0)
        #expect(try f.runner.queue(now: 1000).first?.contains("sends ") == true)
        _ = try f.runner.flush(now: 4999, force: true)
        #expect(try f.delivery.attempts == 0 && f.state(id) == .queued)
        #expect(try JournalRunner.nextDue(in: f.journal.load().actions, after: 1000) == 5000)
        #expect(try JournalRunner.nextDue(in: f.journal.load().actions, after: 5000) == nil)
        _ = try f.runner.flush(now: 5000)
        #expect(try f.delivery.sent.count == 1 && f.state(id) == nil)
    }

    @Test func theQueueLifetimeCountsFromTheMessagesTime() throws {
        let f = try Fixture()
        let message = Array("From: me@x.org\nTo: a@y.org\nSubject: later\nMessage-ID: <l2@x.org>\n\nb\n".utf8)
        let envelope = SMTPEnvelope(sender: "me@x.org", recipients: ["a@y.org"])
        let lifetime = f.config.queueLifetime
        guard
            case .scheduled(let id, _) = try f.runner.submit(
                message: message, envelope: envelope, account: f.account, due: 1000 + 2 * lifetime, now: 1000)
        else { Issue.record("not scheduled"); return }
        f.delivery.script = [.fail(Self.busy)]
        _ = try f.runner.flush(now: 1000 + 2 * lifetime)
        #expect(try f.state(id) == .queued, "a lifetime from its time, not from when it was written")
    }

    @Test func cancelKeepsTheMessageThenDropsItAndLastMeansTheNewest() throws {
        let f = try Fixture()
        let message = Array("From: me@x.org\nTo: a@y.org\nSubject: undo\nMessage-ID: <u1@x.org>\n\nb\n".utf8)
        let envelope = SMTPEnvelope(sender: "me@x.org", recipients: ["a@y.org"])
        let older = try f.queue("older", now: 900)
        guard
            case .scheduled(let id, _) = try f.runner.submit(message: message, envelope: envelope, account: f.account, due: 1010, now: 1000)
        else { Issue.record("not scheduled"); return }
        var kept: [UInt8] = []
        let r = try f.runner.cancel("last", now: 1001) { _, bytes in kept = bytes }
        #expect(r.id == id && kept == message)
        #expect(try f.state(id) == nil && f.state(older) == .queued)
        // A keeper that fails leaves the message queued.
        struct Full: Error {}
        #expect(throws: Full.self) { try f.runner.cancel(older, now: 1002) { _, _ in throw Full() } }
        #expect(try f.state(older) == .queued)
        // The message submitted last has gone: too late, not the older one instead.
        guard case .sent = try f.runner.submit(message: message, envelope: envelope, account: f.account, now: 1003) else {
            Issue.record("not sent"); return
        }
        do {
            try f.runner.cancel("last", now: 1004) { _, _ in }
            Issue.record("cancelled after sending")
        } catch let e as JournalError {
            #expect(e.kind == .unavailable && e.problem.contains("too late to cancel"), "\(e)")
        }
        #expect(try f.state(older) == .queued)
    }
}
