#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import Testing
import MoTestSupport
@testable import MoConfig

@Suite struct ConfigLoaderTests {
    @Test func defaults() throws {
        let config = try loadConfig(minimalConfig())
        #expect(config.path == "/p/config.toml")
        #expect(config.stateDirectory == "/home/u/.local/state/mo")
        #expect(config.indexDirectory == "/home/u/.cache/mo/index")
        let work = try #require(config.accounts.first)
        #expect(work.name == "work")
        #expect(work.aliases == [])
        #expect(work.maildir == "/home/u/Mail/work")
        #expect(work.layout == .verbatim)
        #expect(work.folders.patterns == ["*"])
        #expect(work.imap?.port == 993)
        #expect(work.imap?.tls == .implicit)
        #expect(work.imap?.user == "me@example.com")
        #expect(work.imap?.auth == .auto)
        #expect(work.imap?.caFile == nil)
        #expect(work.imap?.passwordCommand == PasswordCommand("pass show mail/work", account: "work"))
        #expect(work.smtp == nil)
        #expect(work.sync == SyncConfig())
        #expect(work.sync.new == .both && work.sync.expunge == .both)
        #expect(work.sync.maxDeletePercent == 20 && work.sync.connections == 2)
        #expect(work.sync.keywords && work.sync.watch == ["INBOX"])
    }

    @Test func xdgDefaultsForGeneral() throws {
        let env = ["HOME": "/home/u", "XDG_STATE_HOME": "/xs", "XDG_CACHE_HOME": "/xc"]
        let config = try ConfigLoader.parse(text: minimalConfig(), path: "/p/config.toml", environment: env)
        #expect(config.stateDirectory == "/xs/mo")
        #expect(config.indexDirectory == "/xc/mo/index")
    }

    @Test(arguments: [
        (TLSMode.implicit, "imap.example.com", 993, 465),
        (.starttls, "imap.example.com", 143, 587),
        (.none, "localhost", 143, 25),
        (.none, "127.0.0.1", 143, 25),
        (.none, "::1", 143, 25)
    ])
    func portsDefaultFromTLS(tls: TLSMode, host: String, imapPort: Int, smtpPort: Int) throws {
        let text = """
            [account.a]
            address = "a@b.c"
            maildir = "/m"
            [account.a.imap]
            host = "\(host)"
            tls = "\(tls.rawValue)"
            password-command = "true"
            [account.a.smtp]
            host = "\(host)"
            tls = "\(tls.rawValue)"
            """
        let account = try #require(try loadConfig(text).accounts.first)
        #expect(account.imap?.port == imapPort)
        #expect(account.smtp?.port == smtpPort)
        #expect(account.smtp?.passwordCommand == nil)
        #expect(account.smtp?.saveSent == true)
    }

