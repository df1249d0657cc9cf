#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import SyncEngine

/// The files of one folder pair under the account's state directory:
/// `<key>.state` (last committed state) and `<key>.journal` (entries since).
///
/// Crash safety, the isync way: every entry is appended to the journal and made durable before the act
/// it announces; `commit` writes `<key>.state.new`, fsyncs it, renames it over the state file, fsyncs the
/// directory, and only then removes the journal. Loading replays the journal over the state file, so a
/// crash at any instant loses nothing that was acted on.
public final class FolderStateStore {
    public let statePath: String
    public let journalPath: String
    private var journalFD: Int32 = -1
    private var pending: [UInt8] = []

    /// `key` names the folder within the account directory (see `FolderStateStore.key(forLocalPath:)`).
    public init(accountDirectory: String, key: String) {
        statePath = "\(accountDirectory)/\(key).state"
        journalPath = "\(accountDirectory)/\(key).journal"
    }

    deinit { if journalFD >= 0 { Glibc.close(journalFD) } }

    /// A file name for a folder's local path: `=` followed by the path with '/' and '%' escaped, so every
    /// folder (including the maildir++ root, "") has a distinct, flat name. A key longer than `keyLimit`
    /// is shortened (`BoundedName`), so that with its longest suffix (`.state.new`) it stays within
    /// NAME_MAX however long or deep the mailbox; the state file keeps the full mailbox name.
    public static func key(forLocalPath path: String) -> String {
        var out: [UInt8] = [UInt8(ascii: "=")]
        for b in path.utf8 {
            switch b {
            case UInt8(ascii: "/"): out += Array("%2F".utf8)
            case UInt8(ascii: "%"): out += Array("%25".utf8)
            default: out.append(b)
            }
        }
        return String(decoding: BoundedName.bounded(out, limit: keyLimit), as: UTF8.self)
    }

    /// The longest key kept as it is: 255 (NAME_MAX) less `.state.new`. Every key that fitted before
    /// shortening existed is unchanged.
    static let keyLimit = 245

    /// Whether a journal is waiting to be folded into the state file (an interrupted run, or this run's).
    public var hasJournal: Bool { access(journalPath, F_OK) == 0 }
    /// Whether entries are queued but not yet flushed.
    public var hasPendingEntries: Bool { !pending.isEmpty }
    /// Whether a committed state file exists.
    public var stateFileExists: Bool { access(statePath, F_OK) == 0 }

    /// Whether this folder was ever synced (a state file or a journal exists).
    public var exists: Bool {
        access(statePath, F_OK) == 0 || access(journalPath, F_OK) == 0
    }

    /// The last state plus the journal replayed over it; a fresh state for `mailbox` if neither exists.
    public func load(mailbox: String) throws(StateError) -> Replay {
        var base = Replay(state: FolderState(mailbox: mailbox))
        switch readWholeFile(statePath) {
        case .success(let bytes):
            let (header, table) = try StateCodec.parseIntoTable(bytes, file: statePath)
            base = Replay(header: header, table: table)
        case .failure(let e) where e.code == ENOENT: break
        case .failure(let e): throw StateError(file: statePath, cannot: "read", code: e.code)
        }
        switch readWholeFile(journalPath) {
        case .success(let bytes): return try JournalCodec.replay(bytes, over: base, file: journalPath)
        case .failure(let e) where e.code == ENOENT:
            return base
        case .failure(let e): throw StateError(file: journalPath, cannot: "read", code: e.code)
        }
    }

    /// The committed state with only the records of `uids` (no journal may exist: it would need the rest).
    public func load(keepingUIDs uids: Set<UInt32>) throws(StateError) -> FolderState {
        switch readWholeFile(statePath) {
        case .success(let bytes): return try StateCodec.parse(bytes, file: statePath, keepingUIDs: uids)
        case .failure(let e): throw StateError(file: statePath, cannot: "read", code: e.code)
        }
    }

    /// The committed state's header only (no records), or nil when there is no state file. For deciding
    /// cheaply that nothing changed; never use it when a journal exists.
    public func loadHeader() throws(StateError) -> FolderState? {
        switch readWholeFile(statePath) {
        case .success(let bytes): return try StateCodec.parseHeader(bytes, file: statePath)
        case .failure(let e) where e.code == ENOENT: return nil
        case .failure(let e): throw StateError(file: statePath, cannot: "read", code: e.code)
        }
    }

