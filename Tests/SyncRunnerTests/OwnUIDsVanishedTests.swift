@testable import SyncRunner

/// A message a run put on the server itself (APPEND, or UID MOVE into a folder) gets a UID at or above the
/// UIDNEXT its state saves (the SELECT's, taken before). When the server expunges it before the next run and
/// that run takes the server-only path, the VANISHED must still delete the local file. Found by
/// scripts/reliability: the VANISHED was cut at the saved UIDNEXT, the saved mod-sequence passed the expunge,
/// and the Maildir kept the message for good (every later run "up to date", the checker never OK again).
@Suite struct OwnUIDsVanishedTests {
    /// Expunges the highest UID of `folder` (the one the previous run put there) from another session.
    func expungeNewest(_ f: SyncFixture, _ folder: String) throws {
        let c = try f.imap()
        defer { c.logout() }
        _ = try c.select(MailboxName(folder))
        let uid = try #require(try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid).max())
        _ = try c.delete(UIDSet(uid))
    }

    @Test func expungeOfTheRunsOwnAppendReachesTheMaildir() throws {
        let f = try SyncFixture()
        try f.sync()
        try f.addLocal("testdir", subject: "own-append")
        usleep(50_000)  // past the directory-stamp window, so the next runs may trust the stamp
        #expect(try f.sync()["testdir"]?.uploaded == 1)
        usleep(50_000)
        try expungeNewest(f, "testdir")
        #expect(try f.sync()["testdir"]?.deletedLocal == 1)
        try f.expectInSync("after the server expunged what the previous run appended")
    }

    @Test func expungeOfTheRunsOwnMoveReachesTheMaildir() throws {
        let f = try SyncFixture()
        try f.sync()
        // Moved locally, keeping its unique name: the run sends UID MOVE testdir → cjk.
        let file = try #require(try f.files("testdir").first)
        #expect(rename(file.path, f.maildir + "/cjk/cur/" + file.filename) == 0)
        usleep(50_000)
        let moved = try f.sync()
        #expect((moved["cjk"]?.moved ?? 0) + (moved["testdir"]?.moved ?? 0) == 1)
        usleep(50_000)
        try expungeNewest(f, "cjk")
        #expect(try f.sync()["cjk"]?.deletedLocal == 1)
        try f.expectInSync("after the server expunged what the previous run moved in")
    }
}
