/// SASL mechanisms the client speaks, and their payloads (already base64 as SMTP sends them).
public enum SASLMechanism: String, Sendable, Equatable, CaseIterable {
    case plain = "PLAIN"
    case login = "LOGIN"
    case xoauth2 = "XOAUTH2"
    case oauthBearer = "OAUTHBEARER"

    /// Password mechanisms in order of preference for `auto`: PLAIN needs one round trip, LOGIN two.
    static let passwordPreference: [SASLMechanism] = [.plain, .login]
}

/// Encoders for each mechanism's client messages. Pure; the session drives the exchange.
public enum SASL {
    /// RFC 4616: `authzid NUL authcid NUL passwd`, authzid empty.
    public static func plain(user: String, password: String) -> String {
        Base64.encode([0] + Array(user.utf8) + [0] + Array(password.utf8))
    }

    /// The LOGIN mechanism answers its two challenges ("Username:", "Password:") with these, in order.
    public static func login(user: String, password: String) -> [String] {
        [Base64.encode(Array(user.utf8)), Base64.encode(Array(password.utf8))]
    }

    /// Google/Microsoft XOAUTH2: `user=U ^A auth=Bearer T ^A ^A`.
    public static func xoauth2(user: String, token: String) -> String {
        Base64.encode(Array("user=\(user)\u{1}auth=Bearer \(token)\u{1}\u{1}".utf8))
    }

    /// RFC 7628 OAUTHBEARER: GS2 header `n,a=U,` then `^A auth=Bearer T ^A ^A`. `,` and `=` in the user are
    /// escaped as `=2C` / `=3D` (RFC 5801 saslname).
    public static func oauthBearer(user: String, token: String) -> String {
        let name = user.replacingAll("=", with: "=3D").replacingAll(",", with: "=2C")
        return Base64.encode(Array("n,a=\(name),\u{1}auth=Bearer \(token)\u{1}\u{1}".utf8))
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
