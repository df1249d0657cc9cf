#if canImport(Glibc)
    import Glibc
#endif
import Maildir
import MoCore

/// What `mo-index move`, `flag`, `tag` and `snooze` changed, so that `mo-index undo` can change it back
/// (docs/action-journal.md, "The triage log"):
///
///     mo-triage 1
///     tq1x2a-3k9d0a1b begin at=1795308806 command=move%20from:bob%20@trash
///     tq1x2a-3k9d0a1b file from=/home/me/Mail/INBOX to=/home/me/Mail/Trash unique=1795.M1P2.host
///     tq1x2a-3k9d0a1b file from=/home/me/Mail/INBOX to=/home/me/Mail/INBOX unique=1796.M3P4.host flags+=F
///     tq1x2a-3k9d0a1b tag msgid=a@example.com add=work remove=todo
///     tq1x2a-3k9d0a1b end at=1795308806
///     tq1x2a-3k9d0a1b undone at=1795309000
///
/// - A command's `begin` and every change it will make are appended (one write, fsynced) before the first
///   file is touched; `end` after the last. A command without `end` was cut short: undo reverts what it
///   finds done (a change not made finds nothing to revert).
/// - Only real changes are written: a flag the file had already, a tag the message carried, is not.
/// - `file`: the message moved from folder `from` to `to` (the same for a change in place), keyword `kw+`
///   and `kw-` (lists) and flag letters `flags+` and `flags-` changed with it. Undo finds the file by its
///   unique name in `to` and makes the inverse change (`KeywordMove`).
/// - `tag`: tags added and taken off a message (undo: the inverse, through `MessageTagger`).
/// - Values are percent-escaped (`PercentEscape`), list items also their `,`.
/// - Strict replay: a torn last line (a crash while appending) is ignored; anything else unreadable is
///   an error naming `FILE:LINE`. Bounded: past 120 commands it is rewritten (`.new`, fsync, rename) with
///   the last 100 of those younger than 30 days.
public final class TriageLog {
    public static let magic = "mo-triage 1"
    public static let fileName = "triage.journal"
    public static let keep = 100, compactAt = 120, maxAge = 30 * 86_400

    public enum Change: Sendable, Equatable {
        case file(from: String, to: String, unique: String, change: KeywordMove.Change)
        case tag(messageID: String, add: [String], remove: [String])
    }

    public struct Command: Sendable, Equatable {
        public var id: String
        public var time: Int
        public var command: String
        public var changes: [Change] = []
        public var ended = false
        public var undone = false
        /// When `end` and `undone` were written (kept through compaction).
        public var endTime: Int?
        public var undoneTime: Int?
    }

    public struct Failure: MoError {
        public let file: String
        public let line: Int?
        public let problem: String
        public var kind: ErrorKind
        public var description: String { file + (line.map { ":\($0)" } ?? "") + ": " + problem }
    }

    public let path: String
    var lockPath: String { path + ".lock" }

    public init(path: String) { self.path = path }

    // MARK: - Writing

    /// Records a command and all its changes; returns its id. Nothing is written for no change.
    @discardableResult
    public func begin(_ command: String, changes: [Change], now: Int = WallClock.now()) throws -> String? {
        guard !changes.isEmpty else { return nil }
        let id = timeOrderedID(now: now)
        var lines = [id + " begin at=\(now) command=" + PercentEscape.escape(command)]
        lines += changes.map { render($0, id: id) }
        try append(lines, compactFirst: true, now: now)
        return id
    }

    public func end(_ id: String, now: Int = WallClock.now()) throws { try append([id + " end at=\(now)"]) }
    public func markUndone(_ id: String, now: Int = WallClock.now()) throws { try append([id + " undone at=\(now)"]) }

    func render(_ c: Change, id: String) -> String {
        func list(_ items: some Sequence<String>) -> String {
            items.sorted().map { PercentEscape.escape($0) { PercentEscape.needsEscape($0) || $0 == UInt8(ascii: ",") } }.joined(
                separator: ",")
        }
        switch c {
        case .file(let from, let to, let unique, let ch):
            var s = "\(id) file from=\(PercentEscape.escape(from)) to=\(PercentEscape.escape(to)) unique=\(PercentEscape.escape(unique))"
            if !ch.addKeywords.isEmpty { s += " kw+=" + list(ch.addKeywords) }
            if !ch.removeKeywords.isEmpty { s += " kw-=" + list(ch.removeKeywords) }
            if !ch.addFlags.isEmpty { s += " flags+=" + ch.addFlags.letters }
            if !ch.removeFlags.isEmpty { s += " flags-=" + ch.removeFlags.letters }
            return s
        case .tag(let messageID, let add, let remove):
            var s = "\(id) tag msgid=\(PercentEscape.escape(messageID))"
            if !add.isEmpty { s += " add=" + list(add) }
            if !remove.isEmpty { s += " remove=" + list(remove) }
            return s
        }
    }

