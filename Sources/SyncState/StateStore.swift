#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import SyncEngine

/// The files of one folder pair under the account's state directory:
/// `<key>.state` (last committed state) and `<key>.journal` (entries since).
///
/// Crash safety, the isync way: every entry is appended to the journal and made durable before the act
/// it announces, and loading replays the journal over the state file, so a crash at any instant loses
/// nothing that was acted on.
///
/// A commit costs what the run changed: it appends one `C` entry and fsyncs the journal, which then holds
/// every change since the state file. Only when the journal outgrows its bound (`compactionFloor`, or a
/// quarter of the state file) is it compacted: `<key>.state.new` written and fsynced, renamed over the
/// state file, the directory fsynced, and only then the journal removed. A folder's first commit always
/// compacts, so a synced folder always has a state file.
public final class FolderStateStore {
    public let statePath: String
    public let journalPath: String
    /// `<key>.extra`: the base of the keywords beyond the 26 letters (`ExtraKeywordBase`).
    public let extraPath: String
    /// `<key>.window`: the date window the last run applied (WindowRecord.swift).
    public let windowPath: String
    private var journalFD: Int32 = -1
    private var pending: [UInt8] = []
    /// Whether the journal may hold entries after its last `C` (conservatively true until a load says).
    private var uncommitted = true
    /// Compaction waits until the journal passes this many bytes or a quarter of the state file.
    public var compactionFloor = 64 * 1024
    /// `MO_STATE_COMPACT_BOUND=<bytes>` (for the crash tests, as `CrashPoint`): compact whenever the
    /// journal passes exactly that many bytes (0: at every commit), whatever the state file's size.
    private static let boundOverride: Int? = getenv("MO_STATE_COMPACT_BOUND").flatMap { Int(String(cString: $0)) }

