import MoCore
import Maildir
import SyncEngine

/// One write-ahead journal line. The executor appends an entry (and makes it durable) *before* the act it
/// describes, so that after a crash, replaying the journal over the last state file says what was done
/// or was about to be done.
///
///     mo-sync-journal 1
///     S 1795306901 120 4567                        folder status (uidvalidity uidnext highestmodseq)
///     F 12 1700000000.M1P1Q1R1.host                about to fetch UID 12 into a file of that unique name
///     A 1700000001.M2P1Q2R9.host 120 5120 <id@x>   about to append that file (server UIDNEXT, wire size, Message-ID or -)
///     R 12 1700000000.M1P1Q1R1.host FS             the pair now exists with these flags
///     D 12 1700000000.M1P1Q1R1.host                the pair is gone
///     C 1795306901 121 4570 1700000000123456789 1700000000123456789
///                                                  a run committed: its folder status and cur/ new/ times
///                                                  (`- -` for none)
///
/// `F` and `A` are intents: a later `R` for the same UID (F) or unique name (A) settles them. An intent left
/// unsettled after a crash is reported by `replay` so the executor can find out whether the act happened
/// (a file with that unique name exists; a server message with that Message-ID and size appeared at or
/// above that UIDNEXT) instead of doing it twice.
///
/// `C` is a run's commit: the journal holds every change since the state file, and a run writes only its
/// own entries and one `C` (see `FolderStateStore.commit`). Intents before a `C` are settled or abandoned
/// with their run. An `S` or `C` naming a UIDVALIDITY other than the state's (when that is set) drops
/// every record: the old UIDs name nothing now, and the run that saw the change recorded its re-pairings
/// after it, as it dropped its whole table in memory.
public enum JournalEntry: Sendable, Equatable {
    case status(uidValidity: UInt32, uidNext: UInt32, highestModSeq: UInt64)
    case fetchIntent(uid: UInt32, unique: String)
    case appendIntent(unique: String, uidNext: UInt32, key: MessageKey?)
    case record(SyncRecord)
    case drop(uid: UInt32, unique: String)
    case commit(uidValidity: UInt32, uidNext: UInt32, highestModSeq: UInt64, stamp: LocalStamp?)

    public static let magic = "mo-sync-journal 1"

    public var line: String {
        switch self {
        case .status(let v, let n, let m): "S \(v) \(n) \(m)\n"
        case .fetchIntent(let uid, let unique): "F \(uid) \(StateCodec.uniqueField(unique))\n"
        case .appendIntent(let unique, let uidNext, let key):
            "A \(StateCodec.uniqueField(unique)) \(uidNext) \(key?.wireSize ?? 0) "
                + "\(key.map { PercentEscape.escape($0.messageID).isEmpty ? "-" : PercentEscape.escape($0.messageID) } ?? "-")\n"
        case .record(let r): "R \(r.uid) \(StateCodec.uniqueField(r.unique)) \(FlagField.render(r.flags))\n"
        case .drop(let uid, let unique): "D \(uid) \(StateCodec.uniqueField(unique))\n"
        case .commit(let v, let n, let m, let stamp):
            "C \(v) \(n) \(m) \(stamp.map { "\($0.cur) \($0.new)" } ?? "- -")\n"
        }
    }

