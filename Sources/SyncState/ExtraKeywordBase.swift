#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// What the last run left on both sides of a folder for the keywords beyond the 26 letters
/// (`Maildir.ExtraKeywords`): the base of `SyncEngine.ExtraKeywordMerge`, by UID, with the pair's unique
/// name so a message settled by its file name alone is still found. In `<key>.extra` beside the folder's
/// state file (`FolderStateStore.extraPath`); only pairs with such keywords have a line:
///
///     extra 1
///     4711	1700000000.M1P2.host	project-x travel/2024
///
/// UID, tab, unique name, tab, keywords separated by spaces; name and keywords percent-escaped
/// (`PercentEscape`). Written whole and atomically, and only when it changed; its size follows the
/// messages that have such keywords, not the folder.
///
/// Crash safety without a journal: each side is written before the base, so a run killed between the two
/// leaves a side already equal to the other and different from the base, which the next merge reads as
/// "both changed alike" and records, sending nothing twice and losing nothing. Replay is strict: a
/// damaged line is an error naming `file:line`, as for the state file.
public struct ExtraKeywordBase: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var unique: String
        public var keywords: Set<String>
        public init(unique: String, keywords: Set<String>) {
            self.unique = unique
            self.keywords = keywords
        }
    }

    public private(set) var byUID: [UInt32: Entry] = [:]
    static let header = "extra 1"

    public init() {}

    public var isEmpty: Bool { byUID.isEmpty }

    public mutating func set(_ keywords: Set<String>, uid: UInt32, unique: String) {
        byUID[uid] = keywords.isEmpty ? nil : Entry(unique: unique, keywords: keywords)
    }

    public mutating func remove(uid: UInt32) { byUID[uid] = nil }

    public var rendered: [UInt8] {
        var out = Self.header + "\n"
        for uid in byUID.keys.sorted() {
            let e = byUID[uid]!
            out +=
                "\(uid)\t\(PercentEscape.escape(e.unique))\t" + e.keywords.sorted().map(PercentEscape.escape).joined(separator: " ") + "\n"
        }
        return Array(out.utf8)
    }

    public static func parse(_ bytes: [UInt8], file: String) throws(StateError) -> ExtraKeywordBase {
        var out = ExtraKeywordBase()
        var first = true
        do {
            try StrictLines.forEach(bytes) { line throws(StrictLines.Problem) in
                let text = String(decoding: line, as: UTF8.self)
                if first {
                    first = false
                    guard text == header else { throw .init("expected \"\(header)\", found \(quotedForMessage(String(text.prefix(80))))") }
                    return
                }
                let fields = text.split(separator: "\t", omittingEmptySubsequences: false)
                guard fields.count == 3, let uid = UInt32(fields[0]), uid != 0,
                    let unique = PercentEscape.unescape(fields[1]), !unique.isEmpty
                else { throw .init("expected \"UID<TAB>UNIQUE<TAB>KEYWORD …\", found \(quotedForMessage(String(text.prefix(80))))") }
                var keywords = Set<String>()
                for k in fields[2].split(separator: " ", omittingEmptySubsequences: false) {
                    guard !k.isEmpty, let keyword = PercentEscape.unescape(k) else {
                        throw .init("a malformed keyword in \(quotedForMessage(String(text.prefix(80))))")
                    }
                    keywords.insert(keyword)
                }
                guard out.byUID[uid] == nil else { throw .init("UID \(uid) given twice") }
                out.set(keywords, uid: uid, unique: unique)
            }
        } catch {
            throw StateError(file: file, line: error.line, problem: error.problem)
        }
        return out
    }

    /// Reads the file at `path`; an absent file holds no entries.
    public static func load(_ path: String) throws(StateError) -> ExtraKeywordBase {
        switch readWholeFile(path) {
        case .success(let bytes): return try parse(bytes, file: path)
        case .failure(let e) where e.code == ENOENT: return ExtraKeywordBase()
        case .failure(let e): throw StateError(file: path, cannot: "read", code: e.code)
        }
    }

    /// Writes the file atomically (none when empty).
    public func save(_ path: String) throws(StateError) {
        if isEmpty {
            if unlink(path) != 0 && errno != ENOENT { throw StateError(file: path, cannot: "remove", code: errno) }
        } else if case .failure(let e) = replaceFileAtomically(path, rendered) {
            throw StateError(file: path, cannot: "write", code: e.code)
        }
    }
}
