#if canImport(Glibc)
    import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

/// `mo-sync init` as a user runs it, with every lookup served on 127.0.0.1: a private dnsmasq for the SRV
/// records, python3's http.server for the autoconfig file, the private Dovecot for `--check`. No stdin
/// (not a terminal), so init asks nothing.
@Suite struct InitCommandTests {
    /// CI installs dnsmasq (.ci/run sets MO_CI): there its absence is a failure, elsewhere a skip.
    static let dnsmasqUsable = LocalDNS.isInstalled || getenv("MO_CI") != nil

    struct Home {
        let dir: TemporaryDirectory
        var path: String { dir.path }
        var configPath: String { path + "/config/mo/config.toml" }
        /// No network unless a test names a server: DNS to a closed port, autoconfig to a closed port.
        var env: [String: String]

        init() throws {
            dir = try TemporaryDirectory("mo-init")
            env = [
                "HOME": dir.path, "XDG_CONFIG_HOME": dir.path + "/config", "XDG_STATE_HOME": dir.path + "/state",
                "MO_CONFIG": "", "MO_DNS_SERVER": "127.0.0.1:\(freeUDPPort())",
                "MO_AUTOCONFIG_URL": "http://127.0.0.1:\(closedLoopbackPort())"
            ]
        }

        func run(_ args: [String], extra: [String: String] = [:]) throws -> ChildProcess.Result {
            try ChildProcess.run([TestPaths.binDirectory + "/mo-sync"] + args, environment: env.merging(extra) { $1 })
        }
    }