    /// Queues an entry; it reaches the disk at the next `flush()`. Callers flush before acting.
    public func append(_ entry: JournalEntry) {
        pending.append(contentsOf: entry.line.utf8)
    }

    /// Writes queued entries to the journal and fsyncs it. After this returns, the entries survive a crash.
    public func flush() throws(StateError) {
        guard !pending.isEmpty else { return }
        if journalFD < 0 {
            let fd = openRetrying(journalPath, O_RDWR | O_CREAT | O_APPEND, 0o600)
            guard fd >= 0 else {
                throw StateError(file: journalPath, cannot: "open", code: -fd)
            }
            var st = stat()
            // A torn entry left by an earlier run (replay ignored it) goes: appended to, it would become a
            // damaged line in the middle, which replay refuses.
            if fstat(fd, &st) == 0 && st.st_size > 0, let e = cutTornLastLine(fd, size: Int(st.st_size)) {
                Glibc.close(fd)
                throw StateError(file: journalPath, cannot: "cut the torn last line", code: e)
            }
            if fstat(fd, &st) == 0 && st.st_size == 0 {
                pending.insert(contentsOf: (JournalEntry.magic + "\n").utf8, at: 0)
            }
            journalFD = fd
        }
        let failed =
            pending.withUnsafeBytes { raw -> Int32? in
                guard let fits = WriteFault.stateAllowance(raw.count) else { return writeAll(journalFD, raw) }
                return writeAll(journalFD, UnsafeRawBufferPointer(rebasing: raw[..<fits])) ?? ENOSPC
            } ?? fsyncRetrying(journalFD)
        if let e = failed {
            throw StateError(file: journalPath, cannot: "write", code: e)
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Makes `state` the committed state and removes the journal (in that order). With `replacing`,
    /// `state.records` hold only the records of those UIDs (see `load(keepingUIDs:)`): the other records
    /// are carried over from the committed file.
    /// `table`, when given, holds the records instead of `state.records`.
    public func commit(_ state: FolderState, table: RecordTable? = nil, replacing uids: Set<UInt32>? = nil) throws(StateError) {
        try flush()
        let bytes: [UInt8]
        if let uids {
            var fresh = state
            if let table { fresh.records = table.records }
            switch readWholeFile(statePath) {
            case .success(let old): bytes = try StateCodec.renderMerged(fresh, over: old, replacing: uids, file: statePath)
            case .failure(let e): throw StateError(file: statePath, cannot: "read", code: e.code)
            }
        } else if let table {
            bytes = StateCodec.render(state, table: table)
        } else {
            bytes = StateCodec.render(state)
        }
        if WriteFault.stateAllowance(bytes.count) != nil {
            throw StateError(file: statePath, cannot: "write", code: ENOSPC)
        }
        if case .failure(let e) = replaceFileAtomically(statePath, bytes) {
            throw StateError(file: statePath, cannot: "write", code: e.code)
        }
        CrashPoint.step("commit: state file replaced")
        if journalFD >= 0 { Glibc.close(journalFD); journalFD = -1 }
        if Glibc.unlink(journalPath) != 0 && errno != ENOENT {
            throw StateError(file: journalPath, cannot: "remove", code: errno)
        }
    }
}

extension FolderStateStore {
    /// Forgets the folder: removes its state file and journal (when the folder itself is gone on both sides).
    public func remove() throws(StateError) {
        for path in [journalPath, statePath] where Glibc.unlink(path) != 0 && errno != ENOENT {
            throw StateError(file: path, cannot: "remove", code: errno)
        }
    }
}

/// An exclusive lock on an account's state directory (`MoCore.FileLock` on `<directory>/lock`), held for
/// the life of the object (and released by the kernel if the process dies), so two `mo-sync` runs never
/// work on one account at once.
public final class AccountLock {
    public var path: String { lock.path }
    private let lock: FileLock

    /// Takes the lock or fails at once with a `.busy` error naming the holder's PID.
    public init(directory: String, account: String) throws(StateError) {
        let path = directory + "/lock"
        if let e = makeDirectories(directory) {
            throw StateError(file: directory, cannot: "create the state directory", code: e)
        }
        let taken: FileLock?
        do { taken = try FileLock(path: path) } catch {
            throw StateError(file: path, problem: error.description, kind: .localIO)
        }
        guard let taken else {
            throw StateError(
                file: path,
                problem: "another mo-sync is running for account \(account) (pid \(FileLock.holder(path))); "
                    + "it holds this lock until it ends", kind: .busy)
        }
        lock = taken
    }
}
