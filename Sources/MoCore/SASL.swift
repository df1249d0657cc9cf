/// The client messages of the SASL mechanisms mo speaks, as raw bytes: the one copy for IMAP
/// (AUTHENTICATE) and SMTP (AUTH), each of which base64-encodes them for its wire (`Base64`).
public enum SASL {
    /// RFC 4616 PLAIN: `authzid NUL authcid NUL passwd`, authzid empty.
    public static func plain(user: String, password: String) -> [UInt8] {
        [0] + Array(user.utf8) + [0] + Array(password.utf8)
    }

    /// The LOGIN mechanism answers its two challenges ("Username:", "Password:") with these, in order.
    public static func login(user: String, password: String) -> [[UInt8]] {
        [Array(user.utf8), Array(password.utf8)]
    }

    /// Google/Microsoft XOAUTH2: `user=U ^A auth=Bearer T ^A ^A`.
    public static func xoauth2(user: String, token: String) -> [UInt8] {
        Array("user=\(user)\u{1}auth=Bearer \(token)\u{1}\u{1}".utf8)
    }

    /// RFC 7628 OAUTHBEARER: the GS2 header `n,a=U,` (U as an RFC 5801 `saslname`), then the optional
    /// `host=H` and `port=P` pairs when given, then `auth=Bearer T`, each pair ended by ^A, and a final ^A.
    public static func oauthBearer(user: String, token: String, host: String? = nil, port: Int? = nil) -> [UInt8] {
        var pairs = ""
        if let host { pairs += "host=\(host)\u{1}" }
        if let port { pairs += "port=\(port)\u{1}" }
        return Array("n,a=\(saslname(user)),\u{1}\(pairs)auth=Bearer \(token)\u{1}\u{1}".utf8)
    }

    /// RFC 7628 §3.2.3: after an error challenge the client sends a single ^A, and the server then ends
    /// the exchange with its failure reply.
    public static let oauthBearerErrorAcknowledgement: [UInt8] = [0x01]

    /// RFC 5801 §4 `saslname`: `=` becomes `=3D` and `,` becomes `=2C` (so the GS2 header stays parseable).
    public static func saslname(_ name: String) -> String {
        name.unicodeScalars.reduce(into: "") { out, c in out += c == "=" ? "=3D" : c == "," ? "=2C" : String(c) }
    }
}
