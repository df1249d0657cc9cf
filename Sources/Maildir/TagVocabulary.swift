import MoCore

/// Tag names ↔ IMAP keywords: the one place that says which keyword carries which tag.
///
/// Tags are stored as the message's IMAP keywords (in the Maildir file name as keyword letters, see
/// `MaildirTags`), so a tag set on one device reaches every other device and client through the server.
/// The rules, in order (docs/query-language.md shows them to users):
///
/// | keyword on the server                | tag           | reason                                       |
/// |--------------------------------------|---------------|----------------------------------------------|
/// | in the table (defaults + `[keywords]`)| its table name| `wellKnown`: Thunderbird labels, `$Junk`, …  |
/// | anything else                        | `decode(kw)`  | `=XX` escapes undone, every other byte as is |
///
/// | tag                                  | keyword       | reason                                       |
/// |--------------------------------------|---------------|----------------------------------------------|
/// | a table name                         | its keyword   | Thunderbird shows `$label2` as "Work"         |
/// | any other                            | `encode(tag)` | a valid IMAP atom, reversible                |
///
/// `encode` keeps the bytes an IMAP atom allows (RFC 3501 ATOM-CHAR: printable ASCII except
/// `( ) { % * " \ ]` and space) and writes every other byte, and `=` itself, as `=XX` (uppercase hex of
/// the UTF-8 byte): `to do` → `to=20do`, `äpfel` → `=C3=A4pfel`. A tag spelled like a table keyword
/// (`$label1`) is escaped too (`=24label1`), so that every tag has exactly one keyword and back.
/// Servers compare keywords without regard to case (Dovecot does), so `Work` and `work` are one keyword
/// there; the spelling the server keeps is the one shown.
///
/// The five flag tags (`unread`, `flagged`, `replied`, `passed`, `draft`, as notmuch names them) are
/// the standard Maildir letters, not keywords; `passed` is also what `$Forwarded` means.
public struct TagVocabulary: Sendable, Equatable {
    /// The default table: readable names for the keywords other clients set.
    public static let wellKnown: [(keyword: String, tag: String)] = [
        ("$label1", "important"), ("$label2", "work"), ("$label3", "personal"), ("$label4", "todo"),
        ("$label5", "later"), ("$Junk", "spam"), ("$NotJunk", "notspam"), ("$MDNSent", "mdnsent")
    ]

    /// Tags that are Maildir flag letters (notmuch's `maildir.synchronize_flags` names). `unread` is the
    /// absence of `S`.
    public static let flagTags: [(tag: String, flag: MaildirFlags)] = [
        ("draft", .draft), ("flagged", .flagged), ("passed", .passed), ("replied", .replied), ("unread", .seen)
    ]

    /// Lower-cased keyword → tag.
    private var tagByKeyword: [String: String] = [:]
    /// Tag → keyword as the table spells it.
    private var keywordByTag: [String: String] = [:]

    /// The default table plus `extra` (keyword → tag, from the config's `[keywords]` table), which wins
    /// over a default for the same keyword or tag.
    public init(extra: [(keyword: String, tag: String)] = []) {
        for (keyword, tag) in Self.wellKnown + extra {
            if let old = keywordByTag[tag] { tagByKeyword[old.lowercased()] = nil }
            if let old = tagByKeyword[keyword.lowercased()] { keywordByTag[old] = nil }
            tagByKeyword[keyword.lowercased()] = tag
            keywordByTag[tag] = keyword
        }
    }

    /// The tag a server keyword stands for.
    public func tag(forKeyword keyword: String) -> String {
        if let tag = tagByKeyword[keyword.lowercased()] { return tag }
        return Self.decode(keyword)
    }

    /// The keyword that carries `tag` (never a flag tag: see `flagTags`).
    public func keyword(forTag tag: String) -> String {
        if let keyword = keywordByTag[tag] { return keyword }
        let encoded = Self.encode(tag)
        // A literal spelling of a table keyword would read back as the table's tag: escape its first byte.
        if tagByKeyword[encoded.lowercased()] != nil, let first = encoded.utf8.first {
            return PercentEscape.escape(String(UnicodeScalar(first)), marker: Self.escape, where: { _ in true })
                + String(encoded.dropFirst())
        }
        return encoded
    }

    /// The flag letter a flag tag stands for, or nil for a keyword tag.
    public static func flag(forTag tag: String) -> MaildirFlags? {
        flagTags.first { $0.tag == tag }?.flag
    }

    // MARK: - The reversible atom encoding

    static let escape = UInt8(ascii: "=")

    static func isAtomByte(_ b: UInt8) -> Bool { b != escape && IMAPAtom.isAtomByte(b) }

    /// Tag → IMAP atom (see the type's comment).
    public static func encode(_ tag: String) -> String {
        PercentEscape.escape(tag, marker: escape, where: { !isAtomByte($0) })
    }

    /// IMAP atom → tag: `=XX` becomes the byte. A keyword that is not such an encoding (a lone `=` from
    /// another client, bytes that are not UTF-8) reads as it is.
    public static func decode(_ keyword: String) -> String {
        PercentEscape.unescape(keyword, marker: escape) ?? keyword
    }
}
