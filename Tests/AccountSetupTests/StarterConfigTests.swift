import MoCore
import Testing
import AccountSetup
import MoConfig

/// The table of known providers and the config written from it: every row, rendered, loads.
@Suite struct StarterConfigTests {
    static let env = ["HOME": "/home/u"]

    @Test(
        arguments: [
            ("me@gmail.com", "gmail", "imap.gmail.com", 993, TLSMode.implicit, "smtp.gmail.com", 465, TLSMode.implicit),
            ("me@GoogleMail.com", "gmail", "imap.gmail.com", 993, .implicit, "smtp.gmail.com", 465, .implicit),
            ("me@hotmail.com", "outlook", "outlook.office365.com", 993, .implicit, "smtp-mail.outlook.com", 587, .starttls),
            ("me@outlook.com", "outlook", "outlook.office365.com", 993, .implicit, "smtp-mail.outlook.com", 587, .starttls),
            ("me@yahoo.com", "yahoo", "imap.mail.yahoo.com", 993, .implicit, "smtp.mail.yahoo.com", 465, .implicit),
            ("me@icloud.com", "icloud", "imap.mail.me.com", 993, .implicit, "smtp.mail.me.com", 587, .starttls),
            ("me@me.com", "icloud", "imap.mail.me.com", 993, .implicit, "smtp.mail.me.com", 587, .starttls),
            ("me@fastmail.com", "fastmail", "imap.fastmail.com", 993, .implicit, "smtp.fastmail.com", 465, .implicit),
            ("me@posteo.de", "posteo", "posteo.de", 993, .implicit, "posteo.de", 465, .implicit),
            ("me@mailbox.org", "mailbox.org", "imap.mailbox.org", 993, .implicit, "smtp.mailbox.org", 465, .implicit),
            ("me@gmx.de", "gmx", "imap.gmx.net", 993, .implicit, "mail.gmx.net", 465, .implicit),
            ("me@gmx.com", "gmx.com", "imap.gmx.com", 993, .implicit, "mail.gmx.com", 465, .implicit),
            ("me@proton.me", "proton", "127.0.0.1", 1143, .starttls, "127.0.0.1", 1025, .starttls),
            ("me@pm.me", "proton", "127.0.0.1", 1143, .starttls, "127.0.0.1", 1025, .starttls)
        ] as [(String, String, String, Int, TLSMode, String, Int, TLSMode)])
    func knownDomains(
        address: String, id: String, imapHost: String, imapPort: Int, imapTLS: TLSMode,
        smtpHost: String, smtpPort: Int, smtpTLS: TLSMode
    ) throws {
        let domain = try #require(mailDomain(of: address))
        let p = try #require(KnownProviders.provider(forDomain: domain))
        #expect(p.id == id)
        #expect(p.settings.imap.host == imapHost && p.settings.imap.port == imapPort && p.settings.imap.tls == imapTLS)
        #expect(p.settings.smtp?.host == smtpHost && p.settings.smtp?.port == smtpPort && p.settings.smtp?.tls == smtpTLS)
    }

    /// Fastmail's JMAP endpoint is offered, commented: the table to put in place of [imap], and it loads so.
    @Test func fastmailOffersItsJMAPEndpoint() throws {
        let settings = try #require(KnownProviders.provider(named: "fastmail")).settings
        #expect(settings.jmap == "https://api.fastmail.com/jmap/session")
        let text = StarterConfig(address: "me@fastmail.com", accountName: "fastmail", maildir: "/home/u/Mail/fastmail", settings: settings)
            .render()
        #expect(text.contains("# [account.fastmail.jmap]\n# url = \"https://api.fastmail.com/jmap/session\"\n# auth = \"bearer\"\n"))
        // Swapped in for the [imap] table, it loads as a JMAP account.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "[account.fastmail.imap]"))
        let end = lines[(start + 1)...].firstIndex { $0.hasPrefix("[") || $0.isEmpty } ?? lines.count
        lines.removeSubrange(start..<end)
        let swapped = lines.map { line -> String in
            ["# [account.fastmail.jmap]", "# url = ", "# auth = \"bearer\"", "# password-command = "].contains { line.hasPrefix($0) }
                ? String(line.dropFirst(2)) : line
        }.joined(separator: "\n")
        let config = try ConfigLoader.parse(text: swapped, path: "/p/config.toml", environment: Self.env)
        #expect(config.accounts.first?.jmap?.url == "https://api.fastmail.com/jmap/session" && config.accounts.first?.jmap?.auth == .bearer)
    }

    @Test func unknownDomainIsNotInTheTable() {
        #expect(KnownProviders.provider(forDomain: "example.org") == nil)
        #expect(KnownProviders.provider(forDomain: "mail.gmail.com") == nil)  // exact domains only
        #expect(KnownProviders.provider(named: "Microsoft365")?.settings.smtp?.host == "smtp.office365.com")
    }

