#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// IMAP keywords ↔ Maildir lowercase flag letters, through the folder's `dovecot-keywords` file
/// (Dovecot's own convention, so Dovecot, mutt-with-Dovecot setups and mo agree): each line is
/// `INDEX KEYWORD`, and index 0 is letter `a` … 25 is `z`. A folder can carry at most 26 keywords;
/// further ones stay on the server only.
public struct MaildirKeywords: Sendable, Equatable {
    public static let fileName = "dovecot-keywords"
    private(set) public var byIndex: [Int: String] = [:]

    public init() {}

    /// Parses the file leniently: malformed lines are skipped. Only for readers that never write the table
    /// back nor act on its letters (the index's tags); the others read it with `parse(_:file:)`.
    public init(parsing bytes: [UInt8]) {
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            guard let space = line.firstIndex(of: " "), let index = Int(line[..<space]), (0..<26).contains(index) else { continue }
            let keyword = String(line[line.index(after: space)...])
            if !keyword.isEmpty && self.index(of: keyword) == nil { byIndex[index] = keyword }
        }
    }

    /// Parses the file strictly (Dovecot writes only `INDEX KEYWORD` lines, atomically): a malformed line,
    /// an index outside 0…25 or given twice, or a last line without its line end (a file cut short) is an
    /// error naming `file:line`. Skipping it would free its letter: the next keyword would take the letter
    /// and every file carrying it would read, and be stored on the server, as that keyword.
    /// A keyword given twice in another case keeps its first letter, as in `init(parsing:)`.
    public static func parse(_ bytes: [UInt8], file: String) throws(MaildirError) -> MaildirKeywords {
        var table = MaildirKeywords()
        do {
            try StrictLines.forEach(bytes) { line throws(StrictLines.Problem) in
                guard let space = line.firstIndex(of: UInt8(ascii: " ")),
                    let index = Int(String(decoding: line[..<space], as: UTF8.self)), space > line.startIndex,
                    line[..<space].allSatisfy({ ASCII.isDigit($0) }),
                    space + 1 < line.endIndex
                else {
                    throw .init("expected \"INDEX KEYWORD\", found \(quotedForMessage(bytes: line.prefix(80)))")
                }
                guard (0..<26).contains(index) else { throw .init("keyword index \(index) is not in 0…25 (letters a…z)") }
                guard table.byIndex[index] == nil else { throw .init("keyword index \(index) given twice") }
                let keyword = String(decoding: line[(space + 1)...], as: UTF8.self)
                if table.index(of: keyword) == nil { table.byIndex[index] = keyword }
            }
        } catch {
            throw MaildirError("", "\(file):\(error.line)", detail: error.problem, kind: .data)
        }
        return table
    }

    public var rendered: [UInt8] {
        Array(byIndex.keys.sorted().map { "\($0) \(byIndex[$0]!)\n" }.joined().utf8)
    }

    /// The letter for a keyword already in the table.
    public func letter(for keyword: String) -> MaildirFlags? {
        index(of: keyword).flatMap { MaildirFlags(letter: UInt8(ascii: "a") + UInt8($0)) }
    }

    /// The letter for a keyword, adding it to the table if there is room; nil when all 26 are taken.
    public mutating func assignLetter(for keyword: String) -> MaildirFlags? {
        if let l = letter(for: keyword) { return l }
        guard let free = (0..<26).first(where: { byIndex[$0] == nil }) else { return nil }
        byIndex[free] = keyword
        return MaildirFlags(letter: UInt8(ascii: "a") + UInt8(free))
    }

    /// The keyword a lowercase letter stands for, if the table names one.
    public func keyword(for letter: UInt8) -> String? {
        guard letter >= UInt8(ascii: "a"), letter <= UInt8(ascii: "z") else { return nil }
        return byIndex[Int(letter - UInt8(ascii: "a"))]
    }

    /// The result of `translate`.
    public struct Translation: Sendable, Equatable {
        public var flags: MaildirFlags
        /// Keywords of `flags` that found no free letter in the target table (it holds 26 already).
        public var overflow: [String]
    }

    /// A message's letters re-mapped from the `source` folder's table to the `target` folder's, for a
    /// message that moves between folders: each keyword letter becomes the target's letter for the same
    /// keyword, assigned there if new (the caller saves `target` before renaming the file, so a letter
    /// never outlives its meaning). Uppercase letters stay. A keyword with no free letter in `target` is
    /// returned in `overflow`, never dropped silently; a letter `source` names no keyword for carries no
    /// tag and is left out (in the target it would take another letter's meaning).
    public static func translate(
        _ flags: MaildirFlags, from source: MaildirKeywords,
        to target: inout MaildirKeywords
    ) -> Translation {
        let keywordLetters = flags.keywords
        guard !keywordLetters.isEmpty else { return Translation(flags: flags, overflow: []) }
        var out = flags
        for b in keywordLetters.utf8 { out.remove(MaildirFlags(letter: b)!) }
        var overflow: [String] = []
        for b in keywordLetters.utf8 {
            guard let keyword = source.keyword(for: b) else { continue }
            if let letter = target.assignLetter(for: keyword) { out.insert(letter) } else { overflow.append(keyword) }
        }
        return Translation(flags: out, overflow: overflow)
    }

    /// IMAP keywords compare without regard to case (RFC 3501 §2.3.2 leaves it to servers; Dovecot and
    /// most others fold case), so a table never holds two spellings of one keyword.
    private func index(of keyword: String) -> Int? {
        let folded = keyword.lowercased()
        return byIndex.first { $0.value.lowercased() == folded }?.key
    }

    /// The lock that makes a folder's table one writer's at a time: mo-sync holds it from loading the table
    /// to saving it for a folder's whole sync, and `mo-index tag`/`move` while they add letters (reloading
    /// the table under it). Without it two writers could give one letter two meanings: files tagged with
    /// one keyword would read, and be stored on the server, as another. Not `dovecot-keywords.lock`:
    /// Dovecot dotlocks that name, and a Dovecot serving this Maildir would wait on it.
    public static let lockFileName = "mo-keywords.lock"

    /// Takes the folder's keyword lock, waiting up to `wait` seconds; a `.busy` error names the holder.
    public static func lock(folder: String, wait: Double) throws(MaildirError) -> FileLock {
        let path = folder + "/" + lockFileName
        let taken: FileLock?
        do { taken = try FileLock(path: path, wait: wait) } catch {
            throw MaildirError("cannot lock", path, code: error.code)
        }
        guard let taken else {
            throw MaildirError(
                "cannot change the keyword table of", folder,
                detail: "another process holds \(lockFileName) (pid \(FileLock.holder(path))); try again when it finishes",
                kind: .busy)
        }
        return taken
    }

    /// Reads `folder/dovecot-keywords` (`parse`, or `init(parsing:)` when `lenient`); an absent file is an
    /// empty table.
    public static func load(folder: String, lenient: Bool = false) throws(MaildirError) -> MaildirKeywords {
        let path = folder + "/" + fileName
        switch readWholeFile(path) {
        case .success(let bytes): return lenient ? MaildirKeywords(parsing: bytes) : try parse(bytes, file: path)
        case .failure(let e) where e.code == ENOENT: return MaildirKeywords()
        case .failure(let e): throw MaildirError("cannot read", path, code: e.code)
        }
    }

    /// Writes the table atomically (write, fsync, rename).
    public func save(folder: String) throws(MaildirError) {
        let path = folder + "/" + MaildirKeywords.fileName
        if case .failure(let e) = replaceFileAtomically(path, rendered) {
            throw MaildirError("cannot write", path, code: e.code)
        }
    }
}
