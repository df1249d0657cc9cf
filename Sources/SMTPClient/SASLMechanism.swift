/// SASL mechanisms the SMTP client speaks (their messages: `MoCore.SASL`).
public enum SASLMechanism: String, Sendable, Equatable, CaseIterable {
    case plain = "PLAIN"
    case login = "LOGIN"
    case xoauth2 = "XOAUTH2"
    case oauthBearer = "OAUTHBEARER"

    /// Password mechanisms in order of preference for `auto`: PLAIN needs one round trip, LOGIN two.
    static let passwordPreference: [SASLMechanism] = [.plain, .login]
}
