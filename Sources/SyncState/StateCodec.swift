#if canImport(Glibc)
    import Glibc
#endif
import Maildir
import MoCore
import SyncEngine

/// The state file, version 1. Plain text, one fact per line:
///
///     mo-sync-state 1
///     mailbox INBOX
///     uidvalidity 1795306901
///     uidnext 120
///     highestmodseq 4567
///     localstamp 1700000000123456789 1700000000123456789   (optional: cur/ and new/ mtimes, ns)
///
///     7 1700000000.M1P1Q1R1.host FS
///     0 1700000001.M2P1Q2R9.host S      (local-only: uid 0)
///     9 - S                             (server-only: unique "-")
///
/// Unique names and the mailbox are %-escaped where they hold spaces, control bytes or '%'; a unique
/// name that is literally "-" is written "%2D". Flags are letters in ASCII order, "-" for none.
/// Reading is strict: anything unexpected is an error naming file:line; nothing is skipped.
public enum StateCodec {
    public static let magic = "mo-sync-state 1"

    public static func render(_ state: FolderState) -> [UInt8] {
        var out = renderHeader(state)
        out.reserveCapacity(out.utf8.count + state.records.count * 48)
        for r in state.records { out += recordLine(r) }
        return Array(out.utf8)
    }

    /// `state`'s header with the records of `table` (not `state.records`), written without making a
    /// string per record.
    public static func render(_ state: FolderState, table: RecordTable) -> [UInt8] {
        var out = Array(renderHeader(state).utf8)
        out.reserveCapacity(out.count + table.count * 64)
        table.forEachSorted { uid, unique, flags in
            out += Array(String(uid).utf8)
            out.append(UInt8(ascii: " "))
            if unique.isEmpty {
                out.append(UInt8(ascii: "-"))
            } else if unique.count == 1 && unique.first == UInt8(ascii: "-")
                || unique.contains(where: PercentEscape.needsEscape)
            {
                out += Array(uniqueField(String(decoding: unique, as: UTF8.self)).utf8)
            } else {
                out += unique
            }
            out.append(UInt8(ascii: " "))
            out += Array(FlagField.render(flags).utf8)
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    static func renderHeader(_ state: FolderState) -> String {
        var out = "\(magic)\nmailbox \(PercentEscape.escape(state.mailbox))\nuidvalidity \(state.uidValidity)\n"
        out += "uidnext \(state.uidNext)\nhighestmodseq \(state.highestModSeq)\n"
        if let stamp = state.localStamp { out += "localstamp \(stamp.cur) \(stamp.new)\n" }
        return out + "\n"
    }

    static func recordLine(_ r: SyncRecord) -> String {
        "\(r.uid) \(uniqueField(r.unique)) \(FlagField.render(r.flags))\n"
    }

    public static func parse(_ bytes: [UInt8], file: String) throws(StateError) -> FolderState {
        try parse(bytes, file: file, headerOnly: false)
    }

    /// The header and only the records whose UID is in `uids`. Of the other lines only the UID is checked
    /// (the next full load checks the rest).
    public static func parse(_ bytes: [UInt8], file: String, keepingUIDs uids: Set<UInt32>) throws(StateError) -> FolderState {
        try parse(bytes, file: file, headerOnly: false, keep: { uids.contains($0) })
    }

    /// The header, and the records straight into a table (`state.records` left empty): a large folder's
    /// records are never held twice, as strings in an array and in the table.
    public static func parseIntoTable(_ bytes: [UInt8], file: String) throws(StateError) -> (FolderState, RecordTable) {
        try parseIntoTable(file: file, sizeHint: bytes.count, chunks: once(bytes))
    }

    /// A chunk source that hands `bytes` over whole, then ends (the parsers of a file already read).
    private static func once(_ bytes: [UInt8]) -> () throws(StateError) -> [UInt8]? {
        var given: [UInt8]? = bytes
        return { () throws(StateError) -> [UInt8]? in
            defer { given = nil }
            return given
        }
    }

    /// `parseIntoTable` of a file read in chunks (`next`: the next bytes, nil at the end; `sizeHint`: the
    /// file's size): besides the table only a chunk and a line are held, never the whole file.
    public static func parseIntoTable(
        file: String, sizeHint: Int, chunks next: () throws(StateError) -> [UInt8]?
    ) throws(StateError) -> (FolderState, RecordTable) {
        var table = RecordTable([])
        table.reserveCapacity(more: sizeHint / 56, nameBytes: 56)  // lines are longer than that; names shorter
        let header = try parse(
            chunks: next, file: file, headerOnly: false, sink: { table.upsert($0) },
            plainSink: { table.upsert(uid: $0, uniqueBytes: $1, flags: $2) })
        return (header, table)
    }

    /// The common record line, "UID UNIQUE FLAGS" with a plain unique name (printable ASCII, no `%`
    /// escape, no `/`), read from its bytes without making strings: the UID, the unique name's byte range
    /// and the flags; nil for any other line, which the strict parser then judges (so both accept exactly
    /// the same lines).
    static func plainRecord(bytes b: UnsafeBufferPointer<UInt8>) -> (uid: UInt32, start: Int, end: Int, flags: MaildirFlags)? {
        guard let p = plainPair(bytes: b), p.end + 1 < b.count else { return nil }
        var flags = MaildirFlags()
        if !(b.count - p.end == 2 && b[p.end + 1] == UInt8(ascii: "-")) {
            for k in (p.end + 1)..<b.count {
                guard let f = MaildirFlags(letter: b[k]), !flags.contains(f) else { return nil }
                flags.insert(f)
            }
        }
        return (p.uid, p.start, p.end, flags)
    }

    /// "UID UNIQUE" at the start of `b`, the unique name plain (as in `plainRecord`): the UID and the
    /// name's byte range, which ends at a space or at the end of `b`; nil otherwise.
    static func plainPair(bytes b: UnsafeBufferPointer<UInt8>) -> (uid: UInt32, start: Int, end: Int)? {
        let space = UInt8(ascii: " ")
        guard let uid = leadingUID(b), let s1 = b.firstIndex(of: space) else { return nil }
        let start = s1 + 1
        var end = start
        while end < b.count, b[end] != space {
            let c = b[end]
            guard c > 0x20 && c < 0x7F && c != UInt8(ascii: "%") && c != UInt8(ascii: "/") else { return nil }
            end += 1
        }
        guard end > start, !(end - start == 1 && b[start] == UInt8(ascii: "-")) else { return nil }
        return (uid, start, end)
    }

    /// The header alone (records left empty): enough to decide whether a folder changed at all.
    public static func parseHeader(_ bytes: [UInt8], file: String) throws(StateError) -> FolderState {
        try parse(bytes, file: file, headerOnly: true)
    }

    static func parse(
        _ bytes: [UInt8], file: String, headerOnly: Bool,
        keep: ((UInt32) -> Bool)? = nil, sink: ((SyncRecord) -> Void)? = nil,
        plainSink: ((UInt32, UnsafeBufferPointer<UInt8>, MaildirFlags) -> Void)? = nil
    ) throws(StateError) -> FolderState {
        try parse(chunks: once(bytes), file: file, headerOnly: headerOnly, keep: keep, sink: sink, plainSink: plainSink)
    }

    /// The parser, over the file's bytes as `next` hands them (nil at the end): a line may straddle two
    /// chunks; whatever the chunks, the same lines are read, with the same numbers and errors.
    static func parse(
        chunks next: () throws(StateError) -> [UInt8]?, file: String, headerOnly: Bool,
        keep: ((UInt32) -> Bool)? = nil, sink: ((SyncRecord) -> Void)? = nil,
        plainSink: ((UInt32, UnsafeBufferPointer<UInt8>, MaildirFlags) -> Void)? = nil
    ) throws(StateError) -> FolderState {
        // The header: read until its blank line is in (or the file ends), then its lines as a string.
        var buffer: [UInt8] = [], ended = false
        var bodyStart = headerEnd(buffer)
        while bodyStart == buffer.count && !ended {
            if let more = try next() { buffer += more } else { ended = true }
            bodyStart = headerEnd(buffer)
        }
        var lines = LineReader(Array(buffer[..<bodyStart]))
        func fail(_ line: Int, _ problem: String) -> StateError { StateError(file: file, line: line, problem: problem) }

        guard let (n1, first) = lines.next(), first == magic else {
            throw fail(1, "not a mo-sync state file (expected \"\(magic)\")")
        }
        _ = n1
        var state = FolderState(mailbox: "")
        var seen = Set<Substring>()
        // Header: "key value" lines up to the blank line.
        while true {
            guard let (n, line) = lines.next() else { throw fail(lines.lineNumber, "missing blank line after the header") }
            if line.isEmpty { break }
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            if parts.first == "localstamp" {
                guard parts.count == 3, let cur = Int64(parts[1]), let new = Int64(parts[2]) else {
                    throw fail(n, "localstamp needs two numbers, found \"\(line)\"")
                }
                guard seen.insert("localstamp").inserted else { throw fail(n, "localstamp given twice") }
                state.localStamp = LocalStamp(cur: cur, new: new)
                continue
            }
            guard parts.count == 2 else { throw fail(n, "expected \"key value\", found \"\(line)\"") }
            let key = parts[0], value = parts[1]
            guard seen.insert(key).inserted else { throw fail(n, "\(key) given twice") }
            switch key {
            case "mailbox":
                guard let name = PercentEscape.unescape(value) else { throw fail(n, "bad escape in mailbox name") }
                state.mailbox = name
            case "uidvalidity":
                guard let v = UInt32(value) else { throw fail(n, "uidvalidity \"\(value)\" is not a number") }
                state.uidValidity = v
            case "uidnext":
                guard let v = UInt32(value) else { throw fail(n, "uidnext \"\(value)\" is not a number") }
                state.uidNext = v
            case "highestmodseq":
                guard let v = UInt64(value) else { throw fail(n, "highestmodseq \"\(value)\" is not a number") }
                state.highestModSeq = v
            default:
                throw fail(n, "unknown header key \"\(key)\"")
            }
        }
        for key in ["mailbox", "uidvalidity", "uidnext", "highestmodseq"] where !seen.contains(Substring(key)) {
            throw fail(lines.lineNumber, "header lacks \(key)")
        }
        if headerOnly { return state }
        // The records, over the file's own bytes: one line at a time, no string made for a plain record
        // (the hot loop of loading a large folder). Any other line is decoded alone and judged by the strict
        // parser, as it would be in the whole file's string (no UTF-8 sequence spans a line feed). A line
        // left incomplete at a chunk's end is carried into the next.
        var lineNumber = lines.lineNumber
        var pos = bodyStart
        while true {
            try buffer.withUnsafeBufferPointer { (all: UnsafeBufferPointer<UInt8>) throws(StateError) in
                var byteLines = ByteLines(all, from: pos)
                defer { pos = byteLines.position }
                while let line = byteLines.next() {
                    lineNumber += 1
                    // A partial load reads only the UID of the other lines (the next full load checks them).
                    if let keep, let uid = leadingUID(line), !keep(uid) { continue }
                    if let plainSink, let r = plainRecord(bytes: line) {
                        plainSink(r.uid, UnsafeBufferPointer(rebasing: line[r.start..<r.end]), r.flags)
                        continue
                    }
                    let n = lineNumber
                    let record = try parseRecord(Substring(String(decoding: line, as: UTF8.self)), fail: { fail(n, $0) })
                    if let sink { sink(record) } else if keep?(record.uid) ?? true { state.records.append(record) }
                }
            }
            guard !ended, let more = try next() else { break }
            buffer = Array(buffer[pos...]) + more
            pos = 0
        }
        if pos < buffer.count {
            let torn = String(decoding: buffer[pos...], as: UTF8.self)
            throw fail(lineNumber + 1, "incomplete last line \"\(torn)\" (the file was cut short)")
        }
        return state
    }

    /// The offset just past the header's blank line (the first "\n\n"), or the end when there is none.
    private static func headerEnd(_ bytes: [UInt8]) -> Int {
        var i = 0
        while i + 1 < bytes.count {
            if bytes[i] == 10 && bytes[i + 1] == 10 { return i + 2 }
            i += 1
        }
        return bytes.count
    }

    /// The decimal number before the first space, without allocating; nil if there is none.
    static func leadingUID<Bytes: Sequence<UInt8>>(_ line: Bytes) -> UInt32? {
        var uid: UInt32 = 0, digits = 0
        for b in line {
            if b == UInt8(ascii: " ") { return digits > 0 ? uid : nil }
            guard ASCII.isDigit(b), digits < 10 else { return nil }
            let (m, o1) = uid.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt32(b - UInt8(ascii: "0")))
            if o1 || o2 { return nil }
            uid = a; digits += 1
        }
        return nil
    }

    static func parseRecord(_ line: Substring, fail: (String) -> StateError) throws(StateError) -> SyncRecord {
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw fail("expected \"UID UNIQUE FLAGS\", found \"\(line)\"") }
        guard let uid = UInt32(parts[0]) else { throw fail("UID \"\(parts[0])\" is not a number") }
        guard let unique = parseUniqueField(parts[1]) else { throw fail("bad unique name \"\(parts[1])\"") }
        guard let flags = FlagField.parse(parts[2]) else { throw fail("bad flags \"\(parts[2])\"") }
        if uid == 0 && unique.isEmpty { throw fail("a record needs a UID or a unique name") }
        return SyncRecord(uid: uid, unique: unique, flags: flags)
    }