    @Test func writesALoadableConfigOnceAndNeverOverwritesIt() throws {
        let home = try Home()
        defer { home.dir.remove() }
        let r = try home.run(["init", "me@fastmail.com"])
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(r.stdoutString.isEmpty)
        #expect(
            r.stderrString.hasPrefix(
                "mo-sync: wrote \(home.configPath) (account fastmail; servers: the table of known providers (Fastmail))"))
        #expect(
            r.stderrString.hasSuffix(
                "; store the password (pass insert email/me@fastmail.com) or edit password-command, then: mo-sync init --check\n"))
        var st = stat()
        #expect(stat(home.configPath, &st) == 0 && st.st_mode & 0o777 == 0o600)
        guard case .success(let written) = readWholeFile(home.configPath) else { Issue.record("no config written"); return }
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.contains("host = \"imap.fastmail.com\"") && text.contains("password-command = \"pass show email/me@fastmail.com\""))
        // The loader reads it: status loads the config and has nothing to say.
        let status = try home.run(["status"])
        #expect(status.status == 0 && status.stderrString.isEmpty, "\(status.stderrString)")

        let again = try home.run(["init", "--name", "other", "me@posteo.de"])
        #expect(again.status == 73)
        #expect(
            again.stderrString
                == "mo-sync: \(home.configPath) exists already; init never overwrites a configuration (edit it, or pass --config NEWFILE)\n"
        )
        #expect(readWholeFile(home.configPath) == .success(written))
    }

    @Test func dryRunPrintsAndWritesNothing() throws {
        let home = try Home()
        defer { home.dir.remove() }
        let r = try home.run([
            "init", "--dry-run", "--name", "work", "--maildir", "~/Maildir", "--password-command",
            "secret-tool lookup mo work", "--imap", "mail.example.org", "--smtp", "mail.example.org:587",
            "--ca-file", "~/example-ca.pem", "me@example.org"
        ])
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(r.stderrString.isEmpty)
        for line in [
            "[account.work]", "maildir = \"~/Maildir\"", "host = \"mail.example.org\"", "port = 587", "tls = \"starttls\"",
            "password-command = \"secret-tool lookup mo work\"", "# Servers: the command line."
        ] {
            #expect(r.stdoutString.contains(line + "\n"), "\(line)")
        }
        #expect(r.stdoutString.split(separator: "\n").filter { $0 == "ca-file = \"~/example-ca.pem\"" }.count == 2)  // [imap] and [smtp]
        #expect(access(home.configPath, F_OK) != 0)
    }

    @Test(arguments: [
        (["init"], "Missing the address"),
        (["init", "not-an-address"], "is not an email address"),
        (["init", "--name", "my work", "me@example.org"], "--name may contain only"),
        (["init", "--provider", "aol", "me@example.org"], "Unknown provider 'aol'"),
        (["init", "--imap", "mail.example.org:99999", "me@example.org"], "--imap"),
        (["init", "--check", "--dry-run"], "--check takes only")
    ])
    func badCommandLines(args: [String], message: String) throws {
        let home = try Home()
        defer { home.dir.remove() }
        let r = try home.run(args)
        #expect(r.status == 64)
        #expect(r.stderrString.contains(message), "\(r.stderrString)")
    }

    /// Nothing found and no terminal: guessed hosts, marked in the file and said on stderr; still loadable.
    @Test func nothingFoundWritesMarkedGuesses() throws {
        let home = try Home()
        defer { home.dir.remove() }
        let r = try home.run(["init", "me@example.test"])
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(
            r.stderrString.contains(
                "mo-sync: init: nothing found for example.test; writing guessed hosts imap.example.test and smtp.example.test"))
        #expect(r.stderrString.contains("mo-sync: init: autoconfig: "))
        #expect(try home.run(["status"]).status == 0)
    }

    /// On a terminal (script(1) gives it one) and with nothing found, it asks for the two hosts; an empty
    /// answer takes the guess.
    @Test func asksOnATerminalWhenNothingIsFound() throws {
        guard access("/usr/bin/script", X_OK) == 0 else { Issue.record("script(1) is missing (bsdutils)"); return }
        let home = try Home()
        defer { home.dir.remove() }
        let command = TestPaths.binDirectory + "/mo-sync init --offline --dry-run me@example.test"
        let r = try ChildProcess.run(
            ["script", "-qec", command, "/dev/null"], input: Array("mail.example.test:143\n\n".utf8),
            environment: home.env)
        let out = String(r.stdoutString.split(separator: "\r\n", omittingEmptySubsequences: false).joined(separator: "\n"))
        #expect(r.status == 0, "\(out)")
        #expect(out.contains("IMAP server for example.test? HOST[:PORT] [imap.example.test:993]: "))
        #expect(out.contains("# Servers: your answers.\n"))
        #expect(out.contains("host = \"mail.example.test\"\nport = 143\n"))
        #expect(out.contains("host = \"smtp.example.test\"\nport = 465\n"))
        #expect(!out.contains("GUESSED"))
    }

    @Test(.enabled(if: dnsmasqUsable, "dnsmasq is not installed (apt-get install dnsmasq-base); CI installs it"))
    func srvRecordsFromALocalDNSServer() throws {
        let dns = try LocalDNS(
            srv: [
                .init("_imaps._tcp.example.test", "mail.example.test", 993, priority: 10),
                .init("_imap._tcp.example.test", "imap.example.test", 143, priority: 0),
                .init("_submission._tcp.example.test", "smtp.provider.test", 587)
            ], localDomain: "test")
        defer { dns.stop() }
        let home = try Home()
        defer { home.dir.remove() }
        let r = try home.run(["init", "--dry-run", "me@example.test"], extra: ["MO_DNS_SERVER": "127.0.0.1:\(dns.port)"])
        #expect(r.status == 0, "\(r.stderrString)")
        let text = r.stdoutString
        #expect(text.contains("# Servers: the DNS SRV records of example.test (RFC 6186).\n"))
        #expect(text.contains("host = \"imap.example.test\"\nport = 143\n"))  // the lower priority wins
        #expect(text.contains("tls = \"starttls\""))
        #expect(text.contains("host = \"smtp.provider.test\"\nport = 587\n"))
        #expect(text.contains("# smtp.provider.test is outside example.test;"))
    }

    @Test(.enabled(if: dnsmasqUsable, "dnsmasq is not installed (apt-get install dnsmasq-base); CI installs it"))
    func autoconfigFromALocalHTTPServer() throws {
        let dns = try LocalDNS(srv: [], localDomain: "test")  // NXDOMAIN for every SRV name
        defer { dns.stop() }
        let site = try TemporaryDirectory("mo-autoconfig")
        defer { site.remove() }
        _ = try ChildProcess.run(["mkdir", "-p", site.path + "/mail"])
        try writePrivateFile(
            site.path + "/mail/config-v1.1.xml",
            """
            <?xml version="1.0"?>
            <clientConfig version="1.1"><emailProvider id="example.test">
              <incomingServer type="imap"><hostname>imap.%EMAILDOMAIN%</hostname><port>993</port>
                <socketType>SSL</socketType><authentication>password-cleartext</authentication>
                <username>%EMAILLOCALPART%</username></incomingServer>
              <outgoingServer type="smtp"><hostname>smtp.example.test</hostname><port>465</port>
                <socketType>SSL</socketType><authentication>password-cleartext</authentication></outgoingServer>
            </emailProvider></clientConfig>
            """)
        let http = try LocalHTTP(directory: site.path)
        defer { http.stop() }
        let home = try Home()
        defer { home.dir.remove() }
        let r = try home.run(
            ["init", "me@example.test"],
            extra: ["MO_DNS_SERVER": "127.0.0.1:\(dns.port)", "MO_AUTOCONFIG_URL": http.baseURL])
        #expect(r.status == 0, "\(r.stderrString)")
        guard case .success(let bytes) = readWholeFile(home.configPath) else { Issue.record("no config"); return }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("# Servers: the autoconfig file \(http.baseURL)/mail/config-v1.1.xml.\n"))
        #expect(text.contains("host = \"imap.example.test\"\nport = 993\n"))
        #expect(text.contains("user = \"me\"\n"))
        #expect(text.contains("host = \"smtp.example.test\"\nport = 465\n"))
        #expect(try home.run(["status"]).status == 0)
    }

    // MARK: - --check against the private Dovecot

    static func dovecotConfig(_ server: TestServer, home: Home, password: String, port: Int? = nil) throws -> String {
        let path = home.path + "/check.toml"
        try writePrivateFile(
            path,
            """
            [account.test]
            address = "me@example.test"
            maildir = "\(home.path)/Mail"

            """ + server.imapTable(port: port, password: password) + "timeout = \"10s\"\n")
        return path
    }

    @Test func checkConnectsLogsInAndLists() throws {
        let server = try TestServer.shared()
        let home = try Home()
        defer { home.dir.remove() }
        let config = try Self.dovecotConfig(server, home: home, password: server.password)
        let r = try home.run(["init", "--check", "--config", config])
        #expect(r.status == 0, "\(r.stderrString)")
        let lines = r.stdoutString.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.first?.hasPrefix("test: imap 127.0.0.1:\(server.imapsPort): connected, TLS (TLSv1.") == true)
        #expect(lines.dropFirst().first == "test: login as \(server.user): ok")
        #expect(lines.dropFirst(2).first?.hasPrefix("test: LIST: ") == true && lines.dropFirst(2).first?.hasSuffix(" folders") == true)
        #expect(lines.last == "test: ok")
    }

    /// With an [smtp] table the check also opens a submission session (EHLO, STARTTLS, AUTH) on the
    /// private Postfix that the sendmail tests share.
    @Test func checkAlsoLogsInToSMTP() throws {
        let servers = try SendmailCLITests.servers.get()
        let home = try Home()
        defer { home.dir.remove() }
        let config = try Self.dovecotConfig(servers.dovecot, home: home, password: servers.dovecot.password)
        guard case .success(let head) = readWholeFile(config) else { Issue.record("no config"); return }
        try writePrivateFile(
            config,
            String(decoding: head, as: UTF8.self) + servers.smtpTable())
        let r = try home.run(["init", "--check", "--config", config])
        #expect(r.status == 0, "\(r.stderrString)")
        let lines = r.stdoutString.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(lines)")
        #expect(lines.dropFirst(3).first?.hasPrefix("test: smtp 127.0.0.1:\(servers.submissionPort): connected, STARTTLS (TLSv1.") == true)
        #expect(lines.dropFirst(4).first == "test: smtp login as \(servers.user): ok")
        #expect(lines.last == "test: ok")
    }

    @Test func checkReportsARefusedLoginWith77() throws {
        let server = try TestServer.shared()
        let home = try Home()
        defer { home.dir.remove() }
        let config = try Self.dovecotConfig(server, home: home, password: "wrong-password")
        let r = try home.run(["init", "--check", "--config", config, "me@example.test"])
        #expect(r.status == 77, "\(r.stdoutString)\(r.stderrString)")
        #expect(r.stdoutString.hasPrefix("test: imap 127.0.0.1:\(server.imapsPort): connected"))
        #expect(r.stderrString.hasPrefix("test: login as \(server.user): imap 127.0.0.1:\(server.imapsPort): authentication failed"))
        #expect(!r.stderrString.contains("wrong-password") && !r.stdoutString.contains("wrong-password"))
    }

    @Test func checkReportsAnUnreachableServerWith75() throws {
        let server = try TestServer.shared()
        let home = try Home()
        defer { home.dir.remove() }
        let port = closedLoopbackPort()
        let config = try Self.dovecotConfig(server, home: home, password: server.password, port: port)
        let r = try home.run(["init", "--check", "--config", config])
        #expect(r.status == 75)
        #expect(r.stdoutString.isEmpty)
        #expect(r.stderrString.hasPrefix("test: imap 127.0.0.1:\(port): cannot connect to 127.0.0.1:\(port):"), "\(r.stderrString)")
    }
}
