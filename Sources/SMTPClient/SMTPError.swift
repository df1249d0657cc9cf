import MoCore
import MoNet

/// Why a send failed, with the server's own words where there are any.
///
/// `kind` classifies for the CLI edge: `.temporary` (network, timeouts, 4xx) is worth queueing and
/// retrying; `.unavailable` (5xx, rejected recipients) will fail again the same way; `.authentication` and
/// `.security` need the user; `.protocolViolation` means the server broke SMTP.
public struct SMTPError: MoError {
    public enum Code: String, Sendable, Equatable {
        /// The transport failed: DNS, connect, timeout, closed connection (see `network`).
        case network
        /// TLS failed or was refused: untrusted certificate, handshake, STARTTLS missing or refused.
        case tls
        /// The server answered a command with 4xx or 5xx (see `reply`).
        case rejected
        /// One or more recipients were refused (see `rejectedRecipients`); no DATA was sent.
        case recipientsRejected
        /// The server refused the credentials (535 and the like).
        case authentication
        /// No usable SASL mechanism, or AUTH is not offered while credentials are configured.
        case authenticationUnavailable
        /// The message is larger than the server's SIZE limit.
        case messageTooLarge
        /// The message or an address needs an extension the server lacks (8BITMIME, SMTPUTF8).
        case extensionMissing
        /// The server's bytes are not SMTP.
        case protocolViolation
        /// The settings or the envelope cannot be used (plaintext to a remote host, a bad address).
        case invalidRequest
        /// The password or token could not be obtained.
        case credentials
        /// The account's OAuth2 grant lapsed (`SignInNeededError`): the detail says how to mend it, alone.
        case signIn
    }

    /// A recipient the server refused, and how.
    public struct RejectedRecipient: Sendable, Equatable {
        public let address: String
        public let reply: SMTPReply
    }

    public let code: Code
    public let host: String
    public let port: Int
    /// What was being done and what went wrong, without the endpoint prefix.
    public let detail: String
    /// The server reply that caused the failure, if any.
    public let reply: SMTPReply?
    public let rejectedRecipients: [RejectedRecipient]
    /// The transport error underneath, if any.
    public let network: NetError?
    /// True when the final `.` of DATA was (at least partly) written before the failure: the server may have
    /// accepted the message and the reply was lost. Resending may deliver it twice; not resending may lose it.
    public let afterFinalDot: Bool
    /// True when the server was never reached: the name did not resolve, the connection was refused or
    /// unreachable, or it timed out or closed before the server's greeting; or the login's helper service
    /// (an OAuth2 token endpoint) was out (`OutageError`). Says nothing about the server or the message,
    /// only that the network (or a host) is down.
    public let unreachable: Bool
    private let explicitKind: ErrorKind?

    init(
        _ code: Code, host: String, port: Int, detail: String, reply: SMTPReply? = nil,
        rejectedRecipients: [RejectedRecipient] = [], network: NetError? = nil, afterFinalDot: Bool = false,
        unreachable: Bool = false, kind: ErrorKind? = nil
    ) {
        self.code = code
        self.host = host
        self.port = port
        self.detail = detail
        self.reply = reply
        self.rejectedRecipients = rejectedRecipients
        self.network = network
        self.afterFinalDot = afterFinalDot
        self.unreachable = unreachable
        self.explicitKind = kind
    }

    public var kind: ErrorKind {
        if let explicitKind { return explicitKind }
        switch code {
        case .network: return network?.kind ?? .temporary
        case .tls: return network?.code == .tlsSetup ? .config : .security
        case .rejected: return reply?.isTransientFailure == true ? .temporary : .unavailable
        case .recipientsRejected:
            // Any permanent refusal makes the whole send permanent: retrying cannot reach that recipient.
            return rejectedRecipients.contains { $0.reply.isPermanentFailure } ? .unavailable : .temporary
        case .authentication: return reply?.isTransientFailure == true ? .temporary : .authentication
        case .authenticationUnavailable: return .unavailable
        case .messageTooLarge: return .data
        case .extensionMissing: return .unavailable
        case .protocolViolation: return .protocolViolation
        case .invalidRequest: return .usage
        case .credentials: return .config
        case .signIn: return .authentication
        }
    }

    /// Whether a later retry of the same message may succeed.
    public var isTemporary: Bool { kind == .temporary }

    /// `smtp HOST:PORT: <detail>`, e.g. `smtp 127.0.0.1:2525: recipient <x@y> rejected: 550 5.1.1 ...`.
    public var description: String {
        if code == .signIn { return detail }
        // The detail quotes the server's reply text: escaped, so it cannot drive the terminal.
        let text = "smtp \(host):\(port): \(escapedForMessage(detail))"
        guard afterFinalDot else { return text }
        return text + " (after the whole message was sent: the server may have accepted it)"
    }
}