    static func uniqueField(_ unique: String) -> String {
        unique.isEmpty ? "-" : unique == "-" ? "%2D" : PercentEscape.escape(unique)
    }

    static func parseUniqueField(_ field: Substring) -> String? {
        if field == "-" { return "" }
        guard !field.isEmpty, let u = PercentEscape.unescape(field), !u.contains("/") else { return nil }
        return u
    }
}

/// The LF-terminated lines of a buffer from `position` on, without their LF and without making strings
/// (the state file's records, the journal's entries). A last line without its LF is never returned:
/// `position` is then where it starts, for the caller to judge or carry into the next chunk.
struct ByteLines {
    let all: UnsafeBufferPointer<UInt8>
    private(set) var position: Int

    init(_ all: UnsafeBufferPointer<UInt8>, from position: Int = 0) {
        self.all = all
        self.position = position
    }

    mutating func next() -> UnsafeBufferPointer<UInt8>? {
        guard position < all.count, let nl = memchr(all.baseAddress! + position, 10, all.count - position) else { return nil }
        let end = UnsafeRawPointer(nl) - UnsafeRawPointer(all.baseAddress!)
        defer { position = end + 1 }
        return UnsafeBufferPointer(rebasing: all[position..<end])
    }
}

/// Splits bytes into LF-terminated lines, numbering them from 1. A last line without LF is not returned
/// as a line: it is kept in `tornTail` for the caller to judge.
struct LineReader {
    private let text: Substring
    private var index: Substring.Index
    private(set) var lineNumber = 0
    private(set) var tornTail: Substring?

    init(_ bytes: [UInt8]) {
        text = Substring(String(decoding: bytes, as: UTF8.self))
        index = text.startIndex
    }

    mutating func next() -> (Int, Substring)? {
        guard index < text.endIndex else { return nil }
        // Search bytes, not Characters: "\r\n" is one Character and would hide the LF. memchr over the
        // string's own UTF-8 where it is contiguous (always, for a string made from bytes).
        let rest = text[index...].utf8
        let offset: Int?? = rest.withContiguousStorageIfAvailable { buf in
            buf.baseAddress.flatMap { base in memchr(base, 10, buf.count).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } }
        }
        let found: Substring.Index? =
            switch offset {
            case .some(let o): o.map { rest.index(rest.startIndex, offsetBy: $0) }
            case .none: rest.firstIndex(of: UInt8(ascii: "\n"))
            }
        guard let nl = found else {
            tornTail = text[index...]
            index = text.endIndex
            return nil
        }
        let line = text[index..<nl]
        index = text.index(after: nl)
        lineNumber += 1
        return (lineNumber, line)
    }
}