    private func append(_ lines: [String], compactFirst: Bool = false, now: Int = WallClock.now()) throws {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if let e = makeDirectories(directory) {
            throw Failure(file: directory, line: nil, problem: "cannot create: \(errnoDescription(e))", kind: .localIO)
        }
        let lock: FileLock?
        do { lock = try FileLock(path: lockPath, wait: 30) } catch {
            throw Failure(file: lockPath, line: nil, problem: error.description, kind: .localIO)
        }
        guard let lock else {
            throw Failure(file: lockPath, line: nil, problem: "held for 30 s by pid \(FileLock.holder(lockPath))", kind: .busy)
        }
        defer { withExtendedLifetime(lock) {} }
        if compactFirst { try compactIfLong(now: now) }
        if let (operation, e) = appendRecords(path, header: Self.magic, text: lines.map { $0 + "\n" }.joined()) {
            throw Failure(file: path, line: nil, problem: "cannot \(operation): \(errnoDescription(e))", kind: .localIO)
        }
    }

    /// Past `compactAt` commands: the last `keep` younger than `maxAge`, rewritten atomically.
    private func compactIfLong(now: Int) throws {
        let commands = try load()
        guard commands.count > Self.compactAt else { return }
        let kept = commands.suffix(Self.keep).filter { now - $0.time < Self.maxAge }
        var text = Self.magic + "\n"
        for c in kept {
            text += c.id + " begin at=\(c.time) command=" + PercentEscape.escape(c.command) + "\n"
            text += c.changes.map { render($0, id: c.id) + "\n" }.joined()
            if c.ended { text += c.id + " end at=\(c.endTime ?? c.time)\n" }
            if c.undone { text += c.id + " undone at=\(c.undoneTime ?? c.time)\n" }
        }
        if case .failure(let e) = replaceFileAtomically(path, Array(text.utf8)) {
            throw Failure(file: path, line: nil, problem: "cannot rewrite: \(e)", kind: .localIO)
        }
    }

    // MARK: - Reading

    /// The commands, oldest first; none when there is no log.
    public func load() throws -> [Command] {
        let bytes: [UInt8]
        switch readWholeFile(path) {
        case .success(let b): bytes = b
        case .failure(let e) where e.code == ENOENT: return []
        case .failure(let e): throw Failure(file: path, line: nil, problem: "cannot read: \(e)", kind: .localIO)
        }
        var commands: [Command] = [], index: [String: Int] = [:]
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        lines.removeLast()  // after the last line end: nothing, or a line torn by a crash (never acted on)
        for (i, line) in lines.enumerated() {
            func fail(_ problem: String) -> Failure { Failure(file: path, line: i + 1, problem: problem, kind: .data) }
            if i == 0 {
                guard line == Self.magic else { throw fail("not a triage log (expected \"\(Self.magic)\")") }
                continue
            }
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count >= 2 else { throw fail("not a record") }
            // Values unescaped; lists split at their "," first (an item's own "," is escaped).
            var fields: [String: String] = [:], raw: [String: Substring] = [:]
            for p in parts.dropFirst(2) {
                guard let eq = p.firstIndex(of: "="), let v = PercentEscape.unescape(p[p.index(after: eq)...]) else {
                    throw fail("bad field \(p.prefix(40))")
                }
                fields[String(p[..<eq])] = v
                raw[String(p[..<eq])] = p[p.index(after: eq)...]
            }
            func list(_ key: String) -> [String] {
                (raw[key] ?? "").split(separator: ",").compactMap { PercentEscape.unescape($0) }
            }
            let id = parts[0]
            if parts[1] == "begin" {
                guard let at = fields["at"].flatMap({ Int($0) }), let command = fields["command"] else {
                    throw fail("begin without at or command")
                }
                index[id] = commands.count
                commands.append(Command(id: id, time: at, command: command))
                continue
            }
            guard let k = index[id] else { throw fail("\(parts[1]) for \(id), which has no begin") }
            switch parts[1] {
            case "end":
                commands[k].ended = true
                commands[k].endTime = fields["at"].flatMap { Int($0) }
            case "undone":
                commands[k].undone = true
                commands[k].undoneTime = fields["at"].flatMap { Int($0) }
            case "file":
                guard let from = fields["from"], let to = fields["to"], let unique = fields["unique"],
                    let add = MaildirFlags(letters: fields["flags+"] ?? ""), let remove = MaildirFlags(letters: fields["flags-"] ?? "")
                else { throw fail("file without from, to or unique") }
                let change = KeywordMove.Change(
                    addKeywords: Set(list("kw+")), removeKeywords: Set(list("kw-")), addFlags: add, removeFlags: remove)
                commands[k].changes.append(.file(from: from, to: to, unique: unique, change: change))
            case "tag":
                guard let id = fields["msgid"] else { throw fail("tag without msgid") }
                commands[k].changes.append(.tag(messageID: id, add: list("add"), remove: list("remove")))
            default: throw fail("unknown record \(parts[1].prefix(20))")
            }
        }
        return commands
    }
}
