#if canImport(Glibc)
    import Glibc
#endif
import MoConfig
import MoCore
import SMTPClient

/// Performs journaled actions in order, one process at a time (the flush lock), with retries and crash
/// recovery. mo-sync calls `flush` before fetching and shows `status()`; `mo-sendmail --flush` calls the
/// same `flush`; mo-sendmail submits new messages through `submit`.
///
/// Never sent twice: a `send` journals `sending` before connecting and `committing` just before the
/// message's final dot, and `sent` after the reply. After a crash, `sending` is resent (the server cannot
/// have accepted a message whose final dot never came); `committing` becomes `unknown` and is never resent
/// by itself. See docs/action-journal.md.
public final class JournalRunner {
    public let config: Config
    public let journal: ActionJournal
    public var policy: RetryPolicy
    /// Seconds `flush` waits for another flusher before giving up (reported in `FlushReport.skipped`).
    public var lockWait: Double = 10
    /// Seconds `submit` waits for another flusher before leaving the message queued.
    public var submitLockWait: Double = 5
    let delivery: MailDelivery
    let performers: [ActionPerformer]

    /// `delivery`: the real servers (`NetworkDelivery`) unless a test hands its own.
    public init(config: Config, delivery: MailDelivery? = nil, performers: [ActionPerformer] = []) {
        self.config = config
        self.policy = RetryPolicy(queueLifetime: config.queueLifetime)
        self.journal = ActionJournal(stateDirectory: config.stateDirectory)
        self.delivery = delivery ?? NetworkDelivery(stateDirectory: config.stateDirectory)
        self.performers = performers
    }

    /// Performs every due action (all queued ones when `force`), then compacts the journal.
    public static func flush(
        config: Config, now: Int = WallClock.now(), force: Bool = false,
        performers: [ActionPerformer] = []
    ) throws(JournalError) -> FlushReport {
        try JournalRunner(config: config, performers: performers).flush(now: now, force: force)
    }

    /// Lines for `mo-sync status`: one per unfinished action (queued, in doubt, failed); none when all is done.
    public static func status(config: Config, now: Int = WallClock.now()) throws(JournalError) -> [String] {
        try JournalRunner(config: config).status(now: now)
    }

    // MARK: - Flush

    public func flush(now: Int = WallClock.now(), force: Bool = false) throws(JournalError) -> FlushReport {
        var report = FlushReport()
        // Nothing was ever journaled (a first run, or mo-sendmail never queued): nothing to do, and no
        // reason to create the state directory or its locks.
        if access(journal.path, F_OK) != 0 && errno == ENOENT { return report }
        guard let lock = try FileLock.journal(journal.flushLockPath, wait: lockWait) else {
            report.skipped = "another process (pid \(FileLock.holder(journal.flushLockPath))) is already sending queued actions; skipped"
            return report
        }
        defer { withExtendedLifetime(lock) {} }
        let replay = try journal.load()
        report.lines += replay.warnings
        var actions = try recover(replay.actions, now: now, report: &report)
        // SMTP servers (host:port) found unreachable or busy in this flush, and accounts whose IMAP server
        // failed: their other actions wait for the next flush, no try spent, instead of meeting the same
        // dead server one by one.
        var smtpDown: Set<String> = [], imapDown: Set<String> = []
        defer { delivery.finish() }
        var i = -1
        while i + 1 < actions.count {
            i += 1
            let r = actions[i]
            let resumed = r.state == .appending || r.state == .performing
            guard r.state == .queued || resumed else { continue }
            guard force || resumed || (r.next ?? 0) <= now else { continue }
            // Its time (send later, send-delay) binds even a forced flush: a cancel may still come.
            guard !r.isScheduled(now: now) else { continue }
            guard let account = config.account(named: r.account) else {
                let failed = r.moved(to: .failed, at: now, error: .some("no account named \(r.account) in \(config.path)"))
                try journal.append([failed])
                actions[i] = failed
                report.failed += 1
                report.lines.append(describe(failed, now: now))
                continue
            }
            switch r.kind {
            case .send:
                let server = account.smtp.map { "\($0.host):\($0.port)" } ?? account.jmap?.url ?? ""
                guard !smtpDown.contains(server) else { continue }
                let (latest, outcome, followUps) = try performSend(r, account: account, now: now, senderWaiting: false)
                actions[i] = latest
                actions += followUps  // the Sent copy, stored in this same run
                switch outcome {
                case .sent: report.performed += 1
                case .retry(let down): report.retrying += 1; if down { smtpDown.insert(server) }
                case .failed, .unknown: report.failed += 1
                }
                report.lines.append(describe(latest, now: now))
            case .append:
                guard !imapDown.contains(account.name) else { continue }
                let (latest, down) = try performAppend(r, account: account, now: now, resumed: resumed)
                actions[i] = latest
                if down { imapDown.insert(account.name) }
                count(latest, into: &report, now: now)
            case .move, .flag:
                guard let latest = try performOther(r, account: account, now: now, resumed: resumed) else {
                    report.unhandled += 1
                    continue
                }
                actions[i] = latest
                count(latest, into: &report, now: now)
            }
        }
        try journal.compact(now: now)
        return report
    }

