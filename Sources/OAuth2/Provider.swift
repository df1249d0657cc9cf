import MoCore
import MoHTTP

/// Where a provider's OAuth2 endpoints are, and what mo asks it for. Built in for Google and Microsoft
/// (docs/oauth2.md names the pages these come from); any other issuer from its discovery document.
public struct OAuth2Provider: Sendable {
    /// What messages call it: "Google", "Microsoft", or the issuer's address.
    public var name: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    /// The device authorization endpoint (RFC 8628), when the provider offers one for mail scopes.
    public var deviceEndpoint: String?
    public var scopes: [String]
    /// Fields the provider needs in the authorization request besides the standard ones (name, value).
    public var extraAuthorizationFields: [(String, String)]

    public init(
        name: String, authorizationEndpoint: String, tokenEndpoint: String, deviceEndpoint: String?,
        scopes: [String], extraAuthorizationFields: [(String, String)] = []
    ) {
        self.name = name
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.deviceEndpoint = deviceEndpoint
        self.scopes = scopes
        self.extraAuthorizationFields = extraAuthorizationFields
    }

    /// Google: the full mail scope (IMAP and SMTP take only it). `access_type=offline` and
    /// `prompt=consent` make it return a refresh token on every sign-in. Google's device flow does not
    /// allow the mail scope, so there is no device endpoint: over ssh, forward the loopback port instead.
    public static let google = OAuth2Provider(
        name: "Google",
        authorizationEndpoint: "https://accounts.google.com/o/oauth2/v2/auth",
        tokenEndpoint: "https://oauth2.googleapis.com/token",
        deviceEndpoint: nil,
        scopes: ["https://mail.google.com/"],
        extraAuthorizationFields: [("access_type", "offline"), ("prompt", "consent")])

    /// Microsoft identity platform v2: Outlook.com and Microsoft 365. `tenant`: "common" (both kinds of
    /// account), "consumers" (Outlook.com), "organizations", or an organization's tenant id or domain.
    public static func microsoft(tenant: String = "common") -> OAuth2Provider {
        let base = "https://login.microsoftonline.com/\(FormEncoding.escape(tenant))/oauth2/v2.0"
        return OAuth2Provider(
            name: "Microsoft",
            authorizationEndpoint: base + "/authorize",
            tokenEndpoint: base + "/token",
            deviceEndpoint: base + "/devicecode",
            scopes: [
                "offline_access", "https://outlook.office.com/IMAP.AccessAsUser.All",
                "https://outlook.office.com/SMTP.Send"
            ])
    }

    /// The built-in provider of that name (`oauth2-provider`), or nil.
    public static func builtIn(_ name: String, tenant: String?) -> OAuth2Provider? {
        switch name.lowercased() {
        case "google": google
        case "microsoft": microsoft(tenant: tenant ?? "common")
        default: nil
        }
    }

    /// The discovery document's addresses (OpenID Connect Discovery 1.0, RFC 8414 §3): where
    /// `issuer/.well-known/openid-configuration` (else `…/oauth-authorization-server`) is fetched from.
    public static func discoveryAddresses(issuer: String) -> [String] {
        let base = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        return [base + "/.well-known/openid-configuration", base + "/.well-known/oauth-authorization-server"]
    }

    /// A provider from its discovery document. The document must name the issuer it was asked for (RFC
    /// 8414 §3.3: else another server could send a client elsewhere) and its two endpoints over https
    /// (or http to a loopback host: a local test server).
    public static func discovered(issuer: String, document: JSONValue, scopes: [String]) throws(GenericError) -> OAuth2Provider {
        func trim(_ s: String) -> String { s.hasSuffix("/") ? String(s.dropLast()) : s }
        guard let said = document["issuer"]?.stringValue, trim(said) == trim(issuer) else {
            throw GenericError(.protocolViolation, "\(issuer): the discovery document names another issuer")
        }
        func endpoint(_ key: String) throws(GenericError) -> String? {
            guard let value = document[key] else { return nil }
            guard let s = value.stringValue, isAllowedEndpoint(s) else {
                throw GenericError(.protocolViolation, "\(issuer): \(key) is not an https address")
            }
            return s
        }
        guard let authorization = try endpoint("authorization_endpoint"), let token = try endpoint("token_endpoint") else {
            throw GenericError(.protocolViolation, "\(issuer): the discovery document lacks its endpoints")
        }
        return OAuth2Provider(
            name: issuer, authorizationEndpoint: authorization, tokenEndpoint: token,
            deviceEndpoint: try endpoint("device_authorization_endpoint"), scopes: scopes)
    }

    /// https anywhere; plain http only to a loopback host (a test server): MoCore's rule, for an address
    /// the HTTP client can also use.
    public static func isAllowedEndpoint(_ address: String) -> Bool {
        isHTTPSOrLoopbackAddress(address) && WebAddress(address) != nil
    }

    /// The authorization request's address (RFC 6749 §4.1.1 with PKCE, RFC 7636 §4.3).
    public func authorizationURL(clientID: String, redirectURI: String, pkce: PKCE, loginHint: String?) -> String {
        var fields: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI),
            ("scope", scopes.joined(separator: " ")), ("state", pkce.state),
            ("code_challenge", pkce.challenge), ("code_challenge_method", "S256")
        ]
        if let loginHint { fields.append(("login_hint", loginHint)) }
        fields += extraAuthorizationFields
        return authorizationEndpoint + (authorizationEndpoint.contains("?") ? "&" : "?") + FormEncoding.encode(fields)
    }
}

extension OAuth2Provider {
    /// The provider of an issuer, from its discovery document fetched over https (OpenID Connect's
    /// address first, then RFC 8414's).
    public static func discover(issuer: String, scopes: [String]) throws -> OAuth2Provider {
        var last = GenericError(.config, "\(issuer): not an https address")
        for address in discoveryAddresses(issuer: issuer) {
            guard let url = WebAddress(address), url.secure || url.isLoopback else { continue }
            let (status, body) = try HTTPClient.send(
                "GET", url, headers: [("Accept", "application/json")], maxBody: 256 * 1024, timeout: 30)
            guard status == 200 else {
                last = GenericError(.config, "\(address): HTTP \(status); is \(issuer) an OAuth2 issuer?")
                continue
            }
            let document: JSONValue
            do { document = try JSONReader.parse(body) } catch {
                throw GenericError(.protocolViolation, "\(address): \(error)")
            }
            return try discovered(issuer: issuer, document: document, scopes: scopes)
        }
        throw last
    }
}
