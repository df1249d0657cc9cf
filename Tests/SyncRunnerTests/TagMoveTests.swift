@testable import SyncRunner

/// Issue 17: a message moved between folders whose `dovecot-keywords` tables differ keeps its tags, on
/// disk and on the server, whichever side or tool moved it.
@Suite struct TagMoveTests {
    static let vocabulary = TagVocabulary()

    /// Tags one file the way `mo-index tag` does: a letter through the folder's table (saved first), one rename.
    static func tag(_ entry: MaildirEntry, in folder: String, add: [String]) throws -> String {
        let f = MaildirFolder(path: folder)
        var keywords = try MaildirKeywords.load(folder: folder)
        let change = MaildirTags.apply(add: add, remove: [], to: entry.flags, keywords: &keywords, vocabulary: vocabulary)
        #expect(change.overflow.isEmpty)
        try keywords.save(folder: folder)
        return try f.setFlags(path: entry.path, flags: change.flags, moveToCur: true)
    }

    static func tags(_ entry: MaildirEntry, in folder: String) throws -> Set<String> {
        MaildirTags.tags(of: entry.flags, keywords: try MaildirKeywords.load(folder: folder), vocabulary: vocabulary)
    }

    /// The server keywords of every message of a mailbox, lower-cased.
    static func serverKeywords(_ f: SyncFixture, _ mailbox: String) throws -> [Set<String>] {
        let c = try f.imap()
        defer { c.logout() }
        _ = try c.select(MailboxName(mailbox))
        return try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map { m in
            Set((m.flags ?? []).compactMap { if case .keyword(let k) = $0 { k.lowercased() } else { nil } })
        }
    }

    /// Both folders get different tables: testdir's letter a is `elsewhere`, cjk's letter a is `project`.
    static func prepare(_ f: SyncFixture) throws -> MaildirEntry {
        try f.sync()
        let other = try f.files("testdir")[0]
        _ = try tag(other, in: f.maildir + "/testdir", add: ["elsewhere"])
        let mine = try f.files("cjk")[0]
        _ = try tag(mine, in: f.maildir + "/cjk", add: ["project"])
        try f.sync()
        let moved = try #require(try f.files("cjk").first { $0.unique == mine.unique })
        #expect(moved.flags.keywords == "a")
        return moved
    }

