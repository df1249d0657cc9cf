import MoCore

/// `[account.NAME.oauth2]`: how the account signs in when `[imap]` or `[smtp]` says `auth = "oauth2"`
/// (docs/oauth2.md). The client is the user's own registration with the provider.
public struct OAuth2Config: Sendable, Equatable {
    /// `provider = "google"` or `"microsoft"` (endpoints and scopes built in), or nil with `issuer`.
    public var provider: String?
    /// Microsoft only: "common" (default), "consumers", "organizations", or a tenant id or domain.
    public var tenant: String? = nil
    /// Any other issuer, whose discovery document gives the endpoints (OpenID Connect or RFC 8414).
    public var issuer: String? = nil
    /// With `issuer`: the scopes to ask for (a provider's are built in).
    public var scopes: [String] = []
    public var clientID: String
    /// A command that prints the client secret, for providers that want one (Google's desktop clients).
    public var clientSecretCommand: PasswordCommand? = nil

    public static let providers = ["google", "microsoft"]
}
