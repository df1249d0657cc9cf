import Foundation
import Testing
import MoCore
import MoTestSupport

/// `mo-index tag`, `mo-index tags` and `[[tag-rule]]`s as a user runs them.
@Suite struct TagCLITests {
    static func files(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    static func read(_ path: String) -> String {
        guard case .success(let bytes) = readWholeFile(path) else { return "" }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func tagRenamesFilesAndTheIndexFollows() throws {
        let (dir, loc) = try IndexCLITests.setUp()
        defer { dir.remove() }
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        let n = try IndexCLITests.run(loc + ["count", "from:alice OR from:bob"]).stdoutString.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let r = try IndexCLITests.run(loc + ["tag", "+work", "+to do", "+flagged", "-unread", "--", "from:alice OR from:bob"])
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(r.stdoutString.hasPrefix("mo-index: \(n) message(s) changed, "))
        #expect(Self.read(dir.path + "/mail/INBOX/dovecot-keywords") == "0 $label2\n1 to=20do\n")
        #expect(Self.files(dir.path + "/mail/INBOX/cur").filter { $0.hasSuffix(",FSab") }.count == Int(n))
        #expect(try IndexCLITests.run(loc + ["count", "tag:work", "tag:\"to do\"", "tag:flagged"]).stdoutString == "\(n)\n")

        let tags = try IndexCLITests.run(loc + ["tags"])
        #expect(tags.stdoutString.contains("\nwork\t\(n)\n") && tags.stdoutString.contains("to do\t\(n)\n"))
        #expect(!tags.stdoutString.contains("unread"))  // every fixture file is seen

        let json = try IndexCLITests.run(loc + ["tags", "--format", "json"])
        let d = try JSONOutputTests.parse(json, "tags --format json")
        if let d { try JSONOutputTests.expectDocumented(d, "tags") }
        let list = d?["tags"] as? [[String: Any]] ?? []
        #expect(list.contains { $0["tag"] as? String == "work" && $0["messages"] as? Int == Int(n) })

        let untag = try IndexCLITests.run(loc + ["tag", "-work", "--", "tag:work"])
        #expect(untag.status == 0)
        #expect(try IndexCLITests.run(loc + ["count", "tag:work"]).stdoutString == "0\n")
        #expect(try IndexCLITests.run(loc + ["count", "tag:\"to do\""]).stdoutString == "\(n)\n")
    }

    @Test func badChangesAreUsageErrors() throws {
        let (dir, loc) = try IndexCLITests.setUp()
        defer { dir.remove() }
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        #expect(try IndexCLITests.run(loc + ["tag", "work", "--", "*"]).status == 64)
        #expect(try IndexCLITests.run(loc + ["tag", "+", "--", "*"]).status == 64)
        #expect(try IndexCLITests.run(loc + ["tag", "+work"]).status == 64)
        #expect(try IndexCLITests.run(loc + ["tags", "--format-version", "2"]).status == 64)
    }

    /// Issue #14 (docs/reliability.md, "Bad local state"): a damaged `local-tags` or `dovecot-keywords` line
    /// stops the commands that write them with one `FILE:LINE` line, exit 65, before any change, and the
    /// file is left as it was; `mo-index update` indexes all the same.
    @Test func damagedTagFilesAreNamedAndLeftAsTheyWere() throws {
        let (dir, loc) = try IndexCLITests.setUp()
        defer { dir.remove() }
        let localTags = dir.path + "/local-tags", keywords = dir.path + "/mail/INBOX/dovecot-keywords"
        try "+kept -- id:a@x\n+lost\u{1B}[2J id:b@x\n".write(toFile: localTags, atomically: false, encoding: .utf8)
        try "0 work\n1x todo\n".write(toFile: keywords, atomically: false, encoding: .utf8)
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        let before = Self.files(dir.path + "/mail/INBOX/cur")
        let tag = try IndexCLITests.run(loc + ["tag", "+later", "--", "*"])
        #expect(tag.status == 65)
        #expect(tag.stderrString == "mo-index: \(localTags):2: no ' -- ' between the tags and the message\n")
        #expect(try IndexCLITests.run(loc + ["tags", "--unsynced"]).status == 65)
        #expect(Self.read(localTags) == "+kept -- id:a@x\n+lost\u{1B}[2J id:b@x\n")

        try "+kept -- id:a@x\n".write(toFile: localTags, atomically: false, encoding: .utf8)
        let tagged = try IndexCLITests.run(loc + ["tag", "+later", "--", "*"])
        #expect(tagged.status == 65)
        #expect(tagged.stderrString == "mo-index: \(keywords):2: expected \"INDEX KEYWORD\", found \"1x todo\"\n")
        #expect(Self.files(dir.path + "/mail/INBOX/cur") == before, "nothing renamed")
        #expect(Self.read(keywords) == "0 work\n1x todo\n")
    }

    /// Issue 26 item 4: a tag that finds no letter goes to the folder's mo-keywords, quietly, and is a tag
    /// like any other (mo-sync carries it; `UnsyncedKeywordsTests`).
    @Test func aFullKeywordTableKeepsTheTagInMoKeywords() throws {
        let (dir, loc) = try IndexCLITests.setUp()
        defer { dir.remove() }
        let table = (0..<26).map { "\($0) k\($0)\n" }.joined()
        try table.write(toFile: dir.path + "/mail/INBOX/dovecot-keywords", atomically: false, encoding: .utf8)
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        let before = Self.files(dir.path + "/mail/INBOX/cur")
        let r = try IndexCLITests.run(loc + ["tag", "+later", "--", "from:alice OR from:bob"])
        #expect(r.status == 0)
        #expect(r.stderrString == "")
        #expect(Self.files(dir.path + "/mail/INBOX/cur") == before)  // nothing renamed
        #expect(Self.read(dir.path + "/mail/INBOX/mo-keywords").hasPrefix("# mo-keywords 1\n"))
        #expect(access(dir.path + "/local-tags", F_OK) != 0)
        let n = try IndexCLITests.run(loc + ["count", "from:alice OR from:bob"]).stdoutString
        #expect(try IndexCLITests.run(loc + ["count", "tag:later"]).stdoutString == n)

        // Tags an older version kept in local-tags are still listed as unsynced.
        try "+kept -- id:old@x\n".write(toFile: dir.path + "/local-tags", atomically: false, encoding: .utf8)
        let unsynced = try IndexCLITests.run(loc + ["tags", "--unsynced"])
        #expect(unsynced.stdoutString.hasPrefix("kept\tlocal-tags ("))
        let json = try IndexCLITests.run(loc + ["tags", "--unsynced", "--format", "json"])
        let d = try JSONOutputTests.parse(json, "tags --unsynced --format json")
        if let d { try JSONOutputTests.expectDocumented(d, "tags --unsynced") }
        #expect((d?["unsynced"] as? [[String: Any]])?.first?["tag"] as? String == "kept")

        // Deleting the index keeps the tag: the rebuild reads mo-keywords.
        try FileManager.default.removeItem(atPath: dir.path + "/index")
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        #expect(try IndexCLITests.run(loc + ["count", "tag:later"]).stdoutString == n)
    }

    /// A configured account: `[keywords]`, `[[tag-rule]]` on new mail only, mo-sync's unsynced keywords.
    @Test func rulesTagNewMailAndUnsyncedKeywordsAreListed() throws {
        let dir = try TemporaryDirectory("mo-tag-cli")
        defer { dir.remove() }
        let cur = dir.path + "/mail/INBOX/cur"
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(atPath: dir.path + "/mail/INBOX/" + sub, withIntermediateDirectories: true)
        }
        func deliver(_ name: String, from: String, id: String) throws {
            try "From: \(from)\nSubject: s\nMessage-ID: <\(id)>\n\nbody\n".write(
                toFile: cur + "/" + name, atomically: false, encoding: .utf8)
        }
        try deliver("2.b.host:2,", from: "other@example.com", id: "b@x")
        let config = dir.path + "/config.toml"
        try writePrivateFile(
            config,
            """
            [general]
            state-dir = "\(dir.path)/state"
            index-dir = "\(dir.path)/cache/index"
            \(minimalConfig(maildir: dir.path + "/mail"))
            [keywords]
            "$label2" = "job"
            [[tag-rule]]
            query = "from:boss@example.com"
            tags = ["+job", "-unread"]
            """)
        let loc = ["--config", config]
        // A new index: its mail is not new, no rule runs.
        #expect(try IndexCLITests.run(loc + ["update"]).stdoutString == "mo-index: 1 new\n")
        try deliver("1.a.host:2,", from: "boss@example.com", id: "a@x")
        let u = try IndexCLITests.run(loc + ["update"])
        #expect(u.status == 0, "\(u.stderrString)")
        #expect(u.stdoutString.contains("1 tagged by rules"))
        #expect(Self.files(cur) == ["1.a.host:2,Sa", "2.b.host:2,"])
        #expect(Self.read(dir.path + "/mail/INBOX/dovecot-keywords") == "0 $label2\n")
        #expect(try IndexCLITests.run(loc + ["query", "--output", "message-ids", "tag:job"]).stdoutString == "a@x\n")

        // A renamed old message is not new: the rule leaves it; a new one is tagged.
        try FileManager.default.moveItem(atPath: cur + "/1.a.host:2,Sa", toPath: cur + "/1.a.host:2,FS")
        try deliver("3.c.host:2,", from: "boss@example.com", id: "c@x")
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        #expect(Self.files(cur) == ["1.a.host:2,FS", "2.b.host:2,", "3.c.host:2,Sa"])
        #expect(try IndexCLITests.run(loc + ["query", "--output", "message-ids", "tag:job"]).stdoutString == "c@x\n")

        // New mail that another command's update finds meets the rules too.
        try deliver("4.d.host:2,", from: "boss@example.com", id: "d@x")
        #expect(try IndexCLITests.run(loc + ["tag", "+seen-it", "--", "id:b@x"]).status == 0)
        #expect(
            try IndexCLITests.run(loc + ["query", "--output", "message-ids", "--sort", "oldest", "tag:job"]).stdoutString == "c@x\nd@x\n")

        try FileManager.default.createDirectory(atPath: dir.path + "/state/work", withIntermediateDirectories: true)
        try
            "INBOX\t$label2\tthe server's PERMANENTFLAGS allow no new keywords\nnonsense\nArchive\tmy=20tag\nSent\tmy=20tag\tthe folder is full\n"
            .write(toFile: dir.path + "/state/work/unsynced-keywords", atomically: false, encoding: .utf8)
        let unsynced = try IndexCLITests.run(loc + ["tags", "--unsynced"])
        #expect(
            unsynced.stdoutString == "job\twork/INBOX: the server's PERMANENTFLAGS allow no new keywords\n"
                + "my tag\twork/Sent: the folder is full\n")  // a line without its reason is malformed: passed over
        let json = try IndexCLITests.run(loc + ["tags", "--unsynced", "--format", "json"])
        let d = try JSONOutputTests.parse(json, "tags --unsynced (accounts)")
        if let d { try JSONOutputTests.expectDocumented(d, "tags --unsynced (accounts)") }
    }
}
