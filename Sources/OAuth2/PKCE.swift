import MoCore

/// Proof Key for Code Exchange (RFC 7636) with S256, and the `state` of an authorization request: a
/// public client (mo has no secret a user could not read) proves that the code coming back to the loopback
/// redirect is for the request it sent, and `state` ties the redirect to that request (RFC 6749 §10.12).
/// Both from the system's cryptographic generator (getrandom).
public struct PKCE: Sendable {
    /// 32 random bytes in base64url: 43 characters of the unreserved set (RFC 7636 §4.1).
    public let verifier: String
    public let state: String

    public init() {
        verifier = Self.randomToken()
        state = Self.randomToken()
    }

    /// For tests: a known verifier (RFC 7636 Appendix B).
    public init(verifier: String, state: String) {
        self.verifier = verifier
        self.state = state
    }

    /// `BASE64URL-ENCODE(SHA256(ASCII(code_verifier)))`.
    public var challenge: String {
        var h = SHA256()
        h.update(Array(verifier.utf8))
        return Self.base64url(h.finalize())
    }

    static func randomToken() -> String {
        var g = SystemRandomNumberGenerator()
        return base64url((0..<32).map { _ in UInt8.random(in: 0...255, using: &g) })
    }

    /// Base64 with the URL alphabet and no padding (RFC 4648 §5), over the one Base64 encoder.
    static func base64url(_ bytes: [UInt8]) -> String {
        String(
            Base64.encode(bytes).compactMap {
                switch $0 {
                case "+": "-"
                case "/": "_"
                case "=": nil
                default: $0
                }
            })
    }
}
