#if canImport(Glibc)
    import Glibc
#endif
import MailMessage
import MoConfig
import MoCore
import SMTPClient

extension JournalRunner {
    /// Takes responsibility for one message from mo-sendmail: stores it durably in the outbox and the
    /// journal, then sends it at once unless another process is flushing.
    ///
    /// Returns `.sent`, `.queued` (durable; a temporary failure or a busy flusher) or `.inDoubt`. Throws
    /// the server's refusal (or any failure that is not temporary) after recording the action as
    /// `dropped`: nothing stays queued that the caller was told failed.
    public func submit(
        message: [UInt8], envelope: SMTPEnvelope, account: Account,
        dsn: (notify: String?, ret: String?, envelopeID: String?) = (nil, nil, nil),
        due: Int? = nil, now: Int = WallClock.now()
    ) throws -> SubmitOutcome {
        if !account.sendsByJMAP { _ = try config.smtp(of: account) }
        let id = ActionJournal.newID(now: now)
        let payload = try journal.storeMessage(message, id: id)
        CrashPoint.step("outbox-written")
        let record = ActionRecord.send(
            id: id, payload: payload, account: account.name, sender: envelope.sender,
            recipients: envelope.recipients, messageID: HeaderEdit.value("Message-ID", in: message),
            dsn: dsn, due: due.flatMap { $0 > now ? $0 : nil }, time: now)
        if record.isScheduled(now: now) {
            // Its time has not come: durable now, sent by whichever sender runs at or after it.
            try journal.append([record])
            CrashPoint.step("queued")
            journal.noteLast(id)
            return .scheduled(id: id, at: record.due!)
        }
        let lock = try FileLock.journal(journal.flushLockPath, wait: submitLockWait)
        try journal.append([record])
        CrashPoint.step("queued")
        journal.noteLast(id)
        guard let lock else {
            return .queued(id: id, reason: "another process (pid \(FileLock.holder(journal.flushLockPath))) is sending queued mail")
        }
        defer { withExtendedLifetime(lock) {} }
        defer { delivery.finish() }
        let (latest, outcome, _) = try performSend(record, account: account, now: now, senderWaiting: true)
        switch outcome {
        case .sent:
            return .sent(id: id, reply: latest.fields["reply"] ?? "")
        case .retry:
            return .queued(id: id, reason: latest.error ?? "temporary failure")
        case .unknown(let reason):
            return .inDoubt(id: id, reason: reason)
        case .failed(let error):
            try? journal.compact(now: now)
            throw error
        }
    }

    // MARK: - Listing

    /// Lines for `mo-sync status`: every unfinished action, oldest first.
    public func status(now: Int = WallClock.now()) throws(JournalError) -> [String] {
        try journal.load().actions.filter { !$0.state.isFinished }.map { describe($0, now: now) }
    }

    /// Lines for `mo-sendmail --queue`: one per message not yet sent (queued, failed or in doubt).
    public func queue(now: Int = WallClock.now()) throws(JournalError) -> [String] {
        try journal.load().actions.filter { $0.kind == .send && !$0.state.isFinished }.map { describe($0, now: now) }
    }

    /// One line about an action, control characters escaped (subjects, addresses and server replies come
    /// from outside): `ID send queued to a@x, b@y "Subject" (queued 2 h ago; 1 try; next try in 30 s; last
    /// error: ...)`.
    public func describe(_ r: ActionRecord, now: Int) -> String {
        var line = "\(r.id) \(r.kind.rawValue) \(r.state.rawValue)"
        switch r.kind {
        case .send:
            line += " to " + r.recipients.joined(separator: ", ")
            if let subject = subject(of: r) { line += " \"\(subject)\"" }
        case .append:
            line += " to \(r.mailbox ?? "Sent") of \(r.account)"
            if let uid = r.fields["uid"], r.state == .done { line += " (\(uid))" }
        case .move:
            line += " \(r.fields["folder"] ?? "?") uid \(r.fields["uid"] ?? "?") to \(r.fields["to"] ?? "?")"
        case .flag:
            line += " \(r.fields["folder"] ?? "?") uid \(r.fields["uid"] ?? "?")"
            if let add = r.fields["add"], !add.isEmpty { line += " +" + ListField.split(add).joined(separator: " +") }
            if let remove = r.fields["remove"], !remove.isEmpty { line += " -" + ListField.split(remove).joined(separator: " -") }
        }
        var notes: [String] = []
        if r.kind == .send, !r.state.isFinished {
            if !r.isScheduled(now: now) { notes.append("queued \(DurationText.format(max(0, now - (r.since ?? r.time)))) ago") }
            notes.append(r.tries == 1 ? "1 try" : "\(r.tries) tries")
            if r.isScheduled(now: now), let due = r.due {
                notes.append("sends \(WhenText.describe(due, now: now))")
            } else if r.state == .queued, let next = r.next, next > now {
                notes.append("next try in \(DurationText.format(next - now))")
            } else if r.state == .queued {
                notes.append("next try at the next flush")
            }
            if let error = r.error { notes.append((r.state == .queued ? "last error: " : "") + error) }
        } else {
            if r.state == .queued, r.tries > 0 {
                notes.append("try \(r.tries) of \(policy.maxTries) failed")
                if let next = r.next { notes.append(next > now ? "next in \(DurationText.format(next - now))" : "due now") }
            }
            if let error = r.error, !r.state.isFinished { notes.append(error) }
        }
        if r.state == .unknown { notes.append("`mo-sendmail --retry \(r.id)` sends it again, `--drop \(r.id)` forgets it") }
        if r.state == .failed { notes.append("`mo-sendmail --retry \(r.id)` tries again, `--drop \(r.id)` forgets it") }
        if r.state == .sent, let reply = r.fields["reply"] { notes.append(reply) }
        return escapedForMessage(notes.isEmpty ? line : line + " (" + notes.joined(separator: "; ") + ")")
    }

