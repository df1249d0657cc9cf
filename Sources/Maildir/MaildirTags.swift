/// A message file's tags, read from and written into its Maildir flags (see `TagVocabulary` for names).
///
/// Invariants:
/// - Flag tags are the standard letters (`unread` = no `S`); every other tag is a keyword letter
///   `a`–`z` through the folder's `dovecot-keywords` table, so mo-sync carries it as an IMAP keyword.
/// - Removing a tag clears every letter whose keyword reads as that tag (`work` and `$label2` both).
/// - A tag that finds no letter (the folder's table holds 26 keywords already) is returned, never
///   dropped silently: the caller keeps it elsewhere and says so.
public enum MaildirTags {
    /// The tags one file carries: its flag tags and the tags of its keyword letters.
    public static func tags(of flags: MaildirFlags, keywords: MaildirKeywords, vocabulary: TagVocabulary) -> Set<String> {
        var out = Set<String>()
        for (tag, flag) in TagVocabulary.flagTags where flags.contains(flag) != (tag == "unread") {
            out.insert(tag)
        }
        for b in flags.keywords.utf8 {
            if let keyword = keywords.keyword(for: b) { out.insert(vocabulary.tag(forKeyword: keyword)) }
        }
        return out
    }

    /// The result of `apply`.
    public struct Change: Sendable, Equatable {
        public var flags: MaildirFlags
        /// Tags to add that found no free letter in the folder's table.
        public var overflow: [String]
    }

    /// `flags` with `add` set and `remove` cleared. New keywords take a free letter of `keywords` (the
    /// caller saves the table before renaming the file, so a letter never outlives its meaning).
    public static func apply(
        add: [String], remove: [String], to flags: MaildirFlags,
        keywords: inout MaildirKeywords, vocabulary: TagVocabulary
    ) -> Change {
        var flags = flags
        var overflow: [String] = []
        for tag in remove {
            if let flag = TagVocabulary.flag(forTag: tag) {
                if tag == "unread" { flags.insert(flag) } else { flags.remove(flag) }
                continue
            }
            for b in flags.keywords.utf8 {
                if let keyword = keywords.keyword(for: b), vocabulary.tag(forKeyword: keyword) == tag,
                    let letter = MaildirFlags(letter: b)
                {
                    flags.remove(letter)
                }
            }
        }
        for tag in add {
            if let flag = TagVocabulary.flag(forTag: tag) {
                if tag == "unread" { flags.remove(flag) } else { flags.insert(flag) }
                continue
            }
            if tags(of: flags, keywords: keywords, vocabulary: vocabulary).contains(tag) { continue }
            if let letter = keywords.assignLetter(for: vocabulary.keyword(forTag: tag)) {
                flags.insert(letter)
            } else {
                overflow.append(tag)
            }
        }
        return Change(flags: flags, overflow: overflow)
    }

    /// Takes `tag` off the message file at `path` (in `folder`): its keyword letters that read as the tag,
    /// and the keywords of the folder's `mo-keywords` line that do (under the folder's keyword lock, from the
    /// file as it is now). Returns the file's path after the rename (the same when no letter changed).
    public static func remove(_ tag: String, fromFileAt path: String, in folder: MaildirFolder, vocabulary: TagVocabulary) throws -> String
    {
        guard let name = try? MaildirFilename(parsing: String(path.split(separator: "/").last ?? "")) else { return path }
        var table = try MaildirKeywords.load(folder: folder.path)
        let change = apply(add: [], remove: [tag], to: name.flags, keywords: &table, vocabulary: vocabulary)
        var renamed = path
        if change.flags != name.flags { renamed = try folder.setFlags(path: path, flags: change.flags) }
        try retagExtra(folder: folder.path, unique: name.unique, add: [], remove: [tag], vocabulary: vocabulary)
        return renamed
    }

    /// Adds `add` to and takes `remove` off a message's line of the folder's `mo-keywords` (`ExtraKeywords`),
    /// under the folder's keyword lock, from the file as it is now (mo-sync or mo-index may have changed it
    /// since the caller read it), written at once when the line changed. Returns whether it did. With nothing
    /// to add and no such file, nothing is read and no lock taken.
    @discardableResult
    public static func retagExtra(folder: String, unique: String, add: [String], remove: [String], vocabulary: TagVocabulary) throws -> Bool
    {
        guard !add.isEmpty || MaildirRoot.exists(folder + "/" + ExtraKeywords.fileName) else { return false }
        let lock = try MaildirKeywords.lock(folder: folder, wait: 60)
        defer { withExtendedLifetime(lock) {} }
        var extra = try ExtraKeywords.load(folder: folder)
        let before = extra.keywords(of: unique)
        var after = before.filter { !remove.contains(vocabulary.tag(forKeyword: $0)) }
        for tag in add { after.insert(vocabulary.keyword(forTag: tag)) }
        guard after != before else { return false }
        extra.set(after, for: unique)
        try extra.save(folder: folder)
        return true
    }
}
