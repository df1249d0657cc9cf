import MoCore

/// What a token endpoint answered (RFC 6749 §5.1 and §5.2; RFC 8628 §3.5 for the device flow's polling).
public enum TokenReply: Sendable, Equatable {
    case granted(TokenGrant)
    case refused(Refusal)

    /// A token endpoint's error response.
    public struct Refusal: Sendable, Equatable {
        /// The `error` code, e.g. `invalid_grant`.
        public var code: String
        /// `error_description`, as the provider wrote it (escape before printing).
        public var description: String?

        /// What the refusal means to mo.
        public enum Meaning: Sendable, Equatable {
            /// The refresh token (or the code) is no longer good: expired, revoked, or its password
            /// changed. A new sign-in is needed (`mo-sync login`).
            case signInNeeded
            /// Device flow: the user has not finished yet; poll again at the interval.
            case pending
            /// Device flow: poll 5 seconds less often from now on.
            case slowDown
            /// The user said no, or the device code expired.
            case stopped
            /// The client is not registered as the request says (client id, secret, redirect URI).
            case clientRejected
            case other
        }

        public var meaning: Meaning {
            switch code {
            case "invalid_grant": .signInNeeded
            case "authorization_pending": .pending
            case "slow_down": .slowDown
            case "access_denied", "expired_token": .stopped
            case "invalid_client", "unauthorized_client": .clientRejected
            default: .other
            }
        }
    }

    /// Reads a token endpoint's response. A 2xx body must be a Bearer grant; a 4xx body with an `error`
    /// member is a refusal; anything else (5xx, not JSON) is an error of the exchange (`.temporary`
    /// for 5xx: the endpoint may work later).
    public static func parse(status: Int, body: [UInt8], endpoint: String) throws(GenericError) -> TokenReply {
        let json: JSONValue
        do {
            json = try JSONReader.parse(body)
        } catch {
            if status >= 500 { throw GenericError(.temporary, "\(endpoint): HTTP \(status)") }
            throw GenericError(.protocolViolation, "\(endpoint): HTTP \(status), \(error)")
        }
        if (200..<300).contains(status) {
            guard let access = json["access_token"]?.stringValue, !access.isEmpty else {
                throw GenericError(.protocolViolation, "\(endpoint): the response has no access_token")
            }
            guard json["token_type"]?.stringValue?.lowercased() == "bearer" else {
                throw GenericError(.protocolViolation, "\(endpoint): the token is not a Bearer token")
            }
            let refresh = json["refresh_token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            return .granted(TokenGrant(accessToken: access, refreshToken: refresh, expiresIn: json["expires_in"]?.intValue))
        }
        if let code = json["error"]?.stringValue, (400..<500).contains(status) {
            return .refused(Refusal(code: code, description: json["error_description"]?.stringValue))
        }
        if status >= 500 { throw GenericError(.temporary, "\(endpoint): HTTP \(status)") }
        throw GenericError(.protocolViolation, "\(endpoint): HTTP \(status) without an OAuth2 error")
    }
}

/// A grant from the token endpoint: the access token and, when the provider gives one (on sign-in, and on
/// a refresh that rotates it), a refresh token.
public struct TokenGrant: Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String?
    /// Seconds the access token lives, as the provider said; nil when it did not say.
    public var expiresIn: Int64?
}

/// The device authorization response (RFC 8628 §3.2): what to show the user, and how to poll.
public struct DeviceAuthorization: Sendable, Equatable {
    public var deviceCode: String
    public var userCode: String
    /// Where the user goes (`verification_uri`; Google says `verification_url`).
    public var verificationURI: String
    public var verificationURIComplete: String?
    public var expiresIn: Int64
    /// Seconds between polls; 5 when the server does not say (§3.2).
    public var interval: Int64

    public static func parse(status: Int, body: [UInt8], endpoint: String) throws(GenericError) -> DeviceAuthorization {
        let json: JSONValue
        do { json = try JSONReader.parse(body) } catch {
            throw GenericError(status >= 500 ? .temporary : .protocolViolation, "\(endpoint): HTTP \(status), \(error)")
        }
        guard (200..<300).contains(status) else {
            let code = json["error"]?.stringValue ?? "HTTP \(status)"
            let text = json["error_description"]?.stringValue.map { ": " + $0 } ?? ""
            throw GenericError(status >= 500 ? .temporary : .protocolViolation, escapedForMessage("\(endpoint): \(code)\(text)"))
        }
        guard let device = json["device_code"]?.stringValue, let user = json["user_code"]?.stringValue,
            let uri = json["verification_uri"]?.stringValue ?? json["verification_url"]?.stringValue,
            let expires = json["expires_in"]?.intValue
        else {
            throw GenericError(.protocolViolation, "\(endpoint): the device authorization response lacks a member")
        }
        return DeviceAuthorization(
            deviceCode: device, userCode: user, verificationURI: uri,
            verificationURIComplete: json["verification_uri_complete"]?.stringValue, expiresIn: expires,
            interval: max(1, json["interval"]?.intValue ?? 5))
    }
}
