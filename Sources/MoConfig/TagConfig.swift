import MoCore

/// One entry of the `[keywords]` table: the IMAP keyword `keyword` is shown and searched as tag `tag`
/// (over Maildir.TagVocabulary's defaults, which it extends or overrides).
public struct KeywordTag: Sendable, Equatable {
    public var keyword: String
    public var tag: String
}

/// One `[[tag-rule]]`: `mo-index update` applies `add`/`remove` to the messages new in that update that
/// match `query` (the query language; checked when the rule first runs, the error naming `line`).
public struct TagRule: Sendable, Equatable {
    public var query: String
    public var add: [String]
    public var remove: [String]
    /// The line of the rule's `[[tag-rule]]` header, for messages.
    public var line: Int
}

extension ConfigSchema {
    static let tagRuleKeys = ["query", "tags"]
    /// Maildir.TagVocabulary.flagTags' names (MoConfig does not depend on Maildir; a test keeps them equal).
    static let flagTagNames: Set<String> = ["draft", "flagged", "passed", "replied", "unread"]

    /// `[keywords]`: every key is a keyword, every value a non-empty tag name.
    func readKeywords(_ root: TOMLTable, _ top: TableReader) throws(ConfigError) -> [KeywordTag] {
        guard let table = try top.table("keywords", known: root.entry("keywords").flatMap(Self.tableKeys) ?? []) else { return [] }
        var out: [KeywordTag] = []
        for entry in table.table.entries {
            // The IMAP grammar refuses other keywords: every STORE of their folder would fail.
            guard IMAPAtom.isAtom(entry.key), !entry.key.hasPrefix("\\") else {
                throw table.error(
                    at: entry.key, "'\(entry.key)' is not an IMAP keyword (printable ASCII without spaces or ( ) { % * \" \\ ])")
            }
            // mo-sync carries $Forwarded as the P flag (the `passed` tag); another name would turn into it.
            guard entry.key.lowercased() != "$forwarded" else {
                throw table.error(at: entry.key, "$Forwarded is the Maildir flag P, the tag 'passed'; it cannot be renamed")
            }
            guard let tag = try table.nonEmptyString(entry.key) else { continue }
            guard !Self.flagTagNames.contains(tag) else {
                throw table.error(at: entry.key, "'\(tag)' is a flag tag (a Maildir flag letter), not a keyword's name")
            }
            out.append(KeywordTag(keyword: entry.key, tag: tag))
        }
        return out
    }

    /// `[[tag-rule]]` tables: `query = "..."`, `tags = ["+TAG", "-TAG", ...]`.
    func readTagRules(_ root: TOMLTable, _ top: TableReader) throws(ConfigError) -> [TagRule] {
        guard let node = root["tag-rule"] else { return [] }
        guard case .array(let elements) = node.value else {
            throw top.error(at: "tag-rule", "expected [[tag-rule]] tables, found \(node.value.typeDescription)")
        }
        var rules: [TagRule] = []
        for element in elements {
            guard case .table(let t) = element.value else {
                throw top.error(at: "tag-rule", "expected [[tag-rule]] tables, found \(element.value.typeDescription)")
            }
            let r = try TableReader(t, path: ["tag-rule"], file: file, known: Self.tagRuleKeys)
            guard let query = try r.nonEmptyString("query") else { throw r.missing("query") }
            guard let words = try r.stringArray("tags") else { throw r.missing("tags") }
            var add: [String] = [], remove: [String] = []
            for (n, word) in words.enumerated() {
                let name = String(word.dropFirst())
                switch word.first {
                case "+" where !name.isEmpty: add.append(name)
                case "-" where !name.isEmpty: remove.append(name)
                default:
                    guard case .array(let items)? = t["tags"]?.value else { continue }
                    throw ConfigError(
                        file: file, line: items[n].line, key: r.name("tags") + "[\(n)]",
                        problem: "'\(word)' is not +TAG (add) or -TAG (remove)")
                }
            }
            if words.isEmpty { throw r.error(at: "tags", "must not be empty") }
            rules.append(TagRule(query: query, add: add, remove: remove, line: t.line))
        }
        return rules
    }
}
