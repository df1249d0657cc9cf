/// How a connection to a server is protected and how it logs in: the one definition, spelled as the
/// configuration spells it (`tls = "starttls"`, `auth = "oauthbearer"`), read by the config loader and
/// taken as they are by the IMAP, SMTP and HTTP clients (there were three enums for the first and two
/// spellings of the second, with four switches between them).

/// How the connection is protected.
public enum TLSMode: String, Sendable, Equatable, CaseIterable {
    /// TLS from the first byte (IMAPS 993, SMTPS 465; RFC 8314).
    case implicit
    /// Plain connect, then STARTTLS before anything else; refused if the server cannot.
    case starttls
    /// No TLS at all: allowed only to a loopback host (`isLoopbackHost`), by the loader and the clients.
    case none
}

/// The SASL mechanism to log in with; `auto`: PLAIN, else LOGIN, among those the server offers.
/// The messages themselves are `SASL`'s.
public enum AuthMethod: String, Sendable, Equatable, CaseIterable {
    case auto, plain, login, xoauth2, oauthbearer
    /// Signed in with `mo-sync login`: an access token from the account's token file, sent with
    /// OAUTHBEARER or XOAUTH2, whichever the server offers.
    case oauth2
}
