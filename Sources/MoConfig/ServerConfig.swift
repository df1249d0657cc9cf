import MoCore

/// What an `[imap]` and an `[smtp]` table have in common: where the server is, how the connection is
/// protected, and how to log in. One type, so a rule about any of them (a default, a check) is written once;
/// `IMAPConfig` and `SMTPConfig` add their own keys and read these as their own (`imap.host`).
public struct ServerAccess: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var tls: TLSMode
    /// Default: the account address.
    public var user: String
    /// IMAP: always set (IMAP always logs in). SMTP: nil sends without authenticating (a relay that needs none).
    public var passwordCommand: PasswordCommand?
    /// Absolute path of extra trusted CA certificates (PEM), if any.
    public var caFile: String?
    public var auth: AuthMethod

    public init(
        host: String, port: Int, tls: TLSMode, user: String, passwordCommand: PasswordCommand?, caFile: String?,
        auth: AuthMethod
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.user = user
        self.passwordCommand = passwordCommand
        self.caFile = caFile
        self.auth = auth
    }
}

/// A table with the `ServerAccess` keys, read as its own (`imap.host` is `imap.access.host`).
@dynamicMemberLookup
public protocol ServerTable {
    var access: ServerAccess { get set }
}

extension ServerTable {
    public subscript<T>(dynamicMember key: WritableKeyPath<ServerAccess, T>) -> T {
        get { access[keyPath: key] }
        set { access[keyPath: key] = newValue }
    }
}

/// `[account.NAME.imap]`.
public struct IMAPConfig: ServerTable, Sendable, Equatable {
    /// Default port: 993 for implicit TLS, 143 otherwise.
    public var access: ServerAccess
    /// Seconds any single network wait (connect, handshake, one read or write) may take.
    public var timeout: Int

    public static let defaultTimeout = 60

    public init(
        host: String, port: Int? = nil, tls: TLSMode = .implicit, user: String,
        passwordCommand: PasswordCommand?, caFile: String? = nil, auth: AuthMethod = .auto,
        timeout: Int = IMAPConfig.defaultTimeout
    ) {
        access = ServerAccess(
            host: host, port: port ?? IMAPConfig.defaultPort(for: tls), tls: tls, user: user,
            passwordCommand: passwordCommand, caFile: caFile, auth: auth)
        self.timeout = timeout
    }

    public static func defaultPort(for tls: TLSMode) -> Int {
        tls == .implicit ? 993 : 143
    }
}

/// `[account.NAME.smtp]`.
public struct SMTPConfig: ServerTable, Sendable, Equatable {
    /// Default port: 465 for implicit TLS, 587 for STARTTLS, 25 without TLS.
    public var access: ServerAccess
    /// Whether mo-sendmail stores a copy in the Sent folder; false where the server does it (Gmail).
    public var saveSent: Bool

    public init(
        host: String, port: Int? = nil, tls: TLSMode = .implicit, user: String,
        passwordCommand: PasswordCommand?, caFile: String? = nil, auth: AuthMethod = .auto,
        saveSent: Bool = true
    ) {
        access = ServerAccess(
            host: host, port: port ?? SMTPConfig.defaultPort(for: tls), tls: tls, user: user,
            passwordCommand: passwordCommand, caFile: caFile, auth: auth)
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