    private func count(_ r: ActionRecord, into report: inout FlushReport, now: Int) {
        switch r.state {
        case .done, .sent: report.performed += 1
        case .failed, .unknown: report.failed += 1
        default: report.retrying += 1
        }
        report.lines.append(describe(r, now: now))
    }

    /// Settles intents left by a run that died: `sending` → queued (resend), `committing` → unknown.
    /// `appending` and `performing` stay: they are redone with a check first.
    private func recover(_ actions: [ActionRecord], now: Int, report: inout FlushReport) throws(JournalError) -> [ActionRecord] {
        var out = actions
        var changed: [ActionRecord] = []
        for (i, r) in actions.enumerated() {
            switch r.state {
            case .sending:
                out[i] = r.moved(
                    to: .queued, at: now, next: .some(nil),
                    error: .some("the previous attempt stopped before the end of the message; sending again"))
            case .committing:
                out[i] = r.moved(to: .unknown, at: now, error: .some(Self.stoppedAfterDot))
                report.lines.append(describe(out[i], now: now))
            default: continue
            }
            changed.append(out[i])
        }
        try journal.append(changed)
        return out
    }

    static let stoppedAfterDot =
        "the previous attempt stopped while the server had the whole message; it may have accepted it, so it is not resent by itself"

    // MARK: - Send

    enum SendOutcome {
        case sent
        /// `down`: the server is unreachable or asked for patience (skip its other sends this flush).
        case retry(down: Bool)
        case failed(any Error)
        case unknown(String)
    }

    /// One attempt: `sending` → (`committing`) → `sent` | queued for retry | `failed` | `unknown`.
    /// `senderWaiting` (mo-sendmail's own message): a failure not worth queueing (a refusal, or one that
    /// needs the user) is told to the sender at once, and the action `dropped` instead of `failed`.
    /// Also returns the actions the outcome queued (the Sent copy).
    func performSend(
        _ r: ActionRecord, account: Account, now: Int,
        senderWaiting: Bool
    ) throws(JournalError) -> (ActionRecord, SendOutcome, [ActionRecord]) {
        let message: [UInt8]
        do {
            message = try journal.readMessage(r.payload ?? "")
        } catch {
            let failed = r.moved(to: .failed, at: now, error: .some(error.description))
            try journal.append([failed])
            return (failed, .failed(error), [])
        }
        let attempt = r.moved(to: .sending, at: now, tries: r.tries + 1, next: .some(nil))
        try journal.append([attempt])
        CrashPoint.step("sending")

        var committed = false
        let journal = self.journal
        let reply: SMTPReply
        do {
            reply = try delivery.send(
                // A JMAP server removes Bcc as it delivers (RFC 8621 §7.5), and the Email it keeps is the Sent copy.
                envelope: envelope(of: r), message: account.sendsByJMAP ? message : OutgoingMessage.removingBcc(message),
                account: account,
                beforeFinalDot: {
                    try journal.append([attempt.moved(to: .committing, at: now)])
                    committed = true
                    CrashPoint.step("committing")
                })
        } catch {
            let text = (error as? any MoError)?.description ?? "\(error)"
            if committed, (error as? SMTPError)?.afterFinalDot == true || error is SubmissionInDoubt {
                let doubt = attempt.moved(to: .unknown, at: now, error: .some(text))
                try journal.append([doubt])
                return (doubt, .unknown(text), [])
            }
            let failure = FailureClass(error)
            // The lifetime starts when the message was first meant to go (its time, for one sent later).
            let since = max(r.since ?? r.time, r.due ?? 0)
            let verdict = policy.decide(failure, error: text, triesBefore: r.tries, since: since, now: now)
            let refusedToSender = senderWaiting && (failure == .permanent || failure == .needsUser)
            guard verdict.retry && !refusedToSender else {
                let failed = attempt.moved(
                    to: refusedToSender ? .dropped : .failed, at: now, tries: verdict.tries,
                    error: .some(refusedToSender ? text : verdict.error))
                try journal.append([failed])
                return (failed, .failed(error), [])
            }
            let later = attempt.moved(to: .queued, at: now, tries: verdict.tries, next: .some(verdict.next), error: .some(verdict.error))
            try journal.append([later])
            return (later, .retry(down: failure == .unreachable || failure == .temporary), [])
        }
        CrashPoint.step("accepted")
        let sent = attempt.moved(to: .sent, at: now, error: .some(nil), fields: ["reply": reply.description])
        var records = [sent]
        if account.savesSent, let payload = r.payload {
            records.append(
                .append(
                    id: ActionJournal.newID(now: now), payload: payload, account: account.name,
                    messageID: r.messageID, time: now))
        }
        try journal.append(records)
        CrashPoint.step("sent")
        return (sent, .sent, Array(records.dropFirst()))
    }

