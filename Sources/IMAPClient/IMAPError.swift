import IMAPCodec
import MoCore
import MoNet

/// A failure talking IMAP, naming the server and, for refusals, the command and the server's words.
public struct IMAPError: MoError {
    public enum Reason: Sendable {
        /// The transport failed (resolve, connect, TLS, timeout, closed).
        case network(NetError)
        /// The server's bytes broke the grammar or a limit; the connection is unusable.
        case parse(IMAPParseError)
        /// A command we could not encode (e.g. a NUL in a name).
        case encode(IMAPEncodeError)
        /// The server answered NO.
        case refused(command: String, text: ResponseText)
        /// The server answered BAD.
        case rejected(command: String, text: ResponseText)
        /// Authentication failed.
        case authentication(String)
        /// The account's sign-in (OAuth2) must be done again; the text says how, and stands alone.
        case signIn(String)
        /// A service the login needs besides the server (the OAuth2 token endpoint) could not be reached.
        case outage(String)
        /// The server ended the session (BYE) or closed the connection mid-command.
        case bye(String)
        /// STARTTLS was required but is not available, or plaintext was asked for a non-loopback host.
        case insecure(String)
        /// The server lacks something we need (e.g. IMAP4rev1, an AUTH mechanism).
        case unsupported(String)
        /// The server sent something valid but unexpected here.
        case unexpected(String)
    }

    public let server: String
    public let reason: Reason

    public init(server: String, _ reason: Reason) {
        self.server = server
        self.reason = reason
    }

    /// Nothing was said about the request: the server's name did not resolve or its port did not answer,
    /// or the token endpoint the login needs was out. A queued action spends no try on it.
    public var isOutage: Bool {
        switch reason {
        case .network(let e): e.code == .resolve || e.code == .connect
        case .outage: true
        default: false
        }
    }

    /// The server's bytes broke the grammar or a limit: this connection is closed, the server may be fine.
    public var isParse: Bool { if case .parse = reason { true } else { false } }
    /// The server answered the command NO or BAD (the connection is still usable).
    public var isRefusal: Bool {
        switch reason {
        case .refused, .rejected: true
        default: false
        }
    }

    /// A NO with RFC 5530's `OVERQUOTA`: for a FETCH, Gmail's "Account exceeded command or bandwidth
    /// limits" (its daily IMAP download allowance is spent). The connection is fine; downloads wait a day.
    public var isOverQuota: Bool {
        if case .refused(_, let text) = reason, case .other(let name, _)? = text.code, name == "OVERQUOTA" { return true }
        return false
    }

    public var kind: ErrorKind {
        switch reason {
        case .network(let e): e.kind
        case .parse, .rejected, .unexpected: .protocolViolation
        case .encode: .data
        case .refused(_, let text):
            // RFC 5530 codes that mean "try again later".
            if case .other(let name, _)? = text.code, ["UNAVAILABLE", "INUSE", "LIMIT", "SERVERBUG", "OVERQUOTA"].contains(name) {
                .temporary
            } else {
                .unavailable
            }
        case .authentication, .signIn: .authentication
        case .bye, .outage: .temporary
        case .insecure: .security
        case .unsupported: .unavailable
        }
    }

    /// Server text (NO/BAD/BYE texts, alerts, names) is quoted here, so the line is escaped as a whole.
    public var description: String { escapedForMessage(rawDescription) }

    private var rawDescription: String {
        switch reason {
        case .network(let e): return e.description
        case .parse(let e): return "imap \(server): bad response: \(e.message)"
        case .encode(let e): return "imap \(server): \(e.message)"
        case .refused(let command, let text): return "imap \(server): \(command) refused: \(text.text)"
        case .rejected(let command, let text): return "imap \(server): \(command) rejected as bad: \(text.text)"
        case .authentication(let text): return "imap \(server): authentication failed: \(text)"
        case .signIn(let text): return text
        case .outage(let text): return "imap \(server): \(text)"
        case .bye(let text): return "imap \(server): the server closed the session\(text.isEmpty ? "" : ": " + text)"
        case .insecure(let text): return "imap \(server): \(text)"
        case .unsupported(let text): return "imap \(server): \(text)"
        case .unexpected(let text): return "imap \(server): unexpected response: \(text)"
        }
    }

    /// The response code of a NO or BAD, if any (e.g. TRYCREATE).
    public var responseCode: ResponseCode? {
        switch reason {
        case .refused(_, let text), .rejected(_, let text): text.code
        default: nil
        }
    }
}
