@testable import SyncRunner

/// What users reported (issue #15), against the private Dovecot.
@Suite struct UserReportTests {
    /// One message marked deleted on both sides is expunged on both and reported as one deletion.
    @Test func deletedOnBothSidesIsOneDeletion() throws {
        let f = try SyncFixture()
        try f.sync()
        let file = try #require(try f.files("testdir").first)
        try f.setLocalFlags(file, file.flags.isSeen ? "ST" : "T")
        let c = try f.imap()
        defer { c.logout() }
        _ = try c.select(MailboxName("testdir"))
        // The file's UID, from what a dry run would do with it (delete it there).
        var options = SyncOptions()
        options.dryRun = true
        let planned = try f.run(keeping: .planned, options).lines
        let uid = try #require(
            planned.compactMap { line -> UInt32? in
                let words = line.split(separator: " ")
                guard line.hasPrefix("testdir: "), let i = words.firstIndex(of: "UID"), i + 1 < words.count else { return nil }
                return UInt32(words[i + 1])
            }.first, "\(planned)")
        try c.store(UIDSet(uid), StoreAction(.add, [.deleted], silent: true))
        let s = try f.sync()
        #expect(s["testdir"]?.line == "testdir: -1 deleted", "\(s["testdir"]!.line)")
        try f.expectInSync("after a message deleted on both sides")
    }

    /// `--dry-run` prints what it would do on stdout, as `FOLDER: action`, and no progress lines without -v.
    @Test func dryRunPrintsThePlanNotProgress() throws {
        let f = try SyncFixture()
        try f.sync()
        try f.addLocal("testdir", subject: "dry-run-new")
        usleep(30_000)
        let r = try f.runBinary(["--dry-run"])
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(r.stdoutString.contains("testdir: append"), "\(r.stdoutString)")
        #expect(!r.stderrString.contains(": listing") && !r.stderrString.contains(": syncing"), "\(r.stderrString)")
        #expect(try f.files("testdir").count > 0)
        #expect(try f.sync()["testdir"]?.uploaded == 1)
    }

    /// A folder that exists only locally, under `--dry-run`: "would create", planned as a new mailbox (its
    /// files appended), exit 0, and the server untouched; the real run then creates it.
    @Test func dryRunWouldCreateALocalOnlyFolder() throws {
        let f = try SyncFixture()
        try f.sync()
        try MaildirFolder(path: f.maildir + "/dry-new").create()
        try f.addLocal("dry-new", subject: "dry-run-folder")
        var options = SyncOptions()
        options.dryRun = true
        let (byFolder, planned) = try f.run(keeping: .planned, options)
        let notes = byFolder.values.flatMap(\.notes)
        #expect(notes.contains("dry-new: would create mailbox dry-new on the server"), "\(notes)")
        #expect(!notes.contains { $0.contains("created mailbox") }, "\(notes)")
        #expect(byFolder["dry-new"]?.error == nil && planned.contains { $0.hasPrefix("dry-new: append ") }, "\(planned)")
        let r = try f.runBinary(["--dry-run"])
        #expect(r.status == 0, "\(r.stderrString)")
        let c = try f.imap()
        defer { c.logout() }
        #expect(try !c.list().contains { $0.mailbox.decoded == "dry-new" })
        #expect(try f.sync()["dry-new"]?.uploaded == 1)
    }
}
