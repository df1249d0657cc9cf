import Testing
import MoTestSupport
@testable import MoConfig

/// `[keywords]` and `[[tag-rule]]`.
@Suite struct TagConfigTests {
    @Test func keywordsAndRulesLoad() throws {
        let config = try loadConfig(
            minimalConfig() + """

                [keywords]
                "$label2" = "job"
                Urgent = "urgent"
                [[tag-rule]]
                query = "from:boss@example.com"
                tags = ["+work", "-unread"]
                [[tag-rule]]
                query = "list:dev"
                tags = ["+dev"]
                """)
        #expect(config.keywords == [KeywordTag(keyword: "$label2", tag: "job"), KeywordTag(keyword: "Urgent", tag: "urgent")])
        #expect(
            config.tagRules == [
                TagRule(query: "from:boss@example.com", add: ["work"], remove: ["unread"], line: 10),
                TagRule(query: "list:dev", add: ["dev"], remove: [], line: 13)
            ])
        #expect(try loadConfig(minimalConfig()).tagRules.isEmpty)
    }

    @Test(arguments: [
        ("\n[keywords]\n\"$label2\" = \"\"", "/p/config.toml:8: keywords.\"$label2\": must not be empty"),
        (
            "\n[keywords]\n\"a b\" = \"x\"",
            "/p/config.toml:8: keywords.\"a b\": 'a b' is not an IMAP keyword (printable ASCII without spaces or ( ) { % * \" \\ ])"
        ),
        (
            "\n[keywords]\n\"a(b\" = \"x\"",
            "/p/config.toml:8: keywords.\"a(b\": 'a(b' is not an IMAP keyword (printable ASCII without spaces or ( ) { % * \" \\ ])"
        ),
        (
            "\n[keywords]\n\"$Forwarded\" = \"fwd\"",
            "/p/config.toml:8: keywords.\"$Forwarded\": $Forwarded is the Maildir flag P, the tag 'passed'; it cannot be renamed"
        ),
        (
            "\n[keywords]\n\"$label1\" = \"flagged\"",
            "/p/config.toml:8: keywords.\"$label1\": 'flagged' is a flag tag (a Maildir flag letter), not a keyword's name"
        ),
        ("\n[keywords]\nx = 1", "/p/config.toml:8: keywords.x: expected a string, found an integer"),
        ("\n[[tag-rule]]\ntags = [\"+a\"]", "/p/config.toml:7: tag-rule: missing required key 'query'"),
        ("\n[[tag-rule]]\nquery = \"a\"", "/p/config.toml:7: tag-rule: missing required key 'tags'"),
        (
            "\n[[tag-rule]]\nquery = \"a\"\ntags = [\"work\"]",
            "/p/config.toml:9: tag-rule.tags[0]: 'work' is not +TAG (add) or -TAG (remove)"
        ),
        ("\n[[tag-rule]]\nquery = \"a\"\ntags = []", "/p/config.toml:9: tag-rule.tags: must not be empty"),
        ("\n[[tag-rule]]\nquery = \"a\"\ntag = [\"+a\"]", "/p/config.toml:9: tag-rule.tag: unknown key (did you mean 'tags'?)"),
        ("\n[tag-rule]\nquery = \"a\"", "/p/config.toml:7: tag-rule: expected [[tag-rule]] tables, found a table"),
        ("\n[[tag-rules]]\nquery = \"a\"", "/p/config.toml:7: tag-rules: unknown key (did you mean 'tag-rule'?)"),
        ("\n[keyword]\na = \"b\"", "/p/config.toml:7: keyword: unknown key (did you mean 'keywords'?)")
    ])
    func errorsNameLineAndKey(_ tail: String, _ expected: String) {
        #expect(configError(minimalConfig() + tail) == expected)
    }
}
