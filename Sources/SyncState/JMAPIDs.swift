#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// `<state>/<account>/jmap-ids`: a JMAP account's ids and states in the sync core's vocabulary, which is
/// IMAP's (a message is a 32-bit UID under a UIDVALIDITY, a change mark a 64-bit HIGHESTMODSEQ). JMAP's
/// Email ids and state strings are opaque; this file numbers them, append-only:
///
///     mo-jmap-ids 1 1795306901
///     i 1 Mf0a1b2c3d4
///     i 2 M7d8e9f001122
///     s 1 1043
///     i 3 Maa1100ff
///     s 2 1047
///
/// - The header's second number is the **epoch**, the UIDVALIDITY of every folder of the account: chosen
///   when the file is made. A lost file makes a new epoch, so the core never reads old numbers as new ids:
///   it pairs its files again by key (Message-ID and size), downloading nothing it has.
/// - `i N ID`: the Email `ID` is message `N`. Numbers start at 1 and only grow; an id is numbered once.
/// - `s K STATE`: the account's Email state `STATE` (percent-escaped) is mark `K`, the HIGHESTMODSEQ the
///   folders' state files keep. Marks start at 1 and only grow.
///
/// Invariants: a number is appended, and durable, before anything that names it is committed (the folders'
/// journals and state files); nothing is rewritten or removed (ids of destroyed Emails keep their numbers,
/// about 20 bytes each). Replay is strict: any line that does not read as written, a number out of order,
/// an id numbered twice, is an error naming the file and line. A torn last line (a crash mid-append) is cut
/// by the next append (`appendRecords`). The account lock makes mo-sync the one writer.
///
/// A run that finds the account's state unchanged reads only the last line (`lastState`), never the ids.
public struct JMAPIDs: Sendable {
    public static let fileName = "jmap-ids"
    static let magic = "mo-jmap-ids 1"

    public let path: String
    public let epoch: UInt32
    private var numbers: [String: UInt32] = [:]
    private var ids: [String] = [""]  // ids[n] is message n's id; 0 is no message
    private var states: [(mark: UInt64, state: String)] = []

    public var lastNumber: UInt32 { UInt32(ids.count - 1) }
    /// The latest state and its mark, nil before the first.
    public var latest: (mark: UInt64, state: String)? { states.last }

    /// The account's file in `directory`: read whole, or made with a new epoch when there is none.
    public static func open(in directory: String, newEpoch: () -> UInt32 = { UInt32(truncatingIfNeeded: WallClock.now()) })
        throws(StateError)
        -> JMAPIDs
    {
        let path = directory + "/" + fileName
        switch readWholeFile(path) {
        case .success(let bytes): return try parse(bytes, path: path)
        case .failure(let e) where e.code == ENOENT:
            var epoch = newEpoch()
            if epoch == 0 { epoch = 1 }
            _ = makeDirectories(directory)
            if let failure = appendRecords(path, header: "\(magic) \(epoch)", text: "") {
                throw StateError(file: path, cannot: failure.operation, code: failure.code)
            }
            return JMAPIDs(path: path, epoch: epoch)
        case .failure(let e): throw StateError(file: path, cannot: "read", code: e.code)
        }
    }

    /// The mark and state of the file's last line when it is an `s` line (a run that changed nothing needs no
    /// more); nil otherwise, or when there is no file.
    public static func lastState(in directory: String) -> (epoch: UInt32, mark: UInt64, state: String)? {
        let path = directory + "/" + fileName
        guard case .success(let line?) = lastLine(ofFile: path), line.hasPrefix("s "),
            let header = try? headerLine(path),
            let (mark, state) = try? stateLine(Substring(line), fail: { _ in StateError(file: path, problem: "") })
        else { return nil }
        return (header, mark, state)
    }

    private init(path: String, epoch: UInt32) {
        self.path = path
        self.epoch = epoch
    }

    /// Message `n`'s Email id.
    public func id(of n: UInt32) -> String? { n >= 1 && Int(n) < ids.count ? ids[Int(n)] : nil }
    /// The number of an Email id, nil when it has none yet.
    public func number(of id: String) -> UInt32? { numbers[id] }
    /// The mark of a state seen before, nil for one never recorded.
    public func mark(of state: String) -> UInt64? { states.last { $0.state == state }?.mark }
    /// The state of mark `k`.
    public func state(of mark: UInt64) -> String? { states.last { $0.mark == mark }?.state }

