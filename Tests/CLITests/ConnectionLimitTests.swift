import Testing
import MoCore
import MoTestSupport

/// Issue 26 item 3: an account never holds more IMAP connections at once than its `connections` setting
/// (Gmail allows 15 an account, and refuses logins past it): the listing helper and the finishes'
/// connections count against one bound.
@Suite struct ConnectionLimitTests {
    @Test(arguments: [1, 2, 3])
    func neverMoreThanConfigured(_ n: Int) throws {
        let boxes = (1...4).map { b in
            MailStore.Mailbox("box\(b)", messages: (1...80).map { MailStore.message(UInt32($0), subject: "b\(b)m\($0)") })
        }
        let server = try ScriptedIMAPServer(mailboxes: boxes)
        let run = try ScriptedRun(server, account: "[account.t.sync]\nconnections = \(n)")
        defer { run.remove() }
        // The helper forced: it lists alongside while the finishes' connections would open.
        let r = try run.sync(env: ["MO_LISTING_HELPER": "always"])
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try run.files("box4").count == 80)
        #expect(server.peakOpenConnections <= n, "peak \(server.peakOpenConnections)")
        if n > 1 { #expect(server.peakOpenConnections > 1) }  // parallel where allowed
    }
}
