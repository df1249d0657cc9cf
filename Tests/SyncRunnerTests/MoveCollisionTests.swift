/// A message moved on the server is moved locally with `MaildirFolder.moveIn`, which never overwrites. The
/// old move was a plain rename(2): a file of the same name in the destination folder was replaced, and lost.
@Suite struct MoveCollisionTests {
    @Test func serverMoveOntoAnExistingLocalNameLosesNeitherFile() throws {
        let f = try SyncFixture()
        try f.sync()
        let (c, uids) = try f.selected("testdir")
        defer { c.logout() }
        let uid = uids[3]
        try c.move(UIDSet(uid), to: MailboxName("cjk"))

        // The moved message's local file, and a different message under the same name in the destination.
        let store = FolderStateStore(
            accountDirectory: f.config.stateDirectory + "/" + f.account.name,
            key: FolderStateStore.key(forLocalPath: "testdir"))
        let unique = try #require(try store.load(mailbox: "testdir").table.record(uid: uid)?.unique)
        let source = try #require(try f.files("testdir").first { $0.unique == unique })
        let subdir = source.path.dropLast(source.filename.count + 1).suffix(3)  // "new" or "cur", as the move keeps it
        let squatter = f.maildir + "/cjk/" + subdir + "/" + source.filename
        let other = "From: me@example.com\nSubject: squatter\nMessage-ID: <squatter@local.test>\n\nNot the moved one.\n"
        let fd = open(squatter, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        #expect(fd >= 0)
        _ = Array(other.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)

        let s = try f.sync()
        #expect(s["testdir"]?.moved == 0)  // refused: transferred normally instead
        #expect(s["cjk"]?.new == 1 && s["cjk"]?.uploaded == 1)
        #expect(try MessageFile.contents(of: squatter) == Array(other.utf8))
        try f.expectInSync("after a server move onto a taken local name")
    }
}
