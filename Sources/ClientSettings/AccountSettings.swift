#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import JMAPClient
import MoConfig
import MoHTTP
import MoCore
import MoNet
import OAuth2
import SMTPClient
import SyncState
import Synchronization

/// Client settings built from an account's configuration. The password-command runs only when a server
/// asks for authentication.
public enum AccountSettings {
    /// SMTP settings for `account`; nil when it has no `[smtp]` table.
    /// `tokens`: the account's token broker, for `auth = "oauth2"` (`tokenBroker(for:stateDirectory:)`).
    public static func smtp(_ account: Account, trace: SMTPTrace? = nil, tokens: TokenBroker? = nil) -> SMTPSettings? {
        guard let c = account.smtp else { return nil }
        let oauth2 = c.auth == .oauth2
        let secret =
            oauth2
            ? SMTPSecret { try accessToken(tokens, account: account.name) }
            : c.passwordCommand.map { command in SMTPSecret { try command.run().reveal() } }
        var settings = SMTPSettings(
            host: c.host, port: c.port, security: c.tls,
            user: c.passwordCommand == nil && !oauth2 ? nil : c.user, secret: secret, authMethod: c.auth,
            caFile: c.caFile, heloName: hostName(),
            timeouts: .init(connect: 20, command: 120, dataBlock: 180, dataFinal: 600), trace: trace)
        if oauth2, let tokens { settings.renewSecret = { refused in try tokens.accessToken(refused: refused) } }
        return settings
    }

    /// IMAP settings for `account`; nil for a send-only account.
    public static func imap(_ account: Account, memo: SecretMemo? = nil, tokens: TokenBroker? = nil) -> IMAPSettings? {
        account.imap.map { imap($0, account: account.name, memo: memo, tokens: tokens) }
    }

    /// IMAP settings from an `[imap]` table. The password command runs only when the server asks, and
    /// with `memo` once for all the connections that share it (one run; a long --watch takes a new memo
    /// per run, so a command that hands out short-lived tokens is asked again). Without a password command
    /// a server that asks gets no password at all: the run ends with a config error naming the account
    /// (it used to send an empty password on the sync path, which only read as a login failure).
    public static func imap(_ c: IMAPConfig, account: String, memo: SecretMemo? = nil, tokens: TokenBroker? = nil) -> IMAPSettings {
        let command = c.passwordCommand
        var renew: (@Sendable (String) throws -> String)?
        if c.auth == .oauth2, let tokens { renew = { refused in try tokens.accessToken(refused: refused) } }
        return IMAPSettings(
            host: c.host, port: c.port, security: c.tls, user: c.user, authentication: c.auth,
            tls: TLSOptions(caFile: c.caFile), timeout: Double(c.timeout),
            secret: {
                if c.auth == .oauth2 { return try accessToken(tokens, account: account) }
                guard let command else { throw GenericError(.config, "account \(account): imap has no password-command") }
                if let memo { return try memo.value { try command.run() } }
                return try command.run().reveal()
            },
            renewSecret: renew)
    }

    /// The `Authorization` field of a `[jmap]` table: Basic with the user and the password-command's answer,
    /// Bearer with its token (an API token) or the OAuth2 access token. Runs the command now.
    public static func jmapAuthorization(_ c: JMAPConfig, account: String, tokens: TokenBroker? = nil) throws -> String {
        switch c.auth {
        case .oauth2: return "Bearer " + (try accessToken(tokens, account: account))
        case .basic, .bearer:
            guard let command = c.passwordCommand else { throw GenericError(.config, "account \(account): jmap has no password-command") }
            let secret = try command.run().reveal()
            if c.auth == .bearer { return "Bearer " + secret }
            return "Basic " + Base64.encode(Array("\(c.user):\(secret)".utf8))
        }
    }

    /// A JMAP client for `[jmap]` `c`, its credentials taken now: over the session resource an earlier run
    /// kept in `directory` (`<state>/<account>`; valid only for the same configured `url`; no request) when
    /// it is usable, else over the session fetched from `url`, or, when the table gave none, from where
    /// `JMAPDiscovery` finds it (`cached` false: the caller may keep it, under the configured `url`, so
    /// discovery runs once).
    public static func jmapClient(
        _ c: JMAPConfig, account: String, tokens: TokenBroker? = nil, keptIn directory: String?
    ) throws -> (client: JMAPClient, cached: Bool) {
        let kept = directory.flatMap { AccountFiles.jmapSession(in: $0, configured: c.url) }
        guard let url = WebAddress(c.url) else { throw GenericError(.config, "account \(account): jmap.url \(c.url) is not usable") }
        let authorization = try jmapAuthorization(c, account: account, tokens: tokens)
        let tls = TLSOptions(caFile: c.caFile)
        if let kept, let address = WebAddress(kept.address),
            let client = try? JMAPClient(
                sessionBytes: kept.bytes, from: address, authorization: authorization, tls: tls, timeout: Double(c.timeout))
        {
            return (client, true)
        }
        // Found from the address: the domain's SRV record first (RFC 8620 §2.2), then the domain itself.
        if c.discovered {
            let dns = getenv("MO_DNS_SERVER").map { ["MO_DNS_SERVER": String(cString: $0)] } ?? [:]
            let found = JMAPDiscovery.lookup(domain: url.host, resolver: .system(environment: dns))
            if found.reason == .srv, let srv = WebAddress(found.url),
                let client = try? JMAPClient(sessionURL: srv, authorization: authorization, tls: tls, timeout: Double(c.timeout))
            {
                return (client, false)
            }
        }
        return (try JMAPClient(sessionURL: url, authorization: authorization, tls: tls, timeout: Double(c.timeout)), false)
    }

    /// The token broker of an account that signs in with OAuth2 (an `[oauth2]` table); nil otherwise.
    public static func tokenBroker(for account: Account, stateDirectory: String) -> TokenBroker? {
        guard let o = account.oauth2 else { return nil }
        let secret = o.clientSecretCommand
        return TokenBroker(
            directory: stateDirectory + "/" + account.name, account: account.name,
            clientSecret: { try secret?.run().reveal() })
    }

    static func accessToken(_ tokens: TokenBroker?, account: String) throws -> String {
        guard let tokens else {
            throw GenericError(.config, "account \(account): auth = \"oauth2\" needs an [account.\(account).oauth2] table")
        }
        return try tokens.accessToken()
    }

    /// This host's name for EHLO; "localhost" when unknown.
    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }
}

/// A password fetched once and shared by the connections of one run.
public final class SecretMemo: Sendable {
    private let stored = Mutex<Secret?>(nil)
    public init() {}
    func value(_ fetch: () throws -> Secret) throws -> String {
        try stored.withLock { slot in
            if let s = slot { return s.reveal() }
            let s = try fetch()
            slot = s
            return s.reveal()
        }
    }
}

extension AccountSettings {
    /// The endpoints an account signs in with: a built-in provider's, or its issuer's discovery document.
    public static func oauth2Provider(_ o: OAuth2Config) throws -> OAuth2Provider {
        if let name = o.provider, let p = OAuth2Provider.builtIn(name, tenant: o.tenant) { return p }
        guard let issuer = o.issuer else { throw GenericError(.config, "oauth2: give provider or issuer") }
        return try OAuth2Provider.discover(issuer: issuer, scopes: o.scopes)
    }
}
