import MoCore

/// The text form of the action journal (docs/action-journal.md):
///
///     mo-actions 1
///     ID ACTION STATE PAYLOAD account=NAME [KEY=VALUE ...] tries=N [next=T] [error=TEXT] at=T
///
/// One record per line, each a full snapshot of one action; the last complete line for an id wins.
/// Values are percent-escaped so a record never contains a space or a line end.
public enum ActionCodec {
    public static let magic = "mo-actions 1"

    /// The outcome of reading a journal: the actions in order of first appearance, and notes about
    /// torn lines that were ignored.
    public struct Replay: Sendable, Equatable {
        public var actions: [ActionRecord]
        /// `FILE:LINE: ...` notes (a torn last line), for the user.
        public var warnings: [String]
        /// Bytes up to and including the last line end: what a writer keeps before appending.
        public var completeLength: Int
    }

    /// One record as a line, with its line end.
    public static func render(_ r: ActionRecord) -> String {
        var parts = [
            r.id, r.kind.rawValue, r.state.rawValue, r.payload.map(PercentEscape.escape) ?? "-",
            "account=" + PercentEscape.escape(r.account)
        ]
        for key in r.fields.keys.sorted() { parts.append(key + "=" + PercentEscape.escape(r.fields[key]!)) }
        parts.append("tries=\(r.tries)")
        if let next = r.next { parts.append("next=\(next)") }
        if let error = r.error { parts.append("error=" + PercentEscape.escape(error)) }
        parts.append("at=\(r.time)")
        return parts.joined(separator: " ") + "\n"
    }

    /// Replays `bytes` read from `file`. A last line without a line end is a record torn by a crash: it
    /// was never made durable, so its act never began; it is ignored with a warning. Anything else that
    /// is not a valid record is an error naming `file:line`.
    public static func replay(_ bytes: [UInt8], file: String) throws(JournalError) -> Replay {
        var actions: [ActionRecord] = []
        var index: [String: Int] = [:]
        var warnings: [String] = []
        var start = 0
        var lineNumber = 0
        var completeLength = 0
        while start < bytes.count {
            lineNumber += 1
            guard let lf = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
                warnings.append(
                    "\(file):\(lineNumber): ignoring a torn last record (\(bytes.count - start) bytes without a line end, left by a run that stopped while writing it)"
                )
                break
            }
            let line = String(decoding: bytes[start..<lf], as: UTF8.self)
            completeLength = lf + 1
            start = lf + 1
            if lineNumber == 1 {
                guard line == magic else {
                    let problem =
                        line.hasPrefix("mo-actions ")
                        ? "journal format \"\(line)\" is not understood by this version (expected \"\(magic)\")"
                        : "not an action journal (the first line is not \"\(magic)\")"
                    throw JournalError(file: file, line: 1, problem: problem, kind: .data)
                }
                continue
            }
            let record = try parse(line, file: file, line: lineNumber)
            if let i = index[record.id] {
                guard actions[i].kind == record.kind else {
                    throw JournalError(
                        file: file, line: lineNumber,
                        problem: "record for \(record.id) says \(record.kind.rawValue), earlier ones \(actions[i].kind.rawValue)",
                        kind: .data)
                }
                actions[i] = record
            } else {
                index[record.id] = actions.count
                actions.append(record)
            }
        }
        return Replay(actions: actions, warnings: warnings, completeLength: completeLength)
    }

    /// Parses one line (without its line end).
    static func parse(_ line: String, file: String, line number: Int) throws(JournalError) -> ActionRecord {
        func fail(_ problem: String) -> JournalError {
            JournalError(file: file, line: number, problem: problem, kind: .data)
        }
        let parts = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 4 else { throw fail("not a record: \"\(line.prefix(80))\"") }
        let id = parts[0]
        guard isValidID(id) else { throw fail("bad action id \"\(id.prefix(40))\"") }
        guard let kind = ActionKind(rawValue: parts[1]) else { throw fail("unknown action \"\(parts[1].prefix(40))\"") }
        guard let state = ActionState(rawValue: parts[2]) else { throw fail("unknown state \"\(parts[2].prefix(40))\"") }
        guard ActionState.allowed(for: kind).contains(state) else {
            throw fail("state \(state.rawValue) is not a state of a \(kind.rawValue) action")
        }
        var payload: String?
        if parts[3] != "-" {
            guard let p = PercentEscape.unescape(parts[3]), isSafePayload(p) else {
                throw fail("bad payload reference \"\(parts[3].prefix(80))\"")
            }
            payload = p
        }
        if (kind == .send || kind == .append) && payload == nil { throw fail("a \(kind.rawValue) action needs a message file") }

        var values: [String: String] = [:]
        for part in parts.dropFirst(4) {
            guard let eq = part.firstIndex(of: "="), eq != part.startIndex else { throw fail("bad field \"\(part.prefix(40))\"") }
            let key = String(part[..<eq])
            guard let value = PercentEscape.unescape(String(part[part.index(after: eq)...])) else {
                throw fail("bad escape in field \(key)")
            }
            guard values[key] == nil else { throw fail("field \(key) appears twice") }
            values[key] = value
        }
        let keys = ActionRecord.fieldKeys(kind)
        for key in values.keys where !keys.allowed.contains(key) && !ActionRecord.commonKeys.contains(key) {
            throw fail("unknown field \"\(key)\" for a \(kind.rawValue) action")
        }
        for key in keys.required.union(["account", "tries", "at"]) where values[key] == nil {
            throw fail("missing field \(key)")
        }
        func int(_ key: String) throws(JournalError) -> Int? {
            guard let s = values[key] else { return nil }
            guard let v = Int(s), v >= 0 else { throw fail("field \(key) is not a number: \"\(s.prefix(20))\"") }
            return v
        }
        let tries = try int("tries")!
        let next = try int("next")
        let time = try int("at")!
        if kind == .send {
            // Journals written before `since` existed: the record's own time, so no message expires early.
            values["since"] = String(try int("since") ?? time)
            _ = try int("due")
        }
        var fields = values
        for key in ActionRecord.commonKeys { fields[key] = nil }
        return ActionRecord(
            id: id, kind: kind, state: state, payload: payload, account: values["account"]!,
            fields: fields, tries: tries, next: next, error: values["error"], time: time)
    }

    /// Ids are made by `ActionJournal.newID`: lowercase letters, digits, "." and "-".
    static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 64
            && id.utf8.allSatisfy {
                ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ASCII.isDigit($0)
                    || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
            }
    }

    /// A payload stays inside the state directory: relative, no "..", no empty components.
    static func isSafePayload(_ p: String) -> Bool {
        !p.hasPrefix("/") && !p.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty || $0 == ".." || $0 == "." }
    }
}
