import MoCore

/// An account's OAuth2 tokens on disk: `<state-dir>/<account>/oauth2-tokens`, mode 0600, written whole to a
/// new file, fsynced and renamed (`replaceFileAtomically`), never in place. Read strictly: a torn or
/// unknown line is an error naming `FILE:LINE`, never half a token. Values are %-escaped like the other
/// state files' fields (`PercentEscape`).
///
///     mo-oauth2-tokens 1
///     token-endpoint https://oauth2.googleapis.com/token
///     client-id 1234.apps.googleusercontent.com
///     refresh 1//0gAbC...
///     access ya29.a0Af...
///     expires 1764180000
///     renew 1764179700
///
/// `access`, `expires` and `renew` (seconds since the epoch) are absent until the first access token:
/// the token is used until `renew`, a quarter of its life (at most 5 minutes) before `expires`; `refresh`
/// is always there (a sign-in without one is refused: it could not last). The endpoint and client are
/// recorded so that a changed configuration is noticed rather than sent a refresh token it never issued.
public struct TokenFile: Sendable, Equatable {
    public var tokenEndpoint: String
    public var clientID: String
    public var refreshToken: String
    public var accessToken: String?
    public var expires: Int64?
    /// When to refresh: ahead of `expires`, so a connection opened now does not meet an expired token.
    public var renew: Int64?

    public static let magic = "mo-oauth2-tokens 1"
    public static let fileName = "oauth2-tokens"

    public init(
        tokenEndpoint: String, clientID: String, refreshToken: String, accessToken: String? = nil, expires: Int64? = nil,
        renew: Int64? = nil
    ) {
        self.tokenEndpoint = tokenEndpoint
        self.clientID = clientID
        self.refreshToken = refreshToken
        self.accessToken = accessToken
        self.expires = expires
        self.renew = renew ?? expires
    }

    public var rendered: [UInt8] {
        var lines = [
            Self.magic, "token-endpoint " + PercentEscape.escape(tokenEndpoint),
            "client-id " + PercentEscape.escape(clientID), "refresh " + PercentEscape.escape(refreshToken)
        ]
        if let accessToken, let expires {
            lines += ["access " + PercentEscape.escape(accessToken), "expires \(expires)", "renew \(renew ?? expires)"]
        }
        return Array(lines.map { $0 + "\n" }.joined().utf8)
    }

    /// Parses a token file; errors are `FILE:LINE: PROBLEM`, kind `.data`.
    public static func parse(_ bytes: [UInt8], file: String) throws(GenericError) -> TokenFile {
        var values: [String: String] = [:]
        var first = true
        do throws(StrictLines.Problem) {
            try StrictLines.forEach(bytes) { bytes throws(StrictLines.Problem) in
                let line = String(decoding: bytes, as: UTF8.self)
                if first {
                    first = false
                    guard line == magic else { throw .init("not a token file of this version (expected \"\(magic)\")") }
                    return
                }
                guard let space = line.firstIndex(of: " ") else { throw .init("expected \"KEY VALUE\"") }
                let key = String(line[..<space])
                guard ["token-endpoint", "client-id", "refresh", "access", "expires", "renew"].contains(key) else {
                    throw .init("unknown key \(quotedForMessage(key))")
                }
                guard values[key] == nil else { throw .init("\(key) given twice") }
                guard let value = PercentEscape.unescape(line[line.index(after: space)...]), !value.isEmpty else {
                    throw .init("\(key): a bad value")
                }
                values[key] = value
            }
        } catch {
            throw GenericError(.data, escapedForMessage("\(file):\(error.line): \(error.problem)"))
        }
        guard !first else { throw GenericError(.data, escapedForMessage("\(file): empty")) }
        guard let endpoint = values["token-endpoint"], let client = values["client-id"], let refresh = values["refresh"] else {
            throw GenericError(.data, escapedForMessage("\(file): lacks token-endpoint, client-id or refresh"))
        }
        let expires = values["expires"].flatMap { Int64($0) }, renew = values["renew"].flatMap { Int64($0) }
        guard (values["access"] == nil) == (values["expires"] == nil), (values["expires"] == nil) == (values["renew"] == nil),
            values["expires"] == nil || (expires != nil && renew != nil)
        else {
            throw GenericError(.data, escapedForMessage("\(file): access, expires and renew go together, the times numbers"))
        }
        return TokenFile(
            tokenEndpoint: endpoint, clientID: client, refreshToken: refresh, accessToken: values["access"], expires: expires,
            renew: renew)
    }

    /// The access token until its `renew` time; nil when a refresh is due.
    public func usableAccessToken(now: Int64) -> String? {
        guard let accessToken, let renew, now < renew else { return nil }
        return accessToken
    }

    /// The access token until it expires: what an outage of the token endpoint may still use.
    public func liveAccessToken(now: Int64) -> String? {
        guard let accessToken, let expires, now < expires else { return nil }
        return accessToken
    }

    /// The file after a grant at `now`: the new access token and its expiry, and a rotated refresh token
    /// when the grant carries one. A grant without `expires_in` is taken to live an hour (the common
    /// lifetime); a refused token forces a refresh anyway.
    public func applying(_ grant: TokenGrant, now: Int64) -> TokenFile {
        var next = self
        next.accessToken = grant.accessToken
        let life = max(0, grant.expiresIn ?? 3600)
        next.expires = now + life
        next.renew = now + life - min(300, life / 4)
        if let rotated = grant.refreshToken { next.refreshToken = rotated }
        return next
    }
}