    /// `key` names the folder within the account directory (see `FolderStateStore.key(forLocalPath:)`).
    public init(accountDirectory: String, key: String) {
        statePath = "\(accountDirectory)/\(key).state"
        journalPath = "\(accountDirectory)/\(key).journal"
        extraPath = "\(accountDirectory)/\(key).extra"
        windowPath = "\(accountDirectory)/\(key).window"
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

    /// The key of a Gmail-mode view's state (docs/sync-design.md, "Gmail mode"): `~gmail` before the local
    /// path's key, so it never names the state of a folder synced folder by folder at the same path, whose
    /// UIDs are another mailbox's (Gmail's UIDVALIDITY values are small numbers, and may be equal).
    public static func key(forGmailView path: String) -> String { "~gmail" + key(forLocalPath: path) }
    /// The key of a JMAP account's view's state: `~jmap` before the local path's key, for the same reason.
    public static func key(forJMAPView path: String) -> String { "~jmap" + key(forLocalPath: path) }

    /// The longest key kept as it is: 255 (NAME_MAX) less `.state.new`. Every key that fitted before
    /// shortening existed is unchanged.
    static let keyLimit = 245

    /// Whether a journal is waiting to be folded into the state file (an interrupted run, or this run's).
    public var hasJournal: Bool { access(journalPath, F_OK) == 0 }
    /// Whether entries are queued but not yet flushed.
    public var hasPendingEntries: Bool { !pending.isEmpty }
    /// Whether every entry is committed: the last load found the journal ending at a `C` (or no
    /// journal), and nothing was appended since. False before any load.
    public var isCommitted: Bool { !uncommitted && pending.isEmpty }
    /// Whether a committed state file exists.
    public var stateFileExists: Bool { access(statePath, F_OK) == 0 }

    /// Whether this folder was ever synced (a state file or a journal exists).
    /// The bytes of the state file and the journal (0 for none): about 60 a record, a folder's size
    /// without reading it.
    public var bytesOnDisk: Int {
        var total = 0, st = stat()
        for path in [statePath, journalPath] where stat(path, &st) == 0 { total += Int(st.st_size) }
        return total
    }

    public var exists: Bool {
        access(statePath, F_OK) == 0 || access(journalPath, F_OK) == 0
    }

    /// The last state plus the journal replayed over it; a fresh state for `mailbox` if neither exists.
    public func load(mailbox: String) throws(StateError) -> Replay {
        var base = Replay(state: FolderState(mailbox: mailbox))
        // Read in chunks: a large folder's state file is never held whole beside its table.
        switch ChunkReader.open(statePath) {
        case .success(let reader):
            let path = statePath
            let (header, table) = try StateCodec.parseIntoTable(file: path, sizeHint: reader.size) { () throws(StateError) -> [UInt8]? in
                switch reader.next() {
                case .success(let bytes): return bytes
                case .failure(let e): throw StateError(file: path, cannot: "read", code: e.code)
                }
            }
            base = Replay(header: header, table: table)
        case .failure(let e) where e.code == ENOENT: break
        case .failure(let e): throw StateError(file: statePath, cannot: "read", code: e.code)
        }
        return try replayJournal(over: base)
    }

    /// The state with only the records of `uids` (uid 0 never matches). The journal is replayed whole over
    /// the partial records and the result cut to `uids` again: a record of `uids` meets the same entries
    /// as in a full load, since every entry that touches it names its UID or its unique name.
    public func load(keepingUIDs uids: Set<UInt32>) throws(StateError) -> FolderState {
        let partial: FolderState
        switch readWholeFile(statePath) {
        case .success(let bytes): partial = try StateCodec.parse(bytes, file: statePath, keepingUIDs: uids)
        case .failure(let e): throw StateError(file: statePath, cannot: "read", code: e.code)
        }
        let replay = try replayJournal(over: Replay(state: partial))
        var state = replay.state
        state.records = replay.table.records.filter { $0.uid != 0 && uids.contains($0.uid) }
        return state
    }

    /// The state file's header only (no records), or nil when there is no state file. Its mailbox is
    /// current; its other fields may be older than the journal's (`loadCommittedHeader`).
    public func loadHeader() throws(StateError) -> FolderState? {
        switch readWholeFile(statePath) {
        case .success(let bytes): return try StateCodec.parseHeader(bytes, file: statePath)
        case .failure(let e) where e.code == ENOENT: return nil
        case .failure(let e): throw StateError(file: statePath, cannot: "read", code: e.code)
        }
    }

    /// The header as of the last commit, read from the state file and the journal's last line alone (no
    /// record is read): nil when there is no state file, or when entries follow the journal's last `C`
    /// (an interrupted run: only a full load can say what it did). For deciding cheaply that nothing changed.
    public func loadCommittedHeader() throws(StateError) -> FolderState? {
        guard var header = try loadHeader() else { return nil }
        switch lastLine(ofFile: journalPath) {
        case .failure(let e) where e.code == ENOENT: break
        case .failure(let e): throw StateError(file: journalPath, cannot: "read", code: e.code)
        case .success(nil): return nil  // torn, or longer than a commit line
        case .success(let line?) where line == JournalEntry.magic: break
        case .success(let line?):
            guard line.hasPrefix("C "),
                case .commit(let v, let n, let m, let stamp)? = try? JournalEntry.parse(
                    Substring(line), fail: { StateError(file: journalPath, problem: $0) })
            else { return nil }
            header.uidValidity = v; header.uidNext = n; header.highestModSeq = m; header.localStamp = stamp
        }
        uncommitted = false
        return header
    }

    private func replayJournal(over base: Replay) throws(StateError) -> Replay {
        switch readWholeFile(journalPath) {
        case .success(let bytes):
            let replay = try JournalCodec.replay(bytes, over: base, file: journalPath)
            uncommitted = replay.interrupted
            return replay
        case .failure(let e) where e.code == ENOENT:
            uncommitted = false
            return base
        case .failure(let e): throw StateError(file: journalPath, cannot: "read", code: e.code)
        }
    }

    /// Queues an entry; it reaches the disk at the next `flush()`. Callers flush before acting.
    public func append(_ entry: JournalEntry) {
        pending.append(contentsOf: entry.line.utf8)
        uncommitted = true
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

    /// Commits a run: appends `C` with `header`'s status and directory times and makes the journal durable.
    /// Compacts when the folder has no state file yet or the journal has outgrown its bound. `table`, when
    /// given, must hold every record (it then writes the state file without reading the journal back);
    /// a run that loaded only some records passes nil.
    public func commit(_ header: FolderState, completeTable table: RecordTable?) throws(StateError) {
        append(
            .commit(
                uidValidity: header.uidValidity, uidNext: header.uidNext, highestModSeq: header.highestModSeq,
                stamp: header.localStamp))
        try flush()
        uncommitted = false
        CrashPoint.step("commit: journal committed")
        guard try outgrown() else { return }
        try compact(header, table: table)
    }

    /// Whether the state file should take the journal in: it is missing, or the journal passed its bound.
    private func outgrown() throws(StateError) -> Bool {
        var st = stat()
        guard stat(statePath, &st) == 0 else {
            if errno == ENOENT { return true }
            throw StateError(file: statePath, cannot: "read", code: errno)
        }
        let stateSize = Int(st.st_size)
        guard journalFD >= 0, fstat(journalFD, &st) == 0 else { return false }
        return Int(st.st_size) > Self.boundOverride ?? max(compactionFloor, stateSize / 4)
    }

    /// Writes the state as loaded (records from `table`, or the state file with the journal replayed)
    /// to a new state file, puts it in place, and only then removes the journal: a crash in between
    /// replays the journal over a state that already holds it, which changes nothing.
    public func compact(_ header: FolderState, table: RecordTable?) throws(StateError) {
        try flush()
        let bytes: [UInt8]
        if let table {
            bytes = StateCodec.render(header, table: table)
        } else {
            let replay = try load(mailbox: header.mailbox)
            bytes = StateCodec.render(replay.state, table: replay.table)
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
        uncommitted = false
    }
}

extension FolderStateStore {
    /// Forgets the folder: removes its state file and journal (when the folder itself is gone on both sides).
    public func remove() throws(StateError) {
        for path in [journalPath, extraPath, windowPath, statePath] where Glibc.unlink(path) != 0 && errno != ENOENT {
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

    /// Takes the lock, waiting up to `wait` seconds (0: fails at once), or fails with a `.busy` error naming
    /// the holder's PID.
    public init(directory: String, account: String, wait: Double = 0) throws(StateError) {
        let path = directory + "/lock"
        if let e = makeDirectories(directory) {
            throw StateError(file: directory, cannot: "create the state directory", code: e)
        }
        let taken: FileLock?
        do { taken = try FileLock(path: path, wait: wait) } catch {
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
