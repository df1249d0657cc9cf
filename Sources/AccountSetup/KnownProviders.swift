import MoCore
import MoConfig

/// A mail provider whose servers are known without asking the network.
public struct Provider: Sendable, Equatable {
    /// The `--provider` name: "gmail".
    public var id: String
    /// For people: "Gmail".
    public var name: String
    /// Address domains that select it (lowercase); empty for one chosen only by `--provider`.
    public var domains: [String]
    public var settings: MailSettings
}

/// The table of known providers (hosts, ports, TLS and login as each provider documents them), and the
/// pure lookups over it. The one place these facts live; tests check every row loads as a config.
public enum KnownProviders {
    /// Lookup by address domain (exact match, case-insensitive); nil for any other domain.
    public static func provider(forDomain domain: String) -> Provider? {
        let d = domain.lowercased()
        return all.first { $0.domains.contains(d) }
    }

    /// Lookup by `--provider` name.
    public static func provider(named id: String) -> Provider? {
        all.first { $0.id == id.lowercased() }
    }

    public static var ids: [String] { all.map(\.id) }

    private static func entry(
        _ id: String, _ name: String, _ domains: [String], imap: (String, Int, TLSMode),
        smtp: (String, Int, TLSMode), login: LoginKind = .password, saveSent: Bool = true,
        gmailMode: Bool = false, caFile: String? = nil, notes: [String] = [],
        oauth2: (provider: String, tenant: String?)? = nil, jmap: String? = nil
    ) -> Provider {
        let auth: AuthMethod = login == .oauth2 ? (oauth2 == nil ? .xoauth2 : .oauth2) : .auto
        var settings = MailSettings(
            imap: ServerEndpoint(host: imap.0, port: imap.1, tls: imap.2, auth: auth),
            smtp: ServerEndpoint(host: smtp.0, port: smtp.1, tls: smtp.2, auth: auth),
            source: "the table of known providers (\(name))", login: login, saveSent: saveSent,
            gmailMode: gmailMode, caFile: caFile, notes: notes, oauth2: oauth2)
        settings.jmap = jmap
        return Provider(id: id, name: name, domains: domains, settings: settings)
    }

    static let oauthHelpers =
        "For OAuth2 with a provider mo has no endpoints for, add an [oauth2] table naming its issuer and set auth = \"oauth2\" (docs/oauth2.md), then run mo-sync login; or let the password-command print an access token (neomutt's mutt_oauth2.py, oama)."

