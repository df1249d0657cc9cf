#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// The keywords of a folder's messages that found no letter: the folder's `dovecot-keywords` table holds
/// 26 already, and a file name has no room for more. They live in the file `mo-keywords` beside that
/// table, by the message's unique name (the file name before `:2,`, which survives every flag rename),
/// so tags have no 26-letter limit (issue 26, item 4) while the first 26 stay letters for every other
/// Maildir tool. mo-sync carries them both ways as IMAP keywords; mo-index reads them as tags.
///
/// Format (docs/index-schema.md, "Tags beyond 26"), one line per message that has such keywords, sorted:
///
///     # mo-keywords 1
///     1700000000.M1P2.host	project-x travel/2024
///
/// The unique name, a tab, the keywords separated by single spaces. Both are percent-escaped
/// (`PercentEscape`: control bytes, spaces, `%` and non-ASCII as `%XX`). A message with none has no line.
///
/// Invariants:
/// - A keyword is written here only when it finds no letter; one that got a letter since (the table had
///   room again, or the line came with a moved file) may stay here as well: it is the same keyword either
///   way, and a reader takes the union. Never is it dropped for having a letter: that would read as a removal.
/// - Written only whole and atomically (`save`), by a holder of the folder's keyword lock
///   (`MaildirKeywords.lock`), which every writer of either file takes; so two writers never lose each
///   other's lines.
/// - `save` moves cur/'s time to now, durably, before it replaces the file and again after: a change here
///   is a change of the folder for every program that trusts directory times to skip unchanged folders
///   (mo-sync's stamps, mo-index's update), though no file of cur/ was renamed. Before, so a writer killed
///   between the rename and the second move still leaves cur/ moved; after, so a reader that looked
///   between the first move and the rename looks again.
/// - Strict reading refuses a damaged line, naming `file:line`: a writer that skipped it would drop the
///   message's keywords at its next save. Readers that never write (the index) read leniently.
public struct ExtraKeywords: Sendable, Equatable {
    public static let fileName = "mo-keywords"
    static let header = "# mo-keywords 1"
    public private(set) var byUnique: [String: Set<String>] = [:]

    public init() {}

    public init(_ byUnique: [String: Set<String>]) {
        for (unique, keywords) in byUnique { set(keywords, for: unique) }
    }

    public var isEmpty: Bool { byUnique.isEmpty }

    public func keywords(of unique: String) -> Set<String> { byUnique[unique] ?? [] }

    /// Adds keywords to a message's line (a file that moved here brings its own); whether any was new.
    @discardableResult
    public mutating func add(_ keywords: Set<String>, to unique: String) -> Bool {
        let now = self.keywords(of: unique)
        guard !keywords.isSubset(of: now) else { return false }
        set(now.union(keywords), for: unique)
        return true
    }

    /// Replaces a message's keywords (none: its line goes).
    public mutating func set(_ keywords: Set<String>, for unique: String) {
        byUnique[unique] = keywords.isEmpty ? nil : keywords
    }

    public var rendered: [UInt8] {
        var out = Self.header + "\n"
        for unique in byUnique.keys.sorted() {
            out += PercentEscape.escape(unique) + "\t" + byUnique[unique]!.sorted().map(PercentEscape.escape).joined(separator: " ") + "\n"
        }
        return Array(out.utf8)
    }

    /// Parses strictly (see the type's comment), or, `lenient`, skipping the lines that do not parse.
    public static func parse(_ bytes: [UInt8], file: String, lenient: Bool = false) throws(MaildirError) -> ExtraKeywords {
        var out = ExtraKeywords()
        do {
            try StrictLines.forEach(bytes) { line throws(StrictLines.Problem) in
                if line.first == UInt8(ascii: "#") { return }
                guard let entry = Self.entry(line) else {
                    if lenient { return }
                    throw .init("expected \"UNIQUE<TAB>KEYWORD …\", found \(quotedForMessage(bytes: line.prefix(80)))")
                }
                guard out.byUnique[entry.unique] == nil else {
                    if lenient { return }
                    throw .init("the message \(quotedForMessage(entry.unique)) is given twice")
                }
                out.set(entry.keywords, for: entry.unique)
            }
        } catch {
            if lenient { return out }  // only a last line cut short: the lines before it stand
            throw MaildirError("", "\(file):\(error.line)", detail: error.problem, kind: .data)
        }
        return out
    }

    private static func entry(_ line: ArraySlice<UInt8>) -> (unique: String, keywords: Set<String>)? {
        guard let tab = line.firstIndex(of: UInt8(ascii: "\t")), tab > line.startIndex,
            let unique = PercentEscape.unescape(String(decoding: line[..<tab], as: UTF8.self)), !unique.contains("/")
        else { return nil }
        var keywords = Set<String>()
        for field in line[(tab + 1)...].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false) {
            guard !field.isEmpty, let k = PercentEscape.unescape(String(decoding: field, as: UTF8.self)) else { return nil }
            keywords.insert(k)
        }
        return keywords.isEmpty ? nil : (unique, keywords)
    }

    /// Reads `folder/mo-keywords`; an absent file holds none.
    public static func load(folder: String, lenient: Bool = false) throws(MaildirError) -> ExtraKeywords {
        let path = folder + "/" + fileName
        switch readWholeFile(path) {
        case .success(let bytes): return try parse(bytes, file: path, lenient: lenient)
        case .failure(let e) where e.code == ENOENT: return ExtraKeywords()
        case .failure(let e): throw MaildirError("cannot read", path, code: e.code)
        }
    }

    /// Writes the file atomically (write, fsync, rename, fsync; none when empty), between two moves of
    /// cur/'s time to now (see the type's invariants). The caller holds the folder's keyword lock.
    public func save(folder: String) throws(MaildirError) {
        let path = folder + "/" + Self.fileName
        try Self.touchCur(folder, durably: true)
        if isEmpty {
            if unlink(path) != 0 && errno != ENOENT { throw MaildirError("cannot remove", path, code: errno) }
            try fsyncDirectory(folder)
        } else if case .failure(let e) = replaceFileAtomically(path, rendered) {
            throw MaildirError("cannot write", path, code: e.code)
        }
        try Self.touchCur(folder, durably: false)
    }

    private static func touchCur(_ folder: String, durably: Bool) throws(MaildirError) {
        let cur = folder + "/cur"
        guard utimensat(AT_FDCWD, cur, nil, 0) == 0 else {
            if errno == ENOENT { return }
            throw MaildirError("cannot set the time of", cur, code: errno)
        }
        if durably { try fsyncDirectory(cur) }
    }
}
