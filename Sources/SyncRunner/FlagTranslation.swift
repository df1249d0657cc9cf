import IMAPCodec
import Maildir

/// IMAP flags ↔ Maildir letters for one folder.
///
/// System flags map to the standard letters (`\Seen` S, `\Answered` R, `\Flagged` F, `\Deleted` T,
/// `\Draft` D) and `$Forwarded` to P; other keywords map to lowercase letters through the folder's
/// `dovecot-keywords` table, which grows as the server shows new keywords (26 at most: a message's further
/// keywords are its `extra` ones, kept in `mo-keywords` by `PreparedFolder+ExtraKeywords`).
struct FlagTranslation {
    var keywords: MaildirKeywords
    private(set) var changed = false
    private(set) var unmapped = Set<String>()

    init(keywords: MaildirKeywords) { self.keywords = keywords }

    /// The table was written: later assignments count as changes again.
    mutating func markSaved() { changed = false }

    /// The letters of `flags`; its keywords that found no letter go to `extra`.
    mutating func letters(_ flags: [Flag], extra: inout Set<String>) -> MaildirFlags {
        var out: MaildirFlags = []
        for f in flags {
            switch f {
            case .seen: out.insert(.seen)
            case .answered: out.insert(.replied)
            case .flagged: out.insert(.flagged)
            case .deleted: out.insert(.trashed)
            case .draft: out.insert(.draft)
            case .keyword(let k) where k.lowercased() == "$forwarded": out.insert(.passed)
            case .keyword(let k):
                let before = keywords
                if let letter = keywords.assignLetter(for: k) {
                    out.insert(letter)
                    if keywords != before { changed = true }
                } else {
                    extra.insert(k)
                }
            case .recent, .wildcard, .extension: break
            }
        }
        return out
    }

    /// A moved message's letters from another folder's table into this one's (`MaildirKeywords.translate`,
    /// assigning letters here as needed). A keyword with no free letter here stays on the server and is
    /// reported like any other unmapped one.
    mutating func translate(_ flags: MaildirFlags, from source: MaildirKeywords) -> MaildirKeywords.Translation {
        let before = keywords
        let t = MaildirKeywords.translate(flags, from: source, to: &keywords)
        if keywords != before { changed = true }
        unmapped.formUnion(t.overflow)
        return t
    }

    func imapFlags(_ letters: MaildirFlags) -> [Flag] {
        var out: [Flag] = []
        if letters.contains(.draft) { out.append(.draft) }
        if letters.contains(.flagged) { out.append(.flagged) }
        if letters.contains(.passed) { out.append(.keyword("$Forwarded")) }
        if letters.contains(.replied) { out.append(.answered) }
        if letters.contains(.seen) { out.append(.seen) }
        if letters.contains(.trashed) { out.append(.deleted) }
        for b in letters.keywords.utf8 {
            if let k = keywords.keyword(for: b) { out.append(.keyword(k)) }
        }
        return out
    }

    /// The keyword letters of the folder's table the server will not store in this mailbox, judged by the
    /// PERMANENTFLAGS of its SELECT (RFC 3501 §7.1); the planner masks them (`SyncPlanner.plan`'s
    /// `unstorable`), so they are neither sent nor read as removed there.
    ///
    /// | PERMANENTFLAGS            | keyword of the letter | stored? | reason                          |
    /// |---------------------------|-----------------------|---------|---------------------------------|
    /// | not sent                  | any                   | yes     | RFC 3501: all flags permanent   |
    /// | holds `\*`                | any                   | yes     | new keywords may be created     |
    /// | without `\*`              | listed (any case)     | yes     | an existing keyword             |
    /// | without `\*`              | not listed            | no      | `UnsyncedKeyword.refusedByServer` |
    static func unstorableLetters(_ keywords: MaildirKeywords, permanentFlags: [Flag]?) -> MaildirFlags {
        let stores = storesKeyword(permanentFlags: permanentFlags)
        var out: MaildirFlags = []
        for (index, keyword) in keywords.byIndex where !stores(keyword) {
            out.insert(MaildirFlags(letter: UInt8(ascii: "a") + UInt8(index))!)
        }
        return out
    }

    /// The rule of the table above, for any keyword: whether the server stores it in this mailbox (also
    /// the keywords beyond the letters, `PreparedFolder.mergeExtraKeywords`).
    static func storesKeyword(permanentFlags: [Flag]?) -> (String) -> Bool {
        guard let permanentFlags, !permanentFlags.contains(.wildcard) else { return { _ in true } }
        var listed = Set<String>()
        for case .keyword(let k) in permanentFlags { listed.insert(k.lowercased()) }
        return { listed.contains($0.lowercased()) }
    }
}