    /// Gmail, Outlook.com and Microsoft 365 sign in with `mo-sync login`: auth = "oauth2", an [oauth2]
    /// table with the provider, no password-command. Others get `pass`. Never a password.
    @Test func loginKindDecidesAuthAndCommand() throws {
        let outlook = try #require(KnownProviders.provider(named: "outlook")).settings
        #expect(outlook.imap.auth == .oauth2 && outlook.login == .oauth2)
        let text = StarterConfig(
            address: "me@outlook.com", accountName: "outlook", maildir: "~/Mail/outlook",
            settings: outlook, clientID: "abc-123"
        ).render()
        #expect(text.contains("auth = \"oauth2\""))
        #expect(!text.contains("password-command = "))
        #expect(text.contains("[account.outlook.oauth2]\nprovider = \"microsoft\"\ntenant = \"consumers\"\nclient-id = \"abc-123\"\n"))
        func render(_ id: String, _ domain: String) -> String {
            StarterConfig(
                address: "me@" + domain, accountName: id, maildir: "~/Mail/" + id,
                settings: KnownProviders.provider(named: id)!.settings
            ).render()
        }
        let gmail = render("gmail", "gmail.com")
        #expect(gmail.contains("[account.gmail.oauth2]\nprovider = \"google\"\nclient-id = \"YOUR-CLIENT-ID\"\n"))
        #expect(gmail.contains("save-sent = false"))
        #expect(gmail.contains("app password"))  // the honest comment: a personal account may use one
        let yahoo = render("yahoo", "yahoo.com")
        #expect(yahoo.contains("password-command = \"pass show email/me@yahoo.com\""))
        #expect(yahoo.contains("#   secret-tool lookup mo me@yahoo.com"))
        #expect(yahoo.contains("#   gpg --quiet --batch --decrypt ~/.config/mo/me@yahoo.com.gpg"))
        #expect(!yahoo.split(separator: "\n").contains { $0.hasPrefix("auth =") })  // app passwords: auth "auto"
        // A password-command given on the command line wins: the old way (a token helper) stays possible.
        let helper = StarterConfig(
            address: "me@outlook.com", accountName: "outlook", maildir: "~/Mail/outlook", settings: outlook,
            passwordCommand: "oama access me@outlook.com"
        ).render()
        #expect(helper.contains("password-command = \"oama access me@outlook.com\"") && !helper.contains(".oauth2]"))
    }

    /// Every provider's config loads, with the values the table has.
    @Test(arguments: KnownProviders.ids)
    func everyProviderRendersALoadableConfig(id: String) throws {
        let p = try #require(KnownProviders.provider(named: id))
        let address = "me@" + (p.domains.first ?? "example.org")
        let text = StarterConfig(address: address, accountName: "acct", maildir: "~/Mail/acct", settings: p.settings).render()
        let config = try ConfigLoader.parse(text: text, path: "/home/u/.config/mo/config.toml", environment: Self.env)
        let account = try #require(config.accounts.first)
        #expect(account.name == "acct" && account.address == address && account.maildir == "/home/u/Mail/acct")
        let imap = try #require(account.imap)
        #expect(imap.host == p.settings.imap.host && imap.port == p.settings.imap.port && imap.tls == p.settings.imap.tls)
        #expect(imap.auth == p.settings.imap.auth && imap.user == address)
        let smtp = try #require(account.smtp)
        #expect(smtp.host == p.settings.smtp?.host && smtp.port == p.settings.smtp?.port && smtp.saveSent == p.settings.saveSent)
        #expect(imap.passwordCommand?.command == smtp.passwordCommand?.command)
        #expect(imap.caFile == p.settings.caFile.map { $0.replacingTilde("/home/u") })
    }

    /// Odd but valid addresses, names and commands read back as themselves (TOML and shell quoting).
    @Test(arguments: [
        ("o'brien+tag@example.org", "pass show 'email/o'\\''brien+tag@example.org'"),
        ("a\"b\\c@example.org", "pass show 'email/a\"b\\c@example.org'"),
        ("plain.name@example.org", "pass show email/plain.name@example.org")
    ])
    func quotingRoundTrips(address: String, command: String) throws {
        let settings = MailSettings(
            imap: ServerEndpoint(host: "imap.example.org", port: 993, tls: .implicit, user: "o b"),
            smtp: nil, source: "the command line")
        let text = StarterConfig(address: address, accountName: "example", maildir: "~/Mail/my \"mail\"", settings: settings).render()
        let config = try ConfigLoader.parse(text: text, path: "/c/config.toml", environment: Self.env)
        let account = try #require(config.accounts.first)
        #expect(account.address == address && account.maildir == "/home/u/Mail/my \"mail\"")
        #expect(account.imap?.passwordCommand?.command == command && account.imap?.user == "o b")
        #expect(account.smtp == nil)
        #expect(text.contains("# [account.example.smtp]"))
    }

    @Test func guessedHostsSaySo() throws {
        let settings = MailSettings(
            imap: ServerEndpoint(host: "imap.example.org", port: 993, tls: .implicit),
            smtp: ServerEndpoint(host: "smtp.example.org", port: 465, tls: .implicit),
            source: "a guess from the domain", guessed: true)
        let text = StarterConfig(address: "me@example.org", accountName: "example", maildir: "~/Mail", settings: settings).render()
        #expect(text.components("# GUESSED") == 2)
        _ = try ConfigLoader.parse(text: text, path: "/c/config.toml", environment: Self.env)
    }

    @Test(arguments: [
        ("me@example.org", "example"), ("me@mail.example.org", "mail"), ("me@xn--bcher-kva.example", "xn--bcher-kva"),
        ("me@bücher.example", "mail"), ("me@", "mail")
    ])
    func defaultAccountName(address: String, name: String) {
        #expect(StarterConfig.defaultAccountName(for: address) == name)
    }
}

extension String {
    func replacingTilde(_ home: String) -> String { hasPrefix("~/") ? home + dropFirst() : self }
    func components(_ needle: String) -> Int {
        var n = 0, rest = Substring(self)
        while let r = rest.firstRange(of: needle) { n += 1; rest = rest[r.upperBound...] }
        return n
    }
}
