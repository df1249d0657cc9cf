import MoCore

/// What IMAP and SMTP settings have in common, so network code can take either.
public protocol ServerSettings: Sendable {
    var host: String { get }
    var port: Int { get }
    var tls: TLSMode { get }
    var user: String { get }
    var passwordCommand: PasswordCommand? { get }
    /// Absolute path of extra trusted CA certificates (PEM), if any.
    var caFile: String? { get }
    var auth: AuthMethod { get }
}

/// `[account.NAME.imap]`.
public struct IMAPConfig: ServerSettings, Equatable {
    public var host: String
    /// Default: 993 for implicit TLS, 143 otherwise.
    public var port: Int
    public var tls: TLSMode
    /// Default: the account address.
    public var user: String
    /// Always set: IMAP always logs in.
    public var passwordCommand: PasswordCommand?
    public var caFile: String?
    public var auth: AuthMethod
    /// Seconds any single network wait (connect, handshake, one read or write) may take.
    public var timeout: Int

    public static let defaultTimeout = 60

    public init(
        host: String, port: Int? = nil, tls: TLSMode = .implicit, user: String,
        passwordCommand: PasswordCommand?, caFile: String? = nil, auth: AuthMethod = .auto,
        timeout: Int = IMAPConfig.defaultTimeout
    ) {
        self.host = host
        self.port = port ?? IMAPConfig.defaultPort(for: tls)
        self.tls = tls
        self.user = user
        self.passwordCommand = passwordCommand
        self.caFile = caFile
        self.auth = auth
        self.timeout = timeout
    }

    public static func defaultPort(for tls: TLSMode) -> Int {
        tls == .implicit ? 993 : 143
    }
}

/// `[account.NAME.smtp]`.
public struct SMTPConfig: ServerSettings, Equatable {
    public var host: String
    /// Default: 465 for implicit TLS, 587 for STARTTLS, 25 without TLS.
    public var port: Int
    public var tls: TLSMode
    /// Default: the account address.
    public var user: String
    /// nil: send without authenticating (a relay that needs none).
    public var passwordCommand: PasswordCommand?
    public var caFile: String?
    public var auth: AuthMethod
    /// Whether mo-sendmail stores a copy in the Sent folder; false where the server does it (Gmail).
    public var saveSent: Bool

    public init(
        host: String, port: Int? = nil, tls: TLSMode = .implicit, user: String,
        passwordCommand: PasswordCommand?, caFile: String? = nil, auth: AuthMethod = .auto,
        saveSent: Bool = true
    ) {
        self.host = host
        self.port = port ?? SMTPConfig.defaultPort(for: tls)
        self.tls = tls
        self.user = user
        self.passwordCommand = passwordCommand
        self.caFile = caFile
        self.auth = auth
        self.saveSent = saveSent
    }

    public static func defaultPort(for tls: TLSMode) -> Int {
        switch tls {
        case .implicit: return 465
        case .starttls: return 587
        case .none: return 25
        }
    }
}