    public static let all: [Provider] = [
        entry(
            "gmail", "Gmail", ["gmail.com", "googlemail.com"],
            imap: ("imap.gmail.com", 993, .implicit), smtp: ("smtp.gmail.com", 465, .implicit),
            login: .oauth2, saveSent: false,
            gmailMode: true,
            notes: [
                "Google Workspace accounts take only OAuth2: register a client (docs/oauth2.md), put its id in client-id below, and run mo-sync login. A personal account may instead use an app password (Google Account > Security > App passwords): auth = \"auto\" and a password-command, in both tables.",
                "Gmail mode (docs/gmail.md): INBOX, Sent, Drafts and Archive hold every message of All Mail once, archived mail included; labels are tags both ways, and a move between those folders changes labels.",
                "Gmail keeps its own copy of sent mail, hence save-sent = false."
            ], oauth2: ("google", nil)),
        entry(
            "outlook", "Outlook.com",
            [
                "outlook.com", "hotmail.com", "live.com", "msn.com", "hotmail.co.uk",
                "hotmail.de", "hotmail.fr", "hotmail.it", "live.co.uk", "live.de", "live.fr",
                "outlook.de", "outlook.fr"
            ],
            imap: ("outlook.office365.com", 993, .implicit), smtp: ("smtp-mail.outlook.com", 587, .starttls),
            login: .oauth2,
            notes: [
                "Microsoft refuses passwords over IMAP and SMTP (basic authentication is off): register a client (docs/oauth2.md), put its id in client-id below, and run mo-sync login."
            ], oauth2: ("microsoft", "consumers")),
        entry(
            "microsoft365", "Microsoft 365", [],
            imap: ("outlook.office365.com", 993, .implicit), smtp: ("smtp.office365.com", 587, .starttls),
            login: .oauth2,
            notes: [
                "Microsoft 365 refuses passwords over IMAP and SMTP (basic authentication is off): register a client (docs/oauth2.md), put its id in client-id below (or your organisation's tenant in tenant), and run mo-sync login.",
                "An organisation may have turned SMTP AUTH off for its users; then only the [imap] table works."
            ], oauth2: ("microsoft", "organizations")),
        entry(
            "yahoo", "Yahoo Mail",
            [
                "yahoo.com", "ymail.com", "rocketmail.com", "yahoo.co.uk", "yahoo.de",
                "yahoo.fr", "yahoo.it", "yahoo.es", "yahoo.ca", "yahoo.com.au"
            ],
            imap: ("imap.mail.yahoo.com", 993, .implicit), smtp: ("smtp.mail.yahoo.com", 465, .implicit),
            login: .appPassword,
            notes: [
                "Yahoo refuses the account password over IMAP: make an app password (Account info > Account security > Generate app password)."
            ]),
        entry(
            "icloud", "iCloud Mail", ["icloud.com", "me.com", "mac.com"],
            imap: ("imap.mail.me.com", 993, .implicit), smtp: ("smtp.mail.me.com", 587, .starttls),
            login: .appPassword,
            notes: [
                "Apple requires an app-specific password (account.apple.com > Sign-In and Security > App-Specific Passwords; two-factor authentication must be on).",
                "If [imap] login fails with the whole address, set its user to the name before the @."
            ]),
        entry(
            "fastmail", "Fastmail", ["fastmail.com", "fastmail.fm"],
            imap: ("imap.fastmail.com", 993, .implicit), smtp: ("smtp.fastmail.com", 465, .implicit),
            login: .appPassword,
            notes: ["Fastmail requires an app password with IMAP and SMTP access (Settings > Privacy & Security > Manage app passwords)."],
            // Fastmail's JMAP session resource (fastmail.com/dev).
            jmap: "https://api.fastmail.com/jmap/session"),
        entry(
            "posteo", "Posteo",
            [
                "posteo.de", "posteo.net", "posteo.org", "posteo.eu", "posteo.at", "posteo.ch",
                "posteo.be", "posteo.us"
            ],
            imap: ("posteo.de", 993, .implicit), smtp: ("posteo.de", 465, .implicit)),
        entry(
            "mailbox.org", "mailbox.org", ["mailbox.org"],
            imap: ("imap.mailbox.org", 993, .implicit), smtp: ("smtp.mailbox.org", 465, .implicit)),
        entry(
            "gmx", "GMX", ["gmx.de", "gmx.net", "gmx.at", "gmx.ch"],
            imap: ("imap.gmx.net", 993, .implicit), smtp: ("mail.gmx.net", 465, .implicit),
            notes: ["GMX allows IMAP only once it is turned on: E-Mail > Settings > POP3 & IMAP > allow access."]),
        entry(
            "gmx.com", "GMX (gmx.com)", ["gmx.com", "gmx.us"],
            imap: ("imap.gmx.com", 993, .implicit), smtp: ("mail.gmx.com", 465, .implicit),
            notes: ["GMX allows IMAP only once it is turned on: E-Mail > Settings > POP3 & IMAP > allow access."]),
        entry(
            "proton", "Proton Mail Bridge", ["proton.me", "protonmail.com", "protonmail.ch", "pm.me"],
            imap: ("127.0.0.1", 1143, .starttls), smtp: ("127.0.0.1", 1025, .starttls),
            saveSent: false, caFile: "~/.config/mo/proton-bridge.pem",
            notes: [
                "Proton Mail is reached through Proton Mail Bridge running on this machine (its defaults: IMAP 127.0.0.1:1143, SMTP 127.0.0.1:1025, both STARTTLS).",
                "The password is the one Bridge shows for this account, not the Proton account password.",
                "Bridge presents its own self-signed certificate: export it (Bridge > Settings > Advanced settings > Export TLS certificates) to the ca-file below, or the TLS check refuses the connection.",
                "Proton keeps its own copy of sent mail, hence save-sent = false."
            ])
    ]
}