    /// The sync after a move from cjk carries the move alone (nothing uploaded, fetched or flagged), and
    /// the message keeps its tag.
    static func expectMovedAlone(_ f: SyncFixture, _ moved: MaildirEntry, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let s = try f.sync()
        #expect(
            s["cjk"]?.moved == 1 && s.values.allSatisfy { $0.uploaded == 0 && $0.new == 0 && $0.flagsUp == 0 },
            sourceLocation: sourceLocation)
        try Self.expectTagged(f, unique: moved.unique, sourceLocation: sourceLocation)
    }

    static func expectTagged(_ f: SyncFixture, unique: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let there = try #require(try f.files("testdir").first { $0.unique == unique }, sourceLocation: sourceLocation)
        #expect(try tags(there, in: f.maildir + "/testdir").contains("project"), "\(there.filename)", sourceLocation: sourceLocation)
        #expect(!(try tags(there, in: f.maildir + "/testdir").contains("elsewhere")), sourceLocation: sourceLocation)
        #expect(try serverKeywords(f, "testdir").filter { $0.contains("project") }.count == 1, sourceLocation: sourceLocation)
        #expect(try serverKeywords(f, "testdir").filter { $0.contains("elsewhere") }.count == 1, sourceLocation: sourceLocation)
        try f.expectInSync("after the move", sourceLocation: sourceLocation)
        #expect(try f.sync().values.allSatisfy { !$0.changed }, sourceLocation: sourceLocation)
    }

    /// `mv` keeps the source's letters: the sync re-maps them (UID MOVE, then a rename in testdir).
    @Test func localMoveRemapsTheLetters() throws {
        let f = try SyncFixture()
        let moved = try Self.prepare(f)
        #expect(rename(moved.path, f.maildir + "/testdir/cur/" + moved.filename) == 0)
        try Self.expectMovedAlone(f, moved)
    }

    /// A move on the server: the file moves into testdir with testdir's letters in the same rename.
    @Test func serverMoveRemapsTheLetters() throws {
        let f = try SyncFixture()
        let moved = try Self.prepare(f)
        let c = try f.imap()
        _ = try c.select(MailboxName("cjk"))
        let uid = try #require(
            try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.first {
                ($0.flags ?? []).contains(.keyword("project"))
            }?.uid)
        _ = try c.move(UIDSet(uid), to: MailboxName("testdir"))
        c.logout()
        try Self.expectMovedAlone(f, moved)
    }

    /// `mo-index move` re-maps the letters as it moves; the sync recognises them as testdir's already.
    @Test func indexMoveRemapsOnceNotTwice() throws {
        let f = try SyncFixture()
        let moved = try Self.prepare(f)
        let index = TestPaths.binDirectory + "/mo-index"
        #expect(try ChildProcess.run([index, "--config", f.configPath, "update"]).status == 0)
        let r = try ChildProcess.run([index, "--config", f.configPath, "move", "folder:test/cjk", "testdir"])
        #expect(r.status == 0, "\(r.stdoutString)\(r.stderrString)")
        let there = try #require(try f.files("testdir").first { $0.unique == moved.unique })
        #expect(try Self.tags(there, in: f.maildir + "/testdir").contains("project"))
        let s = try f.sync()
        #expect(s["cjk"]?.moved ?? 0 >= 1 && s.values.allSatisfy { $0.uploaded == 0 && $0.new == 0 })
        try Self.expectTagged(f, unique: moved.unique)
    }

    /// Retag, then archive (review finding): tags changed before `mo-index move` so that the file's new
    /// letters, read through the source's table, give the pair's old keywords. The sync must take them
    /// as the destination's (the move listed the file in `mo-remapped`), not re-map them back.
    @Test func indexMoveAfterARetagKeepsTheNewTags() throws {
        let f = try SyncFixture()
        let moved = try Self.prepare(f)  // cjk: a = project; testdir: a = elsewhere
        let index = TestPaths.binDirectory + "/mo-index"
        #expect(try ChildProcess.run([index, "--config", f.configPath, "update"]).status == 0)
        // -project +elsewhere in cjk: elsewhere takes cjk's letter b; moved to testdir it becomes a, which
        // read through cjk's table is `project`, the base's tag.
        let retag = try ChildProcess.run([
            index, "--config", f.configPath, "tag", "-project", "+elsewhere", "--",
            "folder:test/cjk and tag:project"
        ])
        #expect(retag.status == 0, "\(retag.stderrString)")
        let r = try ChildProcess.run([index, "--config", f.configPath, "move", "folder:test/cjk and tag:elsewhere", "testdir"])
        #expect(r.status == 0, "\(r.stdoutString)\(r.stderrString)")
        #expect(RemappedFiles.load(folder: f.maildir + "/testdir").contains(moved.unique))
        try f.sync()
        let there = try #require(try f.files("testdir").first { $0.unique == moved.unique })
        let tags = try Self.tags(there, in: f.maildir + "/testdir")
        #expect(tags.contains("elsewhere") && !tags.contains("project"), "\(there.filename): \(tags)")
        #expect(!RemappedFiles.load(folder: f.maildir + "/testdir").contains(moved.unique))
        #expect(try f.sync().values.allSatisfy { !$0.changed })
    }

    /// Which letters a file found after a local move carries, rule by rule (`lettersAlreadyTheTarget`).
    /// Source: a project, b other, c late; destination: a elsewhere, b project; the base is `a` (project).
    @Test(
        arguments: [
            ("b", true, "through the destination's table the file has the base's keywords"),
            ("a", false, "through the source's table it has them: re-map"),
            ("ab", true, "a tag added since, one off either way: a tie keeps the letters"),
            ("ac", false, "closer to the base through the source's table"),
            ("c", true, "closer to the base through the destination's table")
        ] as [(String, Bool, String)])
    func lettersOfAMovedFile(file: String, target: Bool, reason: String) {
        let source = MaildirKeywords(parsing: Array("0 project\n1 other\n2 late\n".utf8))
        let destination = MaildirKeywords(parsing: Array("0 elsewhere\n1 project\n".utf8))
        #expect(
            MoveDetector.lettersAlreadyTheTarget(
                MaildirFlags(letters: file)!, base: MaildirFlags(letters: "a")!,
                source: source, target: destination) == target, "\(reason)")
    }
}
