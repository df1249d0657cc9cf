import ClientSettings
import IMAPClient
import IMAPCodec
import MoConfig
import MoCore
import OAuth2
import SMTPClient
import SyncState

/// The network side of `send` and `append`, behind a protocol so the runner's decisions can be tested
/// without servers. One instance serves one flush; `finish()` closes what it opened.
public protocol MailDelivery: AnyObject {
    /// Submits `message`; `beforeFinalDot` runs once only the final dot is left to write (see
    /// `SMTPSession.send`). Returns the server's acceptance reply. Failures should be `SMTPError`s (their
    /// `afterFinalDot` matters) or other `MoError`s.
    func send(
        envelope: SMTPEnvelope, message: [UInt8], account: Account,
        beforeFinalDot: @escaping () throws -> Void
    ) throws -> SMTPReply
    /// Whether `mailbox` (nil: the `\Sent` folder) already holds a message with this Message-ID.
    func mailboxHolds(messageID: String, mailbox: String?, account: Account) throws -> Bool
    /// Stores `message` in `mailbox` (nil: the `\Sent` folder); returns a note such as `Sent 17:4`.
    func append(message: [UInt8], flags: [String], mailbox: String?, account: Account) throws -> String
    func finish()
}

/// `MailDelivery` over the real servers: SMTPClient for sending (or the account's JMAP server,
/// `JMAPDelivery`), one IMAP connection per account for appending (opened on first use, logged out by `finish`).
public final class NetworkDelivery: MailDelivery {
    private var connections: [String: IMAPConnection] = [:]
    private var sentFolders: [String: MailboxName] = [:]
    /// Where mo-sync records each account's roles (`<state>/<account>/roles`); nil: none known.
    private let stateDirectory: String?

    public init(stateDirectory: String? = nil) { self.stateDirectory = stateDirectory }

    /// The account's OAuth2 tokens (`auth = "oauth2"`), kept beside its other state.
    private func tokens(_ account: Account) -> TokenBroker? {
        stateDirectory.flatMap { AccountSettings.tokenBroker(for: account, stateDirectory: $0) }
    }

    public func send(
        envelope: SMTPEnvelope, message: [UInt8], account: Account,
        beforeFinalDot: @escaping () throws -> Void
    ) throws -> SMTPReply {
        if account.sendsByJMAP, let jmap = account.jmap {
            return try JMAPDelivery.send(
                message: message, envelope: envelope, account: account, config: jmap, stateDirectory: stateDirectory,
                tokens: tokens(account), beforeCommit: beforeFinalDot)
        }
        guard let settings = AccountSettings.smtp(account, tokens: tokens(account)) else {
            throw GenericError(.config, "account \(account.name) has no [account.\(account.name).smtp] table")
        }
        switch try SMTPClient.send(envelope: envelope, message: message, settings: settings, beforeFinalDot: beforeFinalDot) {
        case .accepted(let reply): return reply
        }
    }

    public func mailboxHolds(messageID: String, mailbox: String?, account: Account) throws -> Bool {
        let (imap, name) = try open(account, mailbox)
        _ = try imap.select(name, readOnly: true)
        var found = false
        try imap.run(
            .uidSearch(.header("Message-ID", messageID)),
            untagged: {
                if case .search(let uids, _) = $0, !uids.isEmpty { found = true }
            })
        return found
    }

    public func append(message: [UInt8], flags: [String], mailbox: String?, account: Account) throws -> String {
        let (imap, name) = try open(account, mailbox)
        let result = try imap.append(to: name, flags: flags.compactMap(Flag.init), message: message)
        return result.map { "\(name) \($0.uidValidity):\($0.uid)" } ?? "\(name)"
    }

    public func finish() {
        for c in connections.values { c.logout() }
        connections = [:]
    }

    /// The account's connection and the mailbox to use: `mailbox`, else the Sent role mo-sync recorded
    /// (`AccountFiles.readRoles`, the same rule, `MailboxRole`, over its last LIST), else the folder a LIST
    /// marks `\Sent`, else one named "Sent" (any case), else a new "Sent".
    private func open(_ account: Account, _ mailbox: String?) throws -> (IMAPConnection, MailboxName) {
        let imap: IMAPConnection
        if let c = connections[account.name] {
            imap = c
        } else {
            guard let settings = AccountSettings.imap(account, tokens: tokens(account)) else {
                throw GenericError(
                    .config, "account \(account.name) is send-only (no [account.\(account.name).imap] table): it has no Sent folder")
            }
            imap = try IMAPConnection.open(settings)
            connections[account.name] = imap
        }
        if let mailbox { return (imap, MailboxName(mailbox)) }
        if let known = sentFolders[account.name] { return (imap, known) }
        if let stateDirectory, let recorded = AccountFiles.readRoles(in: stateDirectory + "/" + account.name)[MailboxRole.sent.rawValue] {
            let name = MailboxName(recorded)
            sentFolders[account.name] = name
            return (imap, name)
        }
        let all = try imap.list()
        let sent =
            MailboxRole.sent.mailbox(in: all)
            ?? all.first { $0.isSelectable && $0.mailbox.decoded?.lowercased() == "sent" }?.mailbox
        let name = sent ?? MailboxName("Sent")
        if sent == nil { try imap.create(name) }
        sentFolders[account.name] = name
        return (imap, name)
    }
}
