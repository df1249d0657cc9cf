import Testing
import MoCore
import MoTestSupport
@testable import SyncState
#if canImport(Glibc)
import Glibc
#endif

@Suite struct AccountFilesTests {
    @Test func recordsSyncsOnlyWithAStateFile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let account = dir.path + "/acct"
        #expect(!AccountFiles.recordsSyncs(account))   // missing directory
        AccountFiles.writeRoles("sent Sent\n", in: account)
        #expect(!AccountFiles.recordsSyncs(account))
        try FolderStateStore(accountDirectory: account, key: FolderStateStore.key(forLocalPath: "INBOX"))
            .commit(FolderState(mailbox: "INBOX", uidValidity: 1, uidNext: 2, highestModSeq: 3))
        #expect(AccountFiles.recordsSyncs(account))
    }

    @Test func rolesAreRewrittenOnlyWhenTheyChange() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/roles"
        AccountFiles.writeRoles("sent Sent\n", in: dir.path)
        #expect(try readWholeFile(path).get() == Array("sent Sent\n".utf8))
        var before = stat(), after = stat()
        stat(path, &before)
        AccountFiles.writeRoles("sent Sent\n", in: dir.path)
        stat(path, &after)
        #expect(before.st_ino == after.st_ino)   // unchanged: not replaced
        AccountFiles.writeRoles("trash Trash\n", in: dir.path)
        #expect(try readWholeFile(path).get() == Array("trash Trash\n".utf8))
    }
}