    @Test func everyKeySet() throws {
        let text = """
            [general]
            state-dir = "state"
            index-dir = "$HOME/idx"

            [account.work]
            address = "me@example.com"
            aliases = ["Me@Old.example.com"]
            maildir = "${HOME}/Mail/../Mail/./work"
            layout = "maildir++"
            folders = ["*", "!Spam"]

            [account.work.imap]
            host = "imap.example.com"
            port = 1993
            tls = "starttls"
            user = "login"
            password-command = "echo x"
            ca-file = "ca.pem"
            auth = "xoauth2"
            timeout = "2m"

            [account.work.smtp]
            host = "smtp.example.com"
            port = 2525
            tls = "starttls"
            user = "smtp-login"
            password-command = "echo y"
            ca-file = "/etc/ca.pem"
            auth = "login"
            save-sent = false

            [account.work.sync]
            new = "pull"
            flags = "push"
            delete = "none"
            create = "local"
            expunge = "remote"
            max-delete-percent = 0
            connections = 16
            keywords = false
            watch = ["INBOX", "Lists/dev"]
            poll-interval = 60
            """
        let config = try loadConfig(text)
        #expect(config.stateDirectory == "/p/state")
        #expect(config.indexDirectory == "/home/u/idx")
        let a = try #require(config.account(named: "work"))
        #expect(a.aliases == ["Me@Old.example.com"])
        #expect(a.maildir == "/home/u/Mail/work")
        #expect(a.layout == .maildirPlusPlus)
        #expect(a.folders == FolderFilter(patterns: ["*", "!Spam"]))
        #expect(
            a.imap
                == IMAPConfig(
                    host: "imap.example.com", port: 1993, tls: .starttls, user: "login",
                    passwordCommand: PasswordCommand("echo x", account: "work"),
                    caFile: "/p/ca.pem", auth: .xoauth2, timeout: 120))
        #expect(
            a.smtp
                == SMTPConfig(
                    host: "smtp.example.com", port: 2525, tls: .starttls, user: "smtp-login",
                    passwordCommand: PasswordCommand("echo y", account: "work"),
                    caFile: "/etc/ca.pem", auth: .login, saveSent: false))
        var sync = SyncConfig()
        sync.new = .pull; sync.flags = .push; sync.delete = .none
        sync.create = .local; sync.expunge = .remote
        sync.maxDeletePercent = 0; sync.connections = 16; sync.keywords = false
        sync.watch = ["INBOX", "Lists/dev"]; sync.pollInterval = 60
        #expect(a.sync == sync)
    }

    @Test(arguments: [
        ("~", "/home/u"),
        ("~/Mail", "/home/u/Mail"),
        ("$HOME/Mail", "/home/u/Mail"),
        ("${HOME}/Mail", "/home/u/Mail"),
        ("$HOMEDIR/Mail", "/p/$HOMEDIR/Mail"),
        ("Mail", "/p/Mail"),
        ("./Mail/", "/p/Mail"),
        ("../Mail", "/Mail"),
        ("/var//mail/./x/../y", "/var/mail/y")
    ])
    func pathExpansion(raw: String, expected: String) throws {
        let text = minimalConfig().replacingOccurrences("\"~/Mail/work\"", "\"\(raw)\"")
        #expect(try loadConfig(text).accounts[0].maildir == expected)
    }

    @Test func relativePathsFollowTheConfigFile() throws {
        let config = try ConfigLoader.parse(
            text: minimalConfig(maildir: "mail"),
            path: "/etc/mo/../mo/config.toml", environment: testEnvironment)
        #expect(config.accounts[0].maildir == "/etc/mo/mail")
    }

    @Test func accountOrderAndLookup() throws {
        let work = minimalConfig().replacingOccurrences("maildir =", "aliases = [\"x@y.z\"]\nmaildir =")
        let text =
            work + "\n" + """
                [account.home]
                address = "Me@Home.example"
                aliases = ["old@home.example"]
                maildir = "/m/home"
                [account.home.imap]
                host = "imap.home.example"
                password-command = "true"
                [account.a-b_9]
                address = "c@d.e"
                maildir = "/m/c"
                [account.a-b_9.imap]
                host = "h"
                password-command = "true"
                """
        let config = try loadConfig(text)
        #expect(config.accounts.map(\.name) == ["work", "home", "a-b_9"])
        #expect(config.account(named: "home")?.address == "Me@Home.example")
        #expect(config.account(named: "HOME") == nil)
        #expect(config.account(forAddress: "me@home.EXAMPLE")?.name == "home")
        #expect(config.account(forAddress: "OLD@home.example")?.name == "home")
        #expect(config.account(forAddress: "Someone <X@Y.Z>")?.name == "work")
        #expect(config.account(forAddress: " me@example.com ")?.name == "work")
        #expect(config.account(forAddress: "nobody@example.com") == nil)
    }

    static let sendOnly = """
        [account.work]
        address = "me@example.com"
        [account.work.smtp]
        host = "smtp.example.com"
        password-command = "pass show mail/work"
        """

    @Test func aSendOnlyAccountIsValidAndNamesWhatItLacks() throws {
        let config = try loadConfig(
            minimalConfig() + "\n"
                + Self.sendOnly.replacingOccurrences("work", "news")
                .replacingOccurrences("me@example.com", "me@news.example"))
        let news = try #require(config.account(named: "news"))
        #expect(news.maildir == nil && news.imap == nil && news.syncPair == nil && news.line == 7)
        #expect(news.smtp?.host == "smtp.example.com" && news.smtp?.saveSent == true && !news.savesSent)
        #expect(try config.smtp(of: news).port == 465)
        #expect(
            throws: ConfigError(
                file: "/p/config.toml", line: 7, key: "account.news",
                problem: "send-only account (no maildir, no [account.news.imap] or .jmap table): nothing to sync")
        ) {
            try config.syncPair(of: news)
        }
        // The synced account has both halves and no [smtp]: mo-sendmail is told which table is missing.
        let work = try #require(config.account(named: "work"))
        #expect(try config.syncPair(of: work) == Account.SyncPair(maildir: "/home/u/Mail/work", server: .imap(work.imap!)))
        #expect(
            throws: ConfigError(
                file: "/p/config.toml", line: 1, key: "account.work",
                problem: "no [account.work.smtp] table (nor [account.work.jmap]): mo-sendmail needs one to send")
        ) {
            try config.smtp(of: work)
        }
        #expect(work.savesSent == false)
    }

    /// A JMAP account: `[jmap]` instead of `[imap]`, its session URL given or discovered from the address.
    @Test func aJMAPAccount() throws {
        let text = """
            [account.fm]
            address = "me@fastmail.example"
            maildir = "/home/u/Mail/fm"
            [account.fm.jmap]
            url = "https://api.fastmail.example/jmap/session"
            auth = "bearer"
            password-command = "pass fm"
            timeout = "30s"

            [account.cy]
            address = "me@cyrus.example"
            maildir = "/home/u/Mail/cy"
            [account.cy.jmap]
            password-command = "pass cy"
            save-sent = false
            [account.cy.smtp]
            host = "smtp.cyrus.example"
            password-command = "pass cy"
            """
        let config = try loadConfig(text)
        let fm = try #require(config.account(named: "fm"))
        #expect(fm.imap == nil && fm.jmap?.url == "https://api.fastmail.example/jmap/session" && fm.jmap?.auth == .bearer)
        #expect(fm.jmap?.user == "me@fastmail.example" && fm.jmap?.timeout == 30)
        #expect(try config.syncPair(of: fm).jmap == fm.jmap && (try config.syncPair(of: fm).imap) == nil)
        // Sent through the JMAP server, which keeps the Sent copy; an [smtp] table, when given, sends instead.
        #expect(fm.sendsByJMAP && fm.keepsSent && fm.jmap?.saveSent == true && !fm.savesSent)
        let cy = try #require(config.account(named: "cy"))
        #expect(cy.jmap?.url == "https://cyrus.example/.well-known/jmap" && cy.jmap?.auth == .basic)
        #expect(cy.jmap?.discovered == true && fm.jmap?.discovered == false)
        #expect(!cy.sendsByJMAP && !cy.keepsSent && cy.jmap?.saveSent == false)
        #expect {
            _ = try config.imapServer(of: cy, for: "mo-sync-check")
        } throws: { error in
            (error as? ConfigError)?.problem == "a JMAP account: mo-sync-check does not serve JMAP accounts yet (docs/jmap.md)"
        }
    }

    @Test(arguments: [
        ("[account.a.jmap]\npassword-command = \"p\"\n[account.a.imap]\nhost = \"h\"\npassword-command = \"p\"\n", "both"),
        ("[account.a.jmap]\nurl = \"http://example.org/jmap\"\npassword-command = \"p\"\n", "not an https address"),
        ("[account.a.jmap]\nurl = \"https://example.org/jmap\"\n", "password-command"),
        ("[account.a.jmap]\nurl = \"https://example.org/jmap\"\nauth = \"oauth2\"\n", "add an [account.a.oauth2] table"),
        ("[account.a.jmap]\npassword-command = \"p\"\nauth = \"digest\"\n", "auth"),
        ("[account.a.jmap]\npassword-command = \"p\"\nhost = \"h\"\n", "host")
    ])
    func badJMAPTables(table: String, problem: String) {
        let text = "[account.a]\naddress = \"me@example.org\"\nmaildir = \"/m\"\n" + table
        #expect {
            _ = try loadConfig(text)
        } throws: { error in
            "\(error)".contains(problem)
        }
    }

    @Test func queueLifetimeTakesADuration() throws {
        #expect(try loadConfig(minimalConfig()).queueLifetime == 5 * 86_400)
        #expect(try loadConfig("[general]\nqueue-lifetime = \"12h\"\n" + minimalConfig()).queueLifetime == 43_200)
        #expect(try loadConfig("[general]\nqueue-lifetime = \"30m\"\n" + minimalConfig()).queueLifetime == 1_800)
    }

    @Test func exampleConfigLoads() throws {
        let path = URLPath.repositoryRoot + "/config/mo.toml"
        let config = try ConfigLoader.load(path: path, environment: testEnvironment)
        #expect(config.accounts.map(\.name) == ["work", "personal", "relay"])
        #expect(config.queueLifetime == 5 * 86_400)
        #expect(config.keywords == [KeywordTag(keyword: "$label2", tag: "job")])
        #expect(
            config.tagRules == [
                TagRule(query: "list:dev.lists.example", add: ["dev"], remove: ["unread"], line: config.tagRules.first?.line ?? 0)
            ])
        #expect(config.account(named: "relay").map { $0.syncPair == nil && $0.smtp?.port == 587 } == true)
        let work = try #require(config.account(named: "work"))
        #expect(work.smtp?.host == "smtp.example.com")
        #expect(work.folders.includes("Lists/dev", delimiter: "/"))
        #expect(!work.folders.includes("Spam", delimiter: "/"))
        #expect(work.imap?.caFile == "/home/u/.config/mo/work-ca.pem")
        let personal = try #require(config.account(named: "personal"))
        #expect(personal.imap?.port == 993 && personal.smtp == nil && personal.sync == SyncConfig())
    }

    @Test func loadsFromDiskAndReportsItsPath() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.path + "/config.toml"
        try dir.write(path, minimalConfig(maildir: "maildir") + "\nport = \"x\"")
        #expect(throws: ConfigError(file: path, line: 7, key: "account.work.imap.port", problem: "expected an integer, found a string")) {
            try ConfigLoader.load(path: path, environment: testEnvironment)
        }
        try dir.write(path, minimalConfig(maildir: "maildir"))
        let env = ["HOME": "/home/u", "MO_CONFIG": path]
        let config = try ConfigLoader.load(explicitPath: nil, environment: env)
        #expect(config.path == path)
        #expect(config.accounts[0].maildir == dir.path + "/maildir")
    }
}

/// Locates files of this repository from the test source's own path.
enum URLPath {
    static var repositoryRoot: String {
        // #filePath = <root>/Tests/MoConfigTests/ConfigLoaderTests.swift
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }
}

/// Config files are written owner-only, as users keep them (other modes draw the permission warning).
extension TemporaryDirectory {
    func write(_ file: String, _ text: String) throws {
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw GenericError(.localIO, "cannot create \(file)") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard Glibc.write(fd, bytes, bytes.count) == bytes.count else { throw GenericError(.localIO, "short write") }
    }
}
