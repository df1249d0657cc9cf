#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// The append-only action journal and its outbox, under the state directory:
///
///     <state-dir>/actions.journal        the records (docs/action-journal.md)
///     <state-dir>/outbox/ID.eml          message files the records refer to
///     <state-dir>/actions.journal.lock   held while a record is appended or the file rewritten
///     <state-dir>/actions.flush.lock     held by the one process performing actions (see `FlushLock`)
///
/// Invariants:
/// - A record is appended with one write and fsynced before the act it announces begins; every writer
///   holds the journal lock, and first cuts off a torn last line, so records never run together.
/// - A message file is written and fsynced (file and directory) before any record names it.
/// - Compaction rewrites the file atomically (write, fsync, rename, fsync directory) under the journal
///   lock, and deletes a message file only after no durable record needs it any more.
public final class ActionJournal: @unchecked Sendable {
    public let stateDirectory: String
    public var path: String { stateDirectory + "/actions.journal" }
    public var outboxDirectory: String { stateDirectory + "/outbox" }
    var writeLockPath: String { path + ".lock" }
    var flushLockPath: String { stateDirectory + "/actions.flush.lock" }

    public init(stateDirectory: String) {
        self.stateDirectory = stateDirectory
    }

    /// A new action id: the time in base 36, a dash, 8 random base-36 digits (`sl2k3a-0x9f3kqp`).
    public static func newID(now: Int) -> String { timeOrderedID(now: now) }

    /// The time `newID(now:)` was given for `id`: when the action was created (nil for an id of another form).
    public static func creationTime(ofID id: String) -> Int? {
        guard let dash = id.firstIndex(of: "-") else { return nil }
        return Int(id[..<dash], radix: 36)
    }

    // MARK: - Reading

    /// The journal replayed; empty when there is no journal yet.
    public func load() throws(JournalError) -> ActionCodec.Replay {
        switch readWholeFile(path) {
        case .success(let bytes): return try ActionCodec.replay(bytes, file: path)
        case .failure(let e) where e.code == ENOENT: return ActionCodec.Replay(actions: [], warnings: [], completeLength: 0)
        case .failure(let e): throw JournalError(file: path, problem: "cannot read: \(e)", kind: .localIO)
        }
    }

    // MARK: - Writing

    /// Appends `records` with one write and fsyncs. When this returns they survive a crash.
    public func append(_ records: [ActionRecord]) throws(JournalError) {
        guard !records.isEmpty else { return }
        try makeDirectory(stateDirectory)
        let lock = try FileLock.journal(writeLockPath, wait: 30)
        guard lock != nil else {
            throw JournalError(file: writeLockPath, problem: "held for 30 s by pid \(FileLock.holder(writeLockPath))", kind: .busy)
        }
        let text = records.map(ActionCodec.render).joined()
        if let (operation, e) = appendRecords(path, header: ActionCodec.magic, text: text) {
            // A torn last record was never acted on: its act waits for the fsync that did not happen.
            throw JournalError(file: path, problem: "cannot \(operation): \(errnoDescription(e))", kind: .localIO)
        }
    }

    /// Writes a message into the outbox durably and returns its payload reference (`outbox/ID.eml`).
    public func storeMessage(_ message: [UInt8], id: String) throws(JournalError) -> String {
        try makeDirectory(outboxDirectory)
        let relative = "outbox/\(id).eml"
        let full = stateDirectory + "/" + relative
        // Written to `.new`, fsynced, renamed into place, the directory fsynced: the one durable write.
        if case .failure(let e) = replaceFileAtomically(full, message) {
            throw JournalError(file: full, problem: "cannot write: \(e)", kind: .localIO)
        }
        return relative
    }

    /// The bytes of a message file named by a record.
    public func readMessage(_ payload: String) throws(JournalError) -> [UInt8] {
        let full = stateDirectory + "/" + payload
        switch readWholeFile(full) {
        case .success(let bytes): return bytes
        case .failure(let e): throw JournalError(file: full, problem: "cannot read the queued message: \(e)", kind: .localIO)
        }
    }

    // MARK: - Compaction

    /// Rewrites the journal with only the unfinished actions (one line each), then deletes outbox files no
    /// record refers to. With every action finished the journal is just its first line. Call only while
    /// holding the flush lock (no action is in an intent state then). Orphan files younger than an hour are
    /// left alone: a sender may have stored one and not yet journaled it.
    public func compact(now: Int) throws(JournalError) {
        let lock = try FileLock.journal(writeLockPath, wait: 30)
        guard lock != nil else { return }
        let replay = try load()
        let live = replay.actions.filter { !$0.state.isFinished }
        if replay.actions.count != live.count || !replay.warnings.isEmpty {
            let text = ActionCodec.magic + "\n" + live.map(ActionCodec.render).joined()
            CrashPoint.step("compacting")
            if case .failure(let e) = replaceFileAtomically(path, Array(text.utf8)) {
                throw JournalError(file: path, problem: "cannot rewrite: \(e)", kind: .localIO)
            }
        }
        let needed = Set(live.compactMap { $0.payload })
        for name in ((try? directoryNames(outboxDirectory).get()) ?? []).sorted() where !needed.contains("outbox/" + name) {
            let full = outboxDirectory + "/" + name
            var st = stat()
            guard stat(full, &st) == 0, now - Int(st.st_mtim.tv_sec) > 3600 || isReferencedBefore(name, replay) else { continue }
            Glibc.unlink(full)
        }
    }

    /// `actions.last`: the id of the message submitted last, what `--cancel last` means. Written after its
    /// record; missing (a crash between the two), `--cancel last` takes the newest message queued.
    var lastPath: String { stateDirectory + "/actions.last" }

    public func noteLast(_ id: String) {
        _ = replaceFileAtomically(lastPath, Array((id + "\n").utf8))
    }

    public func lastSubmitted() -> String? {
        guard case .success(let bytes) = readWholeFile(lastPath) else { return nil }
        let id = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init)
        return id.flatMap { ActionCodec.isValidID($0) ? $0 : nil }
    }

    /// The send action created last (by the time in its id, then journal order).
    public static func newestSend(_ actions: [ActionRecord]) -> ActionRecord? {
        var best: (ActionRecord, Int)?
        for r in actions where r.kind == .send {
            let created = creationTime(ofID: r.id) ?? r.time
            if best == nil || created >= best!.1 { best = (r, created) }
        }
        return best?.0
    }

    /// A file some (now finished) record named: safe to delete at once.
    private func isReferencedBefore(_ name: String, _ replay: ActionCodec.Replay) -> Bool {
        replay.actions.contains { $0.payload == "outbox/" + name }
    }

    private func makeDirectory(_ dir: String) throws(JournalError) {
        if let e = makeDirectories(dir) {
            throw JournalError(file: dir, problem: "cannot create the directory: \(errnoDescription(e))", kind: .localIO)
        }
    }
}
