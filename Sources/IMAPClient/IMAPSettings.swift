import MoCore
import MoNet

/// Where and how to reach an IMAP server. Built by the CLI from the account's `[imap]` table.
public struct IMAPSettings: Sendable {
    public enum Security: String, Sendable {
        /// TLS from the first byte (port 993).
        case implicit
        /// Plain connection upgraded with STARTTLS before anything else; refused if the server cannot.
        case startTLS = "starttls"
        /// No TLS at all: allowed only to a loopback address.
        case none
    }

    public enum Authentication: String, Sendable {
        /// AUTHENTICATE PLAIN when offered, else LOGIN.
        case auto
        case plain, login, xoauth2, oauthbearer
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var user: String
    public var authentication: Authentication
    public var tls: TLSOptions
    /// Seconds any single network wait may take.
    public var timeout: Double
    /// Produces the password or OAuth token when it is needed (runs `password-command`); never stored.
    public var secret: @Sendable () throws -> String

    public init(
        host: String, port: Int, security: Security = .implicit, user: String,
        authentication: Authentication = .auto, tls: TLSOptions = TLSOptions(), timeout: Double = 60,
        secret: @escaping @Sendable () throws -> String
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.user = user
        self.authentication = authentication
        self.tls = tls
        self.timeout = timeout
        self.secret = secret
    }
}
