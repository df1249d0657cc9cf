import MoCore

/// `[account.NAME.jmap]`: a JMAP account (RFC 8620, RFC 8621; docs/jmap.md).
///
///     [account.fastmail.jmap]
///     url = "https://api.fastmail.com/jmap/session"   # or leave out: https://DOMAIN/.well-known/jmap
///     auth = "bearer"                                  # password-command prints an API token
///     password-command = "pass fastmail/jmap-token"
public struct JMAPConfig: Sendable, Equatable {
    /// How the account logs in: `basic` (user and password, RFC 7617), `bearer` (password-command prints a
    /// token: Fastmail's API tokens, RFC 6750), `oauth2` (the account's `[oauth2]` table).
    public enum Auth: String, Sendable, Equatable, CaseIterable {
        case basic, bearer, oauth2
    }

    /// The session resource's address: `url`, else `https://DOMAIN/.well-known/jmap` for the address's domain.
    public var url: String
    /// No `url` was given: the session is found from the address (`JMAPDiscovery`: the domain's SRV record
    /// `_jmap._tcp`, else `url`).
    public var discovered: Bool
    /// Default: the account address.
    public var user: String
    public var passwordCommand: PasswordCommand?
    public var auth: Auth
    /// Absolute path of extra trusted CA certificates (PEM), if any.
    public var caFile: String?
    /// Seconds any single network wait may take.
    public var timeout: Int
    /// Whether mail mo-sendmail sends through the server stays in the Sent mailbox (`save-sent`, default
    /// true); else the server destroys it once sent.
    public var saveSent: Bool

    public init(
        url: String, user: String, passwordCommand: PasswordCommand?, auth: Auth = .basic, caFile: String? = nil,
        timeout: Int = IMAPConfig.defaultTimeout, saveSent: Bool = true, discovered: Bool = false
    ) {
        self.discovered = discovered
        self.saveSent = saveSent
        self.url = url
        self.user = user
        self.passwordCommand = passwordCommand
        self.auth = auth
        self.caFile = caFile
        self.timeout = timeout
    }

    /// The address a domain publishes its JMAP session at (RFC 8620 §2.2).
    public static func wellKnown(forAddress address: String) -> String? {
        guard let at = address.lastIndex(of: "@") else { return nil }
        let domain = address[address.index(after: at)...].lowercased()
        guard !domain.isEmpty, domain.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }) else {
            return nil
        }
        return "https://\(domain)/.well-known/jmap"
    }
}