    static func parse(_ line: Substring, fail: (String) -> StateError) throws(StateError) -> JournalEntry {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard let op = parts.first else { throw fail("empty line") }
        func count(_ n: Int) throws(StateError) {
            if parts.count != n { throw fail("\"\(op)\" takes \(n - 1) fields, found \"\(line)\"") }
        }
        func uid(_ s: Substring) throws(StateError) -> UInt32 {
            guard let v = UInt32(s) else { throw fail("\"\(s)\" is not a UID") }
            return v
        }
        func unique(_ s: Substring) throws(StateError) -> String {
            guard let u = StateCodec.parseUniqueField(s) else { throw fail("bad unique name \"\(s)\"") }
            return u
        }
        switch op {
        case "S":
            try count(4)
            guard let v = UInt32(parts[1]), let n = UInt32(parts[2]), let m = UInt64(parts[3]) else {
                throw fail("bad status \"\(line)\"")
            }
            return .status(uidValidity: v, uidNext: n, highestModSeq: m)
        case "F":
            try count(3)
            return .fetchIntent(uid: try uid(parts[1]), unique: try unique(parts[2]))
        case "A":
            try count(5)
            guard let n = UInt32(parts[2]), let size = Int(parts[3]) else { throw fail("bad append intent \"\(line)\"") }
            let key: MessageKey?
            if parts[4] == "-" {
                key = nil
            } else {
                guard let id = PercentEscape.unescape(parts[4]) else { throw fail("bad Message-ID \"\(parts[4])\"") }
                key = MessageKey(messageID: id, wireSize: size)
            }
            return .appendIntent(unique: try unique(parts[1]), uidNext: n, key: key)
        case "R":
            return .record(try StateCodec.parseRecord(line.dropFirst(2), fail: fail))
        case "D":
            try count(3)
            return .drop(uid: try uid(parts[1]), unique: try unique(parts[2]))
        case "C":
            try count(6)
            guard let v = UInt32(parts[1]), let n = UInt32(parts[2]), let m = UInt64(parts[3]) else {
                throw fail("bad commit \"\(line)\"")
            }
            if parts[4] == "-" && parts[5] == "-" { return .commit(uidValidity: v, uidNext: n, highestModSeq: m, stamp: nil) }
            guard let cur = Int64(parts[4]), let new = Int64(parts[5]) else { throw fail("bad commit times \"\(line)\"") }
            return .commit(uidValidity: v, uidNext: n, highestModSeq: m, stamp: LocalStamp(cur: cur, new: new))
        default:
            throw fail("unknown journal entry \"\(op)\"")
        }
    }
}

/// What replaying a journal over a state gave: the state as of the last entry, and intents never settled.
/// The records are in `table` (`state.records` is left empty, so a large folder is held once).
public struct Replay: Sendable, Equatable {
    public var state: FolderState
    public var table: RecordTable
    public var pendingFetches: [(uid: UInt32, unique: String)]
    public var pendingAppends: [(unique: String, uidNext: UInt32, key: MessageKey?)]
    /// Whether entries follow the journal's last `C`: a run was interrupted (or a release before `C`
    /// existed left its journal). False with no journal or an empty one.
    public var interrupted = false

    /// A state whose records were parsed into `state.records`, moved into the table.
    public init(
        state: FolderState, pendingFetches: [(uid: UInt32, unique: String)] = [],
        pendingAppends: [(unique: String, uidNext: UInt32, key: MessageKey?)] = []
    ) {
        var header = state
        header.records = []
        self.state = header
        self.table = RecordTable(state.records)
        self.pendingFetches = pendingFetches
        self.pendingAppends = pendingAppends
    }

    /// A header (its records ignored) and a table already made (`StateCodec.parseIntoTable`).
    public init(header: FolderState, table: RecordTable) {
        var h = header
        h.records = []
        self.state = h
        self.table = table
        self.pendingFetches = []
        self.pendingAppends = []
    }

    /// The records sorted (as `RecordTable.records`).
    public var records: [SyncRecord] { table.records }

    public static func == (a: Replay, b: Replay) -> Bool {
        a.state == b.state && a.records == b.records && a.interrupted == b.interrupted
            && a.pendingFetches.elementsEqual(b.pendingFetches, by: { $0.uid == $1.uid && $0.unique == $1.unique })
            && a.pendingAppends.elementsEqual(
                b.pendingAppends, by: { $0.unique == $1.unique && $0.uidNext == $1.uidNext && $0.key == $1.key })
    }
}

public enum JournalCodec {
    /// Applies journal `bytes` to `state`, strictly: an unknown or malformed line is an error naming
    /// file:line. Only a last line without its newline is tolerated and ignored: it was being written when
    /// the process died, so the act it announced never started (acts wait for their entry to be durable).
    public static func replay(_ bytes: [UInt8], over state: FolderState, file: String) throws(StateError) -> Replay {
        try replay(bytes, over: Replay(state: state), file: file)
    }

