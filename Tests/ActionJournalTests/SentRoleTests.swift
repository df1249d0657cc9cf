import ActionJournal
import MoConfig
import MoCore
import MoTestSupport
import SyncState
import Testing

/// Which mailbox is Sent has one answer: the role mo-sync recorded from its LIST (`roles`), by the same
/// rule (`MailboxRole`) the journal applies to a LIST of its own when nothing is recorded yet.
@Suite struct SentRoleTests {
    static let message = Array("From: mo@example.com\r\nSubject: sent copy\r\nMessage-ID: <sent-role@mo.test>\r\n\r\nBody.\r\n".utf8)

    @Test func theSentCopyGoesToTheRecordedRoleElseToTheListedOne() throws {
        let server = try TestServer.start()  // its own: the copies must not land in a shared server's folders
        defer { server.stop() }
        let dir = try TemporaryDirectory("mo-sent-role")
        defer { dir.remove() }
        let config = try ConfigLoader.parse(text: server.accountConfig(in: dir.path), path: dir.path + "/config.toml")
        let account = config.accounts[0]

        let listed = NetworkDelivery(stateDirectory: config.stateDirectory)
        defer { listed.finish() }
        #expect(try listed.append(message: Self.message, flags: [], mailbox: nil, account: account).hasPrefix("Sent "))

        AccountFiles.writeRoles([("drafts", "Drafts"), ("sent", "Archive")], in: config.stateDirectory + "/test")
        #expect(AccountFiles.readRoles(in: config.stateDirectory + "/test") == ["drafts": "Drafts", "sent": "Archive"])
        let recorded = NetworkDelivery(stateDirectory: config.stateDirectory)
        defer { recorded.finish() }
        #expect(try recorded.append(message: Self.message, flags: [], mailbox: nil, account: account).hasPrefix("Archive "))
    }
}
