@testable import SyncRunner

/// Issue #14: files a run passes over (empty, unreadable, not a message) block nothing else, are never
/// deleted, and leave the folder without a directory stamp, so the next run looks at them again.
@Suite struct PassedOverFileTests {
    func stamp(_ f: SyncFixture, _ folder: String) throws -> LocalStamp? {
        try FolderStateStore(accountDirectory: f.dir.path + "/state/test", key: FolderStateStore.key(forLocalPath: folder))
            .load(mailbox: folder).state.localStamp
    }

    func write(_ path: String, _ text: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        _ = Array(text.utf8).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    @Test func anEmptyFileIsSkippedWithANoteAndBlocksNothing() throws {
        let f = try SyncFixture(seed: false)
        try f.sync()
        try f.addLocal("INBOX", subject: "beside-the-empty-ones")
        // One empty file in new/ (its name holds an escape sequence), one in cur/.
        let inNew = f.maildir + "/INBOX/new/1700000000.M1P1Q1R1.empty\u{1B}[31m"
        let inCur = f.maildir + "/INBOX/cur/1700000001.M2P2Q2R2.empty:2,S"
        write(inNew, "")
        write(inCur, "")

        for run in 1...2 {
            let s = try f.sync()  // no folder error, on every run
            #expect(s["INBOX"]?.uploaded == (run == 1 ? 1 : 0))
            let notes = s["INBOX"]?.notes ?? []
            #expect(notes.contains("\"\(f.maildir)/INBOX/new/1700000000.M1P1Q1R1.empty\\u{1B}[31m\": empty file; not uploaded"), "\(notes)")
            #expect(notes.contains("\(quotedForMessage(inCur)): empty file; not uploaded"), "\(notes)")
            #expect(access(inNew, F_OK) == 0 && access(inCur, F_OK) == 0)
            #expect(try stamp(f, "INBOX") == nil)
        }
        #expect(try f.runBinary().status == 0)

        // Once it has content (written in place, which moves no directory time), it is uploaded.
        let fd = open(inCur, O_WRONLY)
        _ = Array(SyncFixture.message("filled-in-place")).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect(try f.sync()["INBOX"]?.uploaded == 1)
    }

    /// A synced file renamed by another program to a name the Maildir code refuses (a letter repeated) is
    /// still the message: its pair is held, not read as a deletion, until the name is valid again.
    @Test func aFileWhoseNameIsRefusedKeepsItsMessageOnTheServer() throws {
        let f = try SyncFixture(seed: false)
        try f.sync()
        try f.addLocal("INBOX", subject: "renamed-badly")
        try f.sync()
        let entry = try #require(try f.files("INBOX").first)
        let bad = f.maildir + "/INBOX/cur/" + entry.unique + ":2,FFS"
        #expect(rename(entry.path, bad) == 0)
        for _ in 1...2 {
            let s = try f.sync()
            #expect(s["INBOX"]?.deletedRemote == 0)
            #expect(s["INBOX"]?.notes.contains { $0.contains("flag \"F\" repeated; skipped") } == true, "\(s["INBOX"]?.notes ?? [])")
            let (c, uids) = try f.selected("INBOX")
            c.logout()
            #expect(uids.count == 1)
            #expect(access(bad, F_OK) == 0)
        }
        // A change on the server while it is held is not passed over: once the name is valid again (with
        // its flags as before), the change comes down.
        let (c, uids) = try f.selected("INBOX")
        try c.store(UIDSet(uids[0]), StoreAction(.add, [.answered]))
        c.logout()
        _ = try f.sync()
        #expect(rename(bad, f.maildir + "/INBOX/cur/" + entry.unique + ":2,FS") == 0)
        let mended = try f.sync()["INBOX"]
        #expect(mended?.flagsUp == 1 && mended?.flagsDown == 1, "\(String(describing: mended))")
        #expect(try f.files("INBOX").first?.flags == MaildirFlags(letters: "FRS"))
        try f.expectInSync("after the name is mended")
    }

    /// The fault hook makes opening the file fail with EACCES, as chmod 000 does for anyone but root.
    @Test func aFileUnreadableInOneRunIsUploadedOnceReadable() throws {
        let f = try SyncFixture(seed: false)
        try f.sync()
        let before = Set(try f.files("INBOX").map(\.unique))
        try f.addLocal("INBOX", subject: "unreadable-for-a-while")
        let unique = try #require(try f.files("INBOX").map(\.unique).first { !before.contains($0) })
        // The directories' last change is made old, so that a stamp could be kept (`DirectoryStamp.verdict`).
        for sub in ["cur", "new"] {
            let old = timespec(tv_sec: time(nil) - 3600, tv_nsec: 123)
            #expect(utimensat(AT_FDCWD, f.maildir + "/INBOX/" + sub, [old, old], 0) == 0)
        }

        let locked = try ChildProcess.run(
            [TestPaths.binDirectory + "/mo-sync", "--config", f.configPath],
            environment: ["MO_FAIL_OPEN": unique])
        #expect(locked.status == 0, "\(locked.stderrString)")
        #expect(locked.stderrString.contains("cannot read \(f.maildir)/INBOX/cur/\(unique)"), "\(locked.stderrString)")
        #expect(try stamp(f, "INBOX") == nil)

        // Readable again, with the directories exactly as they were: the next run finds and uploads it.
        #expect(try f.sync()["INBOX"]?.uploaded == 1)
        try f.expectInSync("after the upload")
        #expect(try stamp(f, "INBOX") != nil)
    }

    /// A file the scan itself skips (here a FIFO with a message's name) also withholds the stamp.
    @Test func aScanThatSkippedAFileRecordsNoStamp() throws {
        let f = try SyncFixture(seed: false)
        try f.sync()
        // Directories changed in the instant of a scan may not be stamped (`DirectoryStamp.verdict`): made
        // old, the next run stamps them whatever the machine's load.
        for sub in ["cur", "new"] {
            let old = timespec(tv_sec: time(nil) - 3600, tv_nsec: 123)
            #expect(utimensat(AT_FDCWD, f.maildir + "/INBOX/" + sub, [old, old], 0) == 0)
        }
        try f.sync()
        #expect(try stamp(f, "INBOX") != nil)
        #expect(mkfifo(f.maildir + "/INBOX/cur/1700000002.M3P3Q3R3.fifo:2,S", 0o600) == 0)
        let s = try f.sync()
        #expect(s["INBOX"]?.notes.contains { $0.hasSuffix("not a regular file; skipped") } == true)
        #expect(try stamp(f, "INBOX") == nil)
    }
}
