import ClientSettings
import JMAPClient
import MoConfig
import MoCore
import MoHTTP
import OAuth2
import SMTPClient

/// `send` for an account that sends through its JMAP server (a `[jmap]` table and no `[smtp]`), in named
/// steps, each its own request (docs/jmap.md, "Sending"):
///
/// 1. **places**: the identities, the Drafts and Sent mailboxes (made when missing);
/// 2. **upload** the message with CRLF line ends, as RFC 5322 has them (Cyrus refuses bare LF); Bcc kept:
///    the server removes it as it delivers (RFC 8621 §7.5), and the Sent copy keeps it, as the SMTP path's does;
/// 3. **import** it into Drafts with `$draft` and `$seen` (a repeat after a crash finds the same Email on
///    servers that key Emails by content: `alreadyExists`);
/// 4. **commit**: `beforeCommit` records that only the submission is left (the journal's `committing`);
/// 5. **submit**: `EmailSubmission/set`, whose `onSuccessUpdateEmail` moves the Email to Sent and removes
///    `$draft` (or `onSuccessDestroyEmail` when the account keeps no Sent copy). The Sent copy is that
///    Email: no second upload, and no `append` action.
///
/// Failures say what the runner needs: the server never reached in step 1 is an `OutageError` (no try
/// spent); a failure of step 5 that proves nothing was sent (`nothingSent`: a refusal, thrown on as a
/// `GenericError` naming the server) fails or retries as any send; any other failure of step 5 is
/// `SubmissionInDoubt`: the server may have sent it, so it is not resent by itself.
enum JMAPDelivery {
    static func send(
        message: [UInt8], envelope: SMTPEnvelope, account: Account, config: JMAPConfig, stateDirectory: String?,
        tokens: TokenBroker?, beforeCommit: () throws -> Void
    ) throws -> SMTPReply {
        let origin = WebAddress(config.url)?.origin ?? config.url
        let client: JMAPClient
        let places: (identities: [JMAPIdentity], drafts: String, sent: String)
        do {
            client = try AccountSettings.jmapClient(
                config, account: account.name, tokens: tokens, keptIn: stateDirectory.map { $0 + "/" + account.name }
            ).client
            places = try client.submissionPlaces()
        } catch let error as GenericError where error.kind == .temporary {
            throw OutageError(error.message.hasPrefix(origin) ? error.message : "\(origin): \(error.message)")
        }
        defer { client.close() }
        guard let identity = JMAPIdentity.choose(for: envelope.sender, in: places.identities) else {
            throw GenericError(.unavailable, "\(origin): account \(account.name) has no identity to send as")
        }
        guard message.count <= client.session.limits.maxSizeUpload else {
            throw GenericError(
                .unavailable,
                "\(origin): the message is \(message.count) bytes; the server takes at most \(client.session.limits.maxSizeUpload)")
        }
        let blob = try client.upload(LineEndings.toCRLF(message))
        let (email, existed) = try client.importEmail(blobID: blob, mailboxIDs: [places.drafts], keywords: ["$draft", "$seen"])
        try beforeCommit()
        // An Email this attempt did not create (the same bytes sent before: a `--retry` of one in doubt)
        // is never destroyed: it may be the Sent copy of the first send.
        let after: JMAPAfterSubmission =
            config.saveSent || existed ? .moveToSent(drafts: places.drafts, sent: places.sent) : .destroy
        do {
            let submission = try client.submit(
                emailID: email, identity: identity.id, envelope: jmapEnvelope(envelope), then: after)
            return SMTPReply(code: 250, lines: ["sent by \(origin) (EmailSubmission \(escapedForMessage(submission)))"])
        } catch let error where nothingSent(error) {
            // Nothing went out: the draft goes too, so no stray copy is left in Drafts (only one made here).
            if !existed { _ = try? client.setEmails(destroy: [email]) }
            let kind = (error as? any MoError)?.kind ?? .unavailable
            throw GenericError(kind, "\(origin): \((error as? any MoError)?.description ?? "\(error)")")
        } catch {
            throw SubmissionInDoubt(detail: "\(origin): \((error as? any MoError)?.description ?? "\(error)")")
        }
    }

    /// Whether a failure of the submission request proves the server sent nothing: a refusal of the
    /// submission (`notCreated`), an error answer of the method itself (`forbidden`, `invalidArguments`,
    /// `accountReadOnly`; not the server's own failures, after which it may have acted), or credentials
    /// refused before the request was looked at. Anything else (a lost or garbled answer) is in doubt.
    static func nothingSent(_ error: any Error) -> Bool {
        if error is SubmissionRefused { return true }
        if let e = error as? JMAPMethodError { return !["serverFail", "serverPartialFail", "serverUnavailable"].contains(e.type) }
        return (error as? GenericError)?.kind == .authentication
    }

    /// The SMTP envelope as JMAP's, DSN options as parameters (RFC 8621 §7: the SMTP parameters by name).
    static func jmapEnvelope(_ e: SMTPEnvelope) -> JMAPEnvelope {
        var mail: [(String, String)] = [], rcpt: [(String, String)] = []
        if let dsn = e.dsn {
            if let ret = dsn.ret { mail.append(("RET", ret.rawValue)) }
            if let id = dsn.envelopeID { mail.append(("ENVID", id)) }
            if let notify = dsn.notify { rcpt.append(("NOTIFY", notify.encoded)) }
        }
        return JMAPEnvelope(mailFrom: e.sender, rcptTo: e.recipients, mailParameters: mail, rcptParameters: rcpt)
    }
}

/// The submission request went out and no answer says what became of it: the server may have sent the
/// message. Like an SMTP failure after the final dot, the action becomes `unknown` and is never resent by itself.
public struct SubmissionInDoubt: MoError, Equatable {
    public let detail: String
    public var kind: ErrorKind { .temporary }
    public var description: String { "\(detail); the server may have sent it, so it is not resent by itself" }
}
