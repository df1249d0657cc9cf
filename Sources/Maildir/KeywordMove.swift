import MoCore

/// One message file moved to another folder of its Maildir tree with its keywords, and optionally
/// keywords and flags changed in the same rename: what `mo-index move`, `snooze`, `undo` and mo-sync's
/// snooze wake-up do. mo-sync then sees a file that left one folder for another under the same unique
/// name and moves the message on the server (UID MOVE), never uploading it again.
///
/// Steps, each durable before the next, so a crash never leaves a letter without its meaning:
/// 1. under the target's keyword lock, the message's keyword letters are re-mapped to the target's
///    `dovecot-keywords` (new letters saved first); keywords with no free letter, and those of the
///    source's `mo-keywords` line, go to the target's `mo-keywords`;
/// 2. `mo-remapped` notes that the file's letters are the target's already (mo-sync must not map them
///    again);
/// 3. one rename (`MaildirFolder.moveIn`), which never replaces a file.
/// Within one folder only the letters (and the folder's `mo-keywords` line) change.
public enum KeywordMove {
    public struct Change: Sendable, Equatable {
        public var addKeywords: Set<String> = []
        /// Keywords to take off, compared without regard to case (as servers do).
        public var removeKeywords: Set<String> = []
        public var addFlags = MaildirFlags()
        public var removeFlags = MaildirFlags()
        public init(
            addKeywords: Set<String> = [], removeKeywords: Set<String> = [], addFlags: MaildirFlags = [], removeFlags: MaildirFlags = []
        ) {
            self.addKeywords = addKeywords
            self.removeKeywords = removeKeywords
            self.addFlags = addFlags
            self.removeFlags = removeFlags
        }
    }

    /// The file's path afterwards, or nil when it was not moved (gone meanwhile, or a file of its name is
    /// in the target: never replaced).
    @discardableResult
    public static func move(_ path: String, to destination: String, change: Change = Change()) throws -> String? {
        let source = MaildirFolder(path: folderOf(path))
        let target = MaildirFolder(path: destination)
        guard let name = name(of: path) else { return nil }
        if !target.exists { try target.create() }
        let lock = try MaildirKeywords.lock(folder: destination, wait: 60)
        defer { withExtendedLifetime(lock) {} }
        let sameFolder = source.path == target.path
        let table = try MaildirKeywords.load(folder: destination)
        var keywords = table
        var letters: MaildirKeywords.Translation
        if sameFolder {
            letters = MaildirKeywords.Translation(flags: name.flags, overflow: [])
        } else {
            letters = MaildirKeywords.translate(name.flags, from: try MaildirKeywords.load(folder: source.path), to: &keywords)
        }
        let removing = Set(change.removeKeywords.map { $0.lowercased() })
        for b in letters.flags.keywords.utf8 {
            if let k = keywords.keyword(for: b), removing.contains(k.lowercased()), let letter = MaildirFlags(letter: b) {
                letters.flags.remove(letter)
            }
        }
        var overflow = Set(letters.overflow)
        for k in change.addKeywords {
            if let letter = keywords.assignLetter(for: k) { letters.flags.insert(letter) } else { overflow.insert(k) }
        }
        letters.flags = letters.flags.union(change.addFlags).subtracting(change.removeFlags)
        if keywords != table { try keywords.save(folder: destination) }
        // The lines beyond the letters: the source's (read without its lock: mo-sync carries a line it
        // changes meanwhile itself), the overflow, less what is taken off.
        let carried = sameFolder ? [] : ((try? ExtraKeywords.load(folder: source.path, lenient: true))?.keywords(of: name.unique) ?? [])
        var lines = try ExtraKeywords.load(folder: destination)
        let before = lines.keywords(of: name.unique)
        let after = before.union(carried).union(overflow).filter { !removing.contains($0.lowercased()) }
        if after != before {
            lines.set(after, for: name.unique)
            try lines.save(folder: destination)
        }
        if sameFolder {
            return letters.flags == name.flags ? path : try source.setFlags(path: path, flags: letters.flags)
        }
        if !name.flags.keywords.isEmpty || !change.addKeywords.isEmpty { try RemappedFiles.add([name.unique], folder: destination) }
        guard case .moved(let moved) = try target.moveIn(path, from: source, flags: letters.flags == name.flags ? nil : letters.flags)
        else {
            try? RemappedFiles.remove([name.unique], folder: destination)
            return nil
        }
        return moved
    }

    /// `<folder>/cur/<file>` → `<folder>`.
    public static func folderOf(_ path: String) -> String {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(2)
        return parts.joined(separator: "/")
    }

    /// The parsed name of the message file at `path`.
    static func name(of path: String) -> MaildirFilename? {
        try? MaildirFilename(parsing: String(path.split(separator: "/").last ?? ""))
    }

    /// Every keyword a file carries: its letters' (through the folder's table) and its `mo-keywords` line's.
    public static func keywords(of path: String) -> Set<String> {
        let folder = folderOf(path)
        guard let name = name(of: path) else { return [] }
        return keywords(
            of: name, table: (try? MaildirKeywords.load(folder: folder, lenient: true)) ?? MaildirKeywords(),
            extra: (try? ExtraKeywords.load(folder: folder, lenient: true)) ?? ExtraKeywords())
    }

    /// The keywords of the file named `name` in a folder with this table and `mo-keywords`.
    static func keywords(of name: MaildirFilename, table: MaildirKeywords, extra: ExtraKeywords) -> Set<String> {
        Set(name.flags.keywords.utf8.compactMap { table.keyword(for: $0) }).union(extra.keywords(of: name.unique))
    }
}