    /// Numbers `newIDs` (those without a number) and records `state` (when it is not the latest), in one
    /// durable append. Returns the state's mark.
    @discardableResult
    public mutating func record(newIDs: some Sequence<String>, state: String?) throws(StateError) -> UInt64? {
        var text = ""
        var next = lastNumber
        var added: [String] = []
        var seen: Set<String> = []
        for id in newIDs where numbers[id] == nil && seen.insert(id).inserted {
            guard Self.isID(id) else {
                throw StateError(
                    file: path, problem: "the server sent an unusable Email id \(quotedForMessage(id))", kind: .protocolViolation)
            }
            guard next < UInt32.max else { throw StateError(file: path, problem: "more than \(UInt32.max) Email ids") }
            next += 1
            added.append(id)
            text += "i \(next) \(id)\n"
        }
        var mark = latest?.mark
        if let state, state != latest?.state {
            let k = (latest?.mark ?? 0) + 1
            text += "s \(k) \(PercentEscape.escape(state))\n"
            mark = k
        }
        guard !text.isEmpty else { return mark }
        if let failure = appendRecords(path, header: "\(Self.magic) \(epoch)", text: text) {
            throw StateError(file: path, cannot: failure.operation, code: failure.code)
        }
        for id in added {
            ids.append(id)
            numbers[id] = UInt32(ids.count - 1)
        }
        if let state, let mark, state != latest?.state { states.append((mark, state)) }
        return mark
    }

    /// RFC 8620 §1.2: 1 to 255 bytes of the URL-safe base64 alphabet.
    public static func isID(_ s: String) -> Bool {
        (1...255).contains(s.utf8.count)
            && s.utf8.allSatisfy { ASCII.isDigit($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 0x2D || $0 == 0x5F }
    }

    // MARK: Replay

    static func parse(_ bytes: [UInt8], path: String) throws(StateError) -> JMAPIDs {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() } else if !lines.isEmpty { lines.removeLast() }  // a torn last line
        guard let first = lines.first, let epoch = epoch(String(decoding: first, as: UTF8.self)) else {
            throw StateError(file: path, line: 1, problem: "not a jmap-ids file (no \"\(magic) EPOCH\" line)")
        }
        var file = JMAPIDs(path: path, epoch: epoch)
        file.ids.reserveCapacity(lines.count)
        file.numbers.reserveCapacity(lines.count)
        for (i, raw) in lines.enumerated().dropFirst() {
            func fail(_ problem: String) -> StateError { StateError(file: path, line: i + 1, problem: problem) }
            if raw.starts(with: [UInt8(ascii: "i"), 0x20]) {
                // Read from the bytes, one String per line: every run with changes reads the whole file.
                guard let (n, id) = numberedID(raw) else { throw fail("not \"i NUMBER ID\"") }
                guard n == file.lastNumber + 1 else { throw fail("number \(n) out of order (after \(file.lastNumber))") }
                guard file.numbers.updateValue(n, forKey: id) == nil else { throw fail("the id \(id) is numbered twice") }
                file.ids.append(id)
            } else if raw.starts(with: [UInt8(ascii: "s"), 0x20]) {
                let (mark, state) = try stateLine(Substring(String(decoding: raw, as: UTF8.self)), fail: fail)
                guard mark == (file.latest?.mark ?? 0) + 1 else { throw fail("mark \(mark) out of order") }
                file.states.append((mark, state))
            } else {
                throw fail("neither an \"i\" nor an \"s\" line")
            }
        }
        return file
    }

    /// `i N ID` read as written: `N` decimal digits within UInt32, `ID` as `isID` has it, nothing more.
    private static func numberedID(_ line: ArraySlice<UInt8>) -> (UInt32, String)? {
        var at = line.startIndex + 2
        var n: UInt32 = 0
        let digits = at
        while at < line.endIndex, ASCII.isDigit(line[at]) {
            let (times, o1) = n.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt32(line[at] - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            n = sum
            at += 1
        }
        guard at > digits, at < line.endIndex, line[at] == 0x20 else { return nil }
        let id = String(decoding: line[(at + 1)...], as: UTF8.self)
        return isID(id) ? (n, id) : nil
    }

    private static func epoch(_ header: String) -> UInt32? {
        guard header.hasPrefix(magic + " "), let e = UInt32(header.dropFirst(magic.count + 1)), e > 0 else { return nil }
        return e
    }

    private static func headerLine(_ path: String) throws -> UInt32 {
        guard case .success(let reader) = ChunkReader.open(path, chunk: 256), case .success(let bytes?) = reader.next(),
            let end = bytes.firstIndex(of: UInt8(ascii: "\n")), let e = epoch(String(decoding: bytes[..<end], as: UTF8.self))
        else { throw StateError(file: path, problem: "no header") }
        return e
    }

    private static func stateLine(_ line: Substring, fail: (String) -> StateError) throws(StateError) -> (UInt64, String) {
        let f = line.split(separator: " ", omittingEmptySubsequences: false)
        guard f.count == 3, let mark = UInt64(f[1]), mark > 0, let state = PercentEscape.unescape(f[2]) else {
            throw fail("not \"s MARK STATE\"")
        }
        return (mark, state)
    }
}