    private func envelope(of r: ActionRecord) -> SMTPEnvelope {
        var dsn: DSNOptions?
        if r.fields["notify"] != nil || r.fields["ret"] != nil || r.fields["envid"] != nil {
            dsn = DSNOptions(
                notify: r.fields["notify"].flatMap(DSNNotify.init(sendmailArgument:)),
                ret: r.fields["ret"].flatMap { DSNReturn(rawValue: $0.uppercased()) },
                envelopeID: r.fields["envid"])
        }
        return SMTPEnvelope(sender: r.sender ?? "", recipients: r.recipients, dsn: dsn)
    }

    // MARK: - Append

    /// One attempt at storing a Sent copy. After an earlier attempt (resumed, or a retry) the folder is
    /// searched for the Message-ID first, so a copy is never stored twice. Returns whether IMAP was unreachable.
    private func performAppend(
        _ r: ActionRecord, account: Account, now: Int,
        resumed: Bool
    ) throws(JournalError) -> (ActionRecord, Bool) {
        let attempt = r.moved(to: .appending, at: now, tries: r.tries + 1, next: .some(nil))
        try journal.append([attempt])
        CrashPoint.step("appending")
        do {
            if resumed || r.tries > 0, let id = r.messageID,
                try delivery.mailboxHolds(messageID: id, mailbox: r.mailbox, account: account)
            {
                let done = attempt.moved(to: .done, at: now, error: .some(nil), fields: ["uid": "already there"])
                try journal.append([done])
                return (done, false)
            }
            let message = try journal.readMessage(r.payload ?? "")
            let flags = ListField.split(r.fields["flags"] ?? "")
            let note = try delivery.append(message: message, flags: flags, mailbox: r.mailbox, account: account)
            CrashPoint.step("appended")
            let done = attempt.moved(to: .done, at: now, error: .some(nil), fields: ["uid": note])
            try journal.append([done])
            return (done, false)
        } catch let error as JournalError where error.kind == .localIO && error.file?.hasSuffix("actions.journal") == true {
            throw error
        } catch
            where FailureClass(error) == .unreachable
            && now - (ActionJournal.creationTime(ofID: r.id) ?? r.time) < policy.queueLifetime
        {
            // An outage (the server or the token endpoint out): the try is not counted and sets no delay,
            // until `queue-lifetime` (a server that never answers: a typo, a retired host) leaves it to the
            // simple rule below.
            let text = (error as? any MoError)?.description ?? "\(error)"
            let back = attempt.moved(to: .queued, at: now, tries: r.tries, next: .some(nil), error: .some(text))
            try journal.append([back])
            return (back, true)
        } catch {
            let latest = try retryOrFail(attempt, error, now: now)
            return (latest, (error as? any MoError)?.kind == .temporary)
        }
    }

    // MARK: - Move, flag

    private func performOther(
        _ r: ActionRecord, account: Account, now: Int,
        resumed: Bool
    ) throws(JournalError) -> ActionRecord? {
        guard !performers.isEmpty else { return nil }
        let attempt = r.moved(to: .performing, at: now, tries: r.tries + 1, next: .some(nil))
        try journal.append([attempt])
        do {
            for performer in performers where try performer.perform(attempt, account: account, resumed: resumed) {
                let done = attempt.moved(to: .done, at: now, error: .some(nil))
                try journal.append([done])
                return done
            }
            // Nobody took it: back to how it was, the try not counted.
            let back = r.moved(to: r.state == .performing ? .queued : r.state, at: now)
            try journal.append([back])
            return nil
        } catch {
            return try retryOrFail(attempt, error, now: now)
        }
    }

    private func retryOrFail(_ attempt: ActionRecord, _ error: any Error, now: Int) throws(JournalError) -> ActionRecord {
        let text = (error as? any MoError)?.description ?? "\(error)"
        let next =
            attempt.tries >= policy.maxTries
            ? attempt.moved(to: .failed, at: now, error: .some("gave up after \(attempt.tries) tries: \(text)"))
            : attempt.moved(to: .queued, at: now, next: .some(now + policy.delay(afterTry: attempt.tries)), error: .some(text))
        try journal.append([next])
        return next
    }
}
