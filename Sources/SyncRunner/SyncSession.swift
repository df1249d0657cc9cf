import IMAPClient
import IMAPCodec

extension IMAPConnection {
    /// What a sync session enables: QRESYNC (SELECT with the known UIDs, VANISHED) and CONDSTORE (MODSEQ in
    /// FETCH and STATUS, which also makes NOTIFY report flag changes in unselected folders, RFC 5465 §5.4).
    /// `enable` asks only for those the server offers.
    static let syncExtensions: [Capability] = [.qresync, .condstore]

    /// A session for syncing: logged in, with `syncExtensions` enabled; logged out again if ENABLE fails.
    /// The one way a sync connection is opened (the run's first and its extra ones); the NOTIFY listener
    /// enables the same on the connection it is handed (`enableSyncExtensions`).
    static func openForSync(_ settings: IMAPSettings, trace: IMAPTrace?) throws -> IMAPConnection {
        let imap = try IMAPConnection.open(settings, trace: trace)
        do { try imap.enableSyncExtensions() } catch {
            imap.logout()
            throw error
        }
        return imap
    }

    func enableSyncExtensions() throws { try enable(Self.syncExtensions) }
}
