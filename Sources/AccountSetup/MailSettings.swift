import MoCore
import MoHTTP
import MoConfig

/// One server of a starting configuration: where it is, how the connection is protected, how to log in.
public struct ServerEndpoint: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var tls: TLSMode
    public var auth: AuthMethod
    /// The login name when it is not the address (autoconfig's `%EMAILLOCALPART%`); nil: the address.
    public var user: String?

    public init(host: String, port: Int, tls: TLSMode, auth: AuthMethod = .auto, user: String? = nil) {
        self.host = host
        self.port = port
        self.tls = tls
        self.auth = auth
        self.user = user
    }
}

/// How an account's servers want to be logged in to; decides the `password-command` suggested.
public enum LoginKind: Sendable, Equatable {
    /// The account password (or one the server's own tool shows, as Proton Mail Bridge does).
    case password
    /// A password made for this program on the provider's web site; the account password is refused.
    case appPassword
    /// Only an OAuth2 access token (auth = "xoauth2"); passwords are refused.
    case oauth2
}

/// What `mo-sync init` found out about an address's servers, and what it will say about them.
public struct MailSettings: Sendable, Equatable {
    public var imap: ServerEndpoint
    /// nil when nothing was found for sending; the config then has no `[smtp]` table.
    public var smtp: ServerEndpoint?
    /// Where the servers came from, for the config's comment: "the table of known providers (Gmail)".
    public var source: String
    /// Whether the hosts were confirmed (table, DNS, autoconfig, flags) or only guessed from the domain.
    public var guessed: Bool
    public var login: LoginKind
    /// `save-sent`: false where the server keeps its own copy of sent mail.
    public var saveSent: Bool
    /// `gmail-mode = "on"` (docs/gmail.md): Gmail, whose labels show one message in several folders.
    public var gmailMode: Bool
    /// `ca-file` to suggest (Proton Mail Bridge's own certificate), as written in the config.
    public var caFile: String?
    /// Comment lines for the account: app passwords, OAuth2, certificates. Plain text, no `#`.
    public var notes: [String]
    /// A provider whose OAuth2 endpoints are built in (`OAuth2Provider`): "google" or "microsoft", and
    /// Microsoft's tenant. With it, the config signs in with `mo-sync login` (auth = "oauth2").
    public var oauth2: (provider: String, tenant: String?)?
    /// The provider's JMAP session resource, when it has one (docs/jmap.md): the config offers it, commented.
    public var jmap: String?

    public init(
        imap: ServerEndpoint, smtp: ServerEndpoint?, source: String, guessed: Bool = false,
        login: LoginKind = .password, saveSent: Bool = true, gmailMode: Bool = false,
        caFile: String? = nil, notes: [String] = [], oauth2: (provider: String, tenant: String?)? = nil
    ) {
        self.imap = imap
        self.smtp = smtp
        self.source = source
        self.guessed = guessed
        self.login = login
        self.saveSent = saveSent
        self.gmailMode = gmailMode
        self.caFile = caFile
        self.notes = notes
        self.oauth2 = oauth2
    }

    public static func == (a: MailSettings, b: MailSettings) -> Bool {
        a.imap == b.imap && a.smtp == b.smtp && a.source == b.source && a.guessed == b.guessed && a.login == b.login
            && a.saveSent == b.saveSent && a.gmailMode == b.gmailMode && a.caFile == b.caFile && a.notes == b.notes
            && a.oauth2?.provider == b.oauth2?.provider && a.oauth2?.tenant == b.oauth2?.tenant
    }
}

/// The part of an address after the last `@`, lowercased and without a trailing dot; nil when there is none.
public func mailDomain(of address: String) -> String? {
    guard let at = address.lastIndex(of: "@") else { return nil }
    var domain = address[address.index(after: at)...].lowercased()
    if domain.hasSuffix(".") { domain.removeLast() }
    return domain.isEmpty ? nil : domain
}

extension ServerEndpoint {
    /// `--imap`/`--smtp` text: `HOST`, `HOST:PORT` or `[V6]:PORT`. The port defaults to 993 (IMAP) or 465
    /// (SMTP); TLS is implicit on 993 and 465 and STARTTLS on any other port (143, 587, Bridge's 1143).
    /// nil when the host is not a host name or IP literal, or the port is not 1..65535. Pure.
    public static func parse(_ text: String, smtp: Bool) -> ServerEndpoint? {
        var host = Substring(text), portText: Substring?
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty { guard rest.hasPrefix(":") else { return nil }; portText = rest.dropFirst() }
            guard isIPv6Literal(String(host)) else { return nil }
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard isHostName(host.lowercased()) else { return nil }
        }
        let port = portText.map { Int($0) } ?? (smtp ? 465 : 993)
        guard let port, (1...65535).contains(port) else { return nil }
        return ServerEndpoint(host: host.lowercased(), port: port, tls: port == 993 || port == 465 ? .implicit : .starttls)
    }
}