    /// Applies journal `bytes` to a loaded state and table (as the one above). Read over the bytes, a line
    /// at a time: a plain `R` line goes straight into the table (`StateCodec.plainRecord`), any other line
    /// is decoded alone and parsed strictly.
    public static func replay(_ bytes: [UInt8], over base: Replay, file: String) throws(StateError) -> Replay {
        // No whole first line (an empty journal, or its magic line torn): nothing was journaled.
        guard bytes.contains(10) else { return base }
        var result = base
        var table = result.table
        result.table = RecordTable([])  // one copy while replaying
        var fetches: [UInt32: String] = [:], fetchOrder: [UInt32] = []
        var appends: [String: (uidNext: UInt32, key: MessageKey?)] = [:], appendOrder: [String] = []
        var interrupted = false
        // A pair recorded settles the intents for its UID and its unique name (made only when one waits).
        func settle(uid: UInt32, unique: @autoclosure () -> String) {
            if uid != 0 { fetches[uid] = nil }
            if !appends.isEmpty, case let u = unique(), !u.isEmpty { appends[u] = nil }
        }
        // A new UIDVALIDITY drops every record (see `JournalEntry`).
        func setStatus(_ v: UInt32, _ next: UInt32, _ m: UInt64) {
            if result.state.uidValidity != 0 && v != result.state.uidValidity { table = RecordTable([]) }
            result.state.uidValidity = v; result.state.uidNext = next; result.state.highestModSeq = m
        }
        try bytes.withUnsafeBufferPointer { (all: UnsafeBufferPointer<UInt8>) throws(StateError) in
            var lines = ByteLines(all), n = 1
            guard let first = lines.next() else { return }
            guard first.elementsEqual(JournalEntry.magic.utf8) else {
                throw StateError(file: file, line: 1, problem: "not a mo-sync journal (expected \"\(JournalEntry.magic)\")")
            }
            while let line = lines.next() {
                n += 1
                interrupted = true
                // The common entries with a plain unique name, read as the state file's lines are: a pair
                // (`R`), a dropped pair (`D`), a fetch intent (`F`).
                let op = line.count > 2 && line[1] == UInt8(ascii: " ") ? line[0] : 0
                let rest = UnsafeBufferPointer(rebasing: line[min(2, line.count)...])
                if op == UInt8(ascii: "R"), let r = StateCodec.plainRecord(bytes: rest) {
                    let unique = UnsafeBufferPointer(rebasing: rest[r.start..<r.end])
                    table.upsert(uid: r.uid, uniqueBytes: unique, flags: r.flags)
                    settle(uid: r.uid, unique: String(decoding: unique, as: UTF8.self))
                    continue
                }
                if op == UInt8(ascii: "D") || op == UInt8(ascii: "F"), let p = StateCodec.plainPair(bytes: rest), p.end == rest.count {
                    let unique = String(decoding: UnsafeBufferPointer(rebasing: rest[p.start..<p.end]), as: UTF8.self)
                    if op == UInt8(ascii: "D") {
                        table.remove(uid: p.uid, unique: unique)
                    } else if fetches.updateValue(unique, forKey: p.uid) == nil {
                        fetchOrder.append(p.uid)
                    }
                    continue
                }
                let lineNumber = n
                let text = Substring(String(decoding: line, as: UTF8.self))
                let entry = try JournalEntry.parse(text) { StateError(file: file, line: lineNumber, problem: $0) }
                switch entry {
                case .status(let v, let next, let m):
                    setStatus(v, next, m)
                case .commit(let v, let next, let m, let stamp):
                    setStatus(v, next, m)
                    result.state.localStamp = stamp
                    fetches = [:]; fetchOrder = []; appends = [:]; appendOrder = []
                    interrupted = false
                case .fetchIntent(let uid, let unique):
                    if fetches.updateValue(unique, forKey: uid) == nil { fetchOrder.append(uid) }
                case .appendIntent(let unique, let uidNext, let key):
                    if appends.updateValue((uidNext, key), forKey: unique) == nil { appendOrder.append(unique) }
                case .record(let r):
                    table.upsert(r)
                    settle(uid: r.uid, unique: r.unique)
                case .drop(let uid, let unique):
                    table.remove(uid: uid, unique: unique)
                }
            }
        }
        result.table = table
        result.interrupted = interrupted
        result.pendingFetches = fetchOrder.compactMap { uid in fetches[uid].map { (uid, $0) } }
        result.pendingAppends = appendOrder.compactMap { u in appends[u].map { (u, $0.uidNext, $0.key) } }
        return result
    }
}
