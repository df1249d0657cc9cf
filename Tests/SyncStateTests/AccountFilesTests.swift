import Testing
import MoCore
import MoTestSupport
@testable import SyncState
#if canImport(Glibc)
    import Glibc
#endif

@Suite struct AccountFilesTests {
    @Test func theGmailModeMarkRoundTripsAndAnythingElseReadsAsNone() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(!AccountFiles.isGmailMode(dir.path) && AccountFiles.gmailMark(dir.path) == nil)
        try AccountFiles.markGmailMode(dir.path)
        #expect(AccountFiles.isGmailMode(dir.path) && AccountFiles.gmailMark(dir.path) == nil)
        let mark = GmailMark(uidValidity: 600001, uidNext: 59, highestModSeq: 123, exists: 58, counts: ["INBOX": 20, "Archive": 38])
        try AccountFiles.markGmailMode(dir.path, mark: mark)
        #expect(AccountFiles.gmailMark(dir.path) == mark)
        #expect(mark.line == "mark 600001 59 123 58 Archive=38 INBOX=20")
        for bad in ["mark 1 2 3", "mark 1 2 3 x", "mark 1 2 3 4 INBOX", "mark 1 2 3 4 INBOX=1 INBOX=2", "note 1 2 3 4", "mark -1 2 3 4"] {
            #expect(GmailMark(line: bad) == nil, "\(bad)")
        }
        try AccountFiles.markGmailMode(dir.path, mark: nil)  // a run that changed the server leaves none
        #expect(AccountFiles.isGmailMode(dir.path) && AccountFiles.gmailMark(dir.path) == nil)
    }

    @Test func recordsSyncsOnlyWithAStateFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let account = dir.path + "/acct"
        #expect(!AccountFiles.recordsSyncs(account))  // missing directory
        AccountFiles.writeRoles([("sent", "Sent")], in: account)
        #expect(!AccountFiles.recordsSyncs(account))
        try FolderStateStore(accountDirectory: account, key: FolderStateStore.key(forLocalPath: "INBOX"))
            .commit(FolderState(mailbox: "INBOX", uidValidity: 1, uidNext: 2, highestModSeq: 3), completeTable: RecordTable([]))
        #expect(AccountFiles.recordsSyncs(account))
    }

    @Test func rolesAreRewrittenOnlyWhenTheyChange() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/roles"
        AccountFiles.writeRoles([("sent", "Sent")], in: dir.path)
        #expect(try readWholeFile(path).get() == Array("sent Sent\n".utf8))
        var before = stat(), after = stat()
        stat(path, &before)
        AccountFiles.writeRoles([("sent", "Sent")], in: dir.path)
        stat(path, &after)
        #expect(before.st_ino == after.st_ino)  // unchanged: not replaced
        AccountFiles.writeRoles([("trash", "Trash")], in: dir.path)
        #expect(try readWholeFile(path).get() == Array("trash Trash\n".utf8))
    }

    /// Issue 17: the unsynced-keywords file, in the exact format mo-index reads.
    @Test func unsyncedKeywordsRoundTripSortedAndGoneWhenEmpty() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/" + AccountFiles.unsyncedKeywordsName
        let items = [
            UnsyncedKeyword(mailbox: "Lists/dev", keyword: "k27", reason: UnsyncedKeyword.folderFull),
            UnsyncedKeyword(mailbox: "Bad\r\nname", keyword: "x", reason: "r"),
            UnsyncedKeyword(mailbox: "INBOX", keyword: "project-x", reason: UnsyncedKeyword.refusedByServer),
            UnsyncedKeyword(mailbox: "INBOX", keyword: "project-x", reason: UnsyncedKeyword.refusedByServer),
            UnsyncedKeyword(mailbox: "Bad\tname", keyword: "x", reason: "r")
        ]
        AccountFiles.writeUnsyncedKeywords(items, in: dir.path)
        #expect(
            String(decoding: try readWholeFile(path).get(), as: UTF8.self) == """
                Bad%09name\tx\tr
                Bad%0D%0Aname\tx\tr
                INBOX\tproject-x\tthe server does not accept new keywords in this folder (PERMANENTFLAGS without \\*)
                Lists/dev\tk27\tthe folder already holds 26 keywords, the most a Maildir folder can

                """)
        #expect(AccountFiles.unsyncedKeywords(in: dir.path) == Array(Set(items)).sorted())
        AccountFiles.writeUnsyncedKeywords([], in: dir.path)
        #expect(access(path, F_OK) != 0)
        #expect(AccountFiles.unsyncedKeywords(in: dir.path).isEmpty)
    }
}
