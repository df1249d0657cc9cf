@testable import Maildir

/// Moves between folders, content replacement, folder removal and message reading (`MaildirFolder+Files`,
/// `MessageFile`): the file operations SyncRunner used to make itself.
@Suite struct MaildirFileOperationTests {
    private func folders(_ t: TempDirectory, root: String = "") throws -> (MaildirFolder, MaildirFolder) {
        let a = MaildirFolder(path: t.path + root + "/A"), b = MaildirFolder(path: t.path + root + "/B")
        try a.create(); try b.create()
        return (a, b)
    }

    @Test func moveKeepsSubdirectoryAndName() throws {
        let t = TempDirectory()
        let (a, b) = try folders(t)
        let path = try a.deliver(Array("one".utf8), to: .cur, flags: [.seen], uid: 7)
        let outcome = try b.moveIn(path, from: a)
        let target = b.directory(.cur) + "/" + lastComponent(path)
        #expect(outcome == .moved(target))
        #expect(t.read(target) == "one")
        #expect(t.list("A/cur").isEmpty)
    }

    /// The old move in SyncRunner chose the subdirectory by looking for "/new/" anywhere in the path, so a
    /// Maildir under a directory named `new` sent messages from `cur/` to `new/`.
    @Test func moveUnderARootNamedNewStaysInCur() throws {
        let t = TempDirectory()
        let (a, b) = try folders(t, root: "/new")
        let path = try a.deliver(Array("one".utf8), to: .cur, flags: [.seen])
        #expect(try b.moveIn(path, from: a) == .moved(b.directory(.cur) + "/" + lastComponent(path)))
        #expect(t.list("new/B/new").isEmpty)
    }

    /// Issue #16: moving onto an existing name fails cleanly and loses neither file.
    @Test func moveOntoAnExistingNameIsRefusedAndLosesNeitherFile() throws {
        let t = TempDirectory()
        let (a, b) = try folders(t)
        let path = try a.deliver(Array("mine".utf8), to: .cur, flags: [.seen])
        let existing = b.directory(.cur) + "/" + lastComponent(path)
        t.write("B/cur/" + lastComponent(path), "theirs")
        #expect(try b.moveIn(path, from: a) == .refused(EEXIST))
        #expect(t.read(path) == "mine")
        #expect(t.read(existing) == "theirs")
        #expect(t.list("A/cur").count == 1 && t.list("B/cur").count == 1)
    }

    /// Issue 17: a move with the letters re-mapped to the target's keyword table is one rename.
    @Test func moveWithFlagsRenamesInTheSameStep() throws {
        let t = TempDirectory()
        let (a, b) = try folders(t)
        let path = try a.deliver(Array("one".utf8), to: .cur, flags: MaildirFlags(letters: "Sa")!)
        guard case .moved(let target) = try b.moveIn(path, from: a, flags: MaildirFlags(letters: "Sc")!) else {
            Issue.record("not moved"); return
        }
        #expect(target.hasSuffix(":2,Sc") && target.hasPrefix(b.directory(.cur) + "/"))
        #expect(t.read(target) == "one")
        #expect(t.list("A/cur").isEmpty)
        // A message in new/ with no flags keeps a bare name there.
        let fresh = try a.deliver(Array("two".utf8), to: .new)
        #expect(try b.moveIn(fresh, from: a, flags: []) == .moved(b.directory(.new) + "/" + lastComponent(fresh)))
    }

    @Test func moveOfAVanishedFileOrAForeignPathChangesNothing() throws {
        let t = TempDirectory()
        let (a, b) = try folders(t)
        #expect(try b.moveIn(a.directory(.cur) + "/gone:2,S", from: a) == .refused(ENOENT))
        #expect(throws: MaildirError.self) { try b.moveIn(t.path + "/elsewhere", from: a) }
        #expect(throws: MaildirError.self) { try b.moveIn(a.directory("tmp") + "/x", from: a) }
    }

    @Test func replaceContentKeepsTheNameAndLeavesNoTmpFile() throws {
        let t = TempDirectory()
        let (a, _) = try folders(t)
        let path = try a.deliver(Array("X-TUID: abc\nSubject: s\n\nbody\n".utf8), to: .cur, flags: [.seen])
        try a.replaceContent(path: path, with: Array("Subject: s\n\nbody\n".utf8))
        #expect(t.read(path) == "Subject: s\n\nbody\n")
        #expect(t.list("A/tmp").isEmpty && t.list("A/cur").count == 1)
        #expect(throws: MaildirError.self) { try a.replaceContent(path: t.path + "/elsewhere", with: []) }
    }

    @Test func removeIfEmptyRemovesTheWholeFolder() throws {
        let t = TempDirectory()
        let (a, _) = try folders(t)
        t.write("A/" + MaildirKeywords.fileName, "0 $Junk\n")
        t.write("A/" + ExtraKeywords.fileName, "# mo-keywords 1\nu\tk27\n")
        #expect(a.removeIfEmpty())
        #expect(!t.list("").contains("A"))
    }

    /// The old removal unlinked `dovecot-keywords` even when `cur/` still held a message (one that arrived
    /// after the scan), and left the folder without `cur/` or `new/`.
    @Test func removeIfEmptyKeepsAFolderThatHoldsAMessage() throws {
        let t = TempDirectory()
        let (a, _) = try folders(t)
        t.write("A/" + MaildirKeywords.fileName, "0 $Junk\n")
        t.write("A/" + ExtraKeywords.fileName, "# mo-keywords 1\nu\tk27\n")
        _ = try a.deliver(Array("late".utf8), to: .cur)
        #expect(!a.removeIfEmpty())
        #expect(a.exists)
        #expect(t.list("A") == ["cur", MaildirKeywords.fileName, ExtraKeywords.fileName, "new", "tmp"].sorted())
        #expect(t.list("A/cur").count == 1)
    }

    @Test func removeIfEmptyLeavesSubfoldersAndTmpLeftovers() throws {
        let t = TempDirectory()
        let (a, _) = try folders(t)
        try MaildirFolder(path: a.path + "/Sub").create()
        t.write("A/tmp/leftover", "x")
        #expect(a.removeIfEmpty())
        #expect(!a.exists)
        #expect(t.list("A") == ["Sub", "tmp"])
    }

    @Test func messageFileReadsInChunks() throws {
        let t = TempDirectory()
        let (a, _) = try folders(t)
        let path = try a.deliver(Array("0123456789".utf8))
        let file = try MessageFile(path: path)
        #expect(file.size == 10)
        var chunks: [String] = []
        try file.forEachChunk(of: 4) { chunks.append(String(decoding: $0, as: UTF8.self)) }
        #expect(chunks == ["0123", "4567", "89"])
        #expect(try MessageFile.contents(of: path) == Array("0123456789".utf8))
        #expect(throws: MaildirError.self) { try MessageFile(path: t.path + "/missing") }
    }
}