    private func subject(of r: ActionRecord) -> String? {
        guard let payload = r.payload, case .success(let bytes) = readWholeFile(journal.stateDirectory + "/" + payload) else { return nil }
        return HeaderEdit.value("Subject", in: Array(bytes.prefix(65536)))
    }

    // MARK: - The user's decisions

    /// Queues a failed, in-doubt or waiting action again with a fresh count of tries, due now; a message
    /// gets a fresh queue lifetime too.
    public func retry(id: String, now: Int = WallClock.now()) throws(JournalError) {
        try decide(id: id, now: now, allowed: [.failed, .unknown, .queued]) {
            $0.moved(
                to: .queued, at: now, tries: 0, next: .some(nil), error: .some(nil),
                fields: $0.kind == .send ? ["since": String(now)] : [:])
        }
    }

    /// Takes a message out of the queue before it is sent (undo send, or a send later changed): `id`, or
    /// `"last"` for the message queued last. Under the flush lock, so no sender is half-way through it:
    /// `keep` gets the message's bytes (to print, or to put in Drafts) and only after it returned is the
    /// action `dropped`. A crash in between leaves the message queued: never lost, at worst still sent.
    /// Returns the cancelled action. A message sent already, being sent, or in doubt is refused
    /// (`.unavailable`).
    @discardableResult
    public func cancel(
        _ selector: String, now: Int = WallClock.now(), keep: (ActionRecord, [UInt8]) throws -> Void
    ) throws -> ActionRecord {
        guard let lock = try FileLock.journal(journal.flushLockPath, wait: lockWait) else {
            throw JournalError(
                file: journal.flushLockPath,
                problem: "another process (pid \(FileLock.holder(journal.flushLockPath))) is sending queued actions; try again", kind: .busy
            )
        }
        defer { withExtendedLifetime(lock) {} }
        let actions = try journal.load().actions
        var wanted: String? = selector
        if selector == "last" {
            // actions.last, unless a message newer than it is in the journal (a crash between a record and
            // the note): never an older message than the one submitted last.
            let noted = journal.lastSubmitted(), newest = ActionJournal.newestSend(actions)?.id
            let created = { (id: String?) in id.flatMap(ActionJournal.creationTime(ofID:)) ?? -1 }
            wanted = created(newest) > created(noted) ? newest : noted ?? newest
        }
        guard let r = actions.first(where: { $0.id == wanted && $0.kind == .send }) else {
            if selector == "last", let wanted {
                throw JournalError(
                    file: journal.path,
                    problem: "the message queued last (\(wanted)) has left the queue: sent, or cancelled; too late to cancel",
                    kind: .unavailable)
            }
            throw JournalError(
                file: journal.path, problem: selector == "last" ? "no message was queued" : "no message \(selector) in the queue",
                kind: .usage)
        }
        switch r.state {
        case .queued, .failed: break
        case .unknown:
            throw JournalError(
                file: journal.path,
                problem: "\(r.id) is in doubt: the server may have delivered it, so it is not cancelled (--drop \(r.id) forgets it)",
                kind: .unavailable)
        case .sent:
            throw JournalError(
                file: journal.path, problem: "\(r.id) was sent already (\(r.fields["reply"] ?? "accepted")); too late to cancel",
                kind: .unavailable)
        case .dropped:
            throw JournalError(file: journal.path, problem: "\(r.id) was cancelled or dropped already", kind: .usage)
        default:
            throw JournalError(file: journal.path, problem: "\(r.id) is \(r.state.rawValue); too late to cancel", kind: .unavailable)
        }
        try keep(r, try journal.readMessage(r.payload ?? ""))
        CrashPoint.step("cancel-kept")
        let cancelled = r.moved(to: .dropped, at: now, error: .some("cancelled"))
        try journal.append([cancelled])
        try journal.compact(now: now)
        return cancelled
    }

    /// The earliest time after `after` that a queued message waits for (send later, `send-delay`), for
    /// `--watch` to wake at.
    public static func nextDue(in actions: [ActionRecord], after: Int) -> Int? {
        actions.filter { $0.kind == .send && $0.state == .queued }.compactMap(\.due).filter { $0 > after }.min()
    }

    /// Forgets an action that is not finished; its message file goes at the next compaction.
    public func drop(id: String, now: Int = WallClock.now()) throws(JournalError) {
        try decide(id: id, now: now, allowed: [.failed, .unknown, .queued]) { $0.moved(to: .dropped, at: now) }
        try journal.compact(now: now)
    }

    private func decide(
        id: String, now: Int, allowed: Set<ActionState>,
        _ change: (ActionRecord) -> ActionRecord
    ) throws(JournalError) {
        guard let lock = try FileLock.journal(journal.flushLockPath, wait: lockWait) else {
            throw JournalError(
                file: journal.flushLockPath,
                problem: "another process (pid \(FileLock.holder(journal.flushLockPath))) is sending queued actions; try again", kind: .busy
            )
        }
        defer { withExtendedLifetime(lock) {} }
        guard let r = try journal.load().actions.first(where: { $0.id == id }) else {
            throw JournalError(file: journal.path, problem: "no action \(id)", kind: .usage)
        }
        guard allowed.contains(r.state) else {
            throw JournalError(
                file: journal.path, problem: "action \(id) is \(r.state.rawValue); only a queued, failed or unknown one can be changed",
                kind: .usage)
        }
        try journal.append([change(r)])
    }
}
