import MoCore
import MoNet

/// Where and how to reach an IMAP server. Built by the CLI from the account's `[imap]` table.
public struct IMAPSettings: Sendable {
    public var host: String
    public var port: Int
    public var security: TLSMode
    public var user: String
    public var authentication: AuthMethod
    public var tls: TLSOptions
    /// Seconds any single network wait may take.
    public var timeout: Double
    /// Produces the password or OAuth token when it is needed (runs `password-command`); never stored.
    public var secret: @Sendable () throws -> String
    /// OAuth2 only: a new token after the server refused the one given (its argument), asked once per login.
    /// Throwing `SignInNeededError` ends the login with its text alone; `OutageError`, as temporary.
    public var renewSecret: (@Sendable (String) throws -> String)?

    public init(
        host: String, port: Int, security: TLSMode = .implicit, user: String,
        authentication: AuthMethod = .auto, tls: TLSOptions = TLSOptions(), timeout: Double = 60,
        secret: @escaping @Sendable () throws -> String, renewSecret: (@Sendable (String) throws -> String)? = nil
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.user = user
        self.authentication = authentication
        self.tls = tls
        self.timeout = timeout
        self.secret = secret
        self.renewSecret = renewSecret
    }
}
