#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import MoHTTP
import MoNet
import MoTestSupport
import Testing

/// `mo-sync login` against the local authorization server (scripts/test-oauth2-server): the test plays the
/// browser (it follows the sign-in page's redirect back to the command's loopback listener), or enters the
/// device code. The token file ends with a refresh token, mode 0600, and no token reaches the output.
@Suite(.serialized) struct LoginTests {
    static func config(_ dir: String, issuer: String, imap: TestServer? = nil) throws -> String {
        let file = dir + "/config.toml"
        try writePrivateFile(file, oauth2AccountConfig(in: dir, issuer: issuer, imap: imap))
        return file
    }

    /// A directory, the authorization server and a configuration signing in at it.
    static func setUp(lifetime: Int = 20) throws -> (TemporaryDirectory, LocalOAuth2Server, String) {
        let dir = try TemporaryDirectory("mo-login")
        let server = try LocalOAuth2Server(lifetime: lifetime)
        return (dir, server, try config(dir.path, issuer: server.issuer))
    }

    /// Starts `mo-sync login` and returns it with the first stderr line that `wanted` accepts.
    static func start(_ args: [String], logs: String, wanted: (String) -> Bool) throws -> (BackgroundProcess, String) {
        for file in [logs + ".out", logs + ".err"] { unlink(file) }  // a line of an earlier login is not this one's
        let p = try BackgroundProcess(
            ["/bin/sh", "-c", "exec \"$0\" \"$@\" >\(logs).out 2>\(logs).err", TestPaths.binDirectory + "/mo-sync"] + args)
        for _ in 0..<200 {
            let text = (try? readWholeFile(logs + ".err").get()).map { String(decoding: $0, as: UTF8.self) } ?? ""
            if let line = text.split(separator: "\n").map(String.init).first(where: wanted) { return (p, line) }
            usleep(50_000)
        }
        p.kill()
        throw GenericError(.software, "mo-sync login printed no such line")
    }

    static func tokenFile(_ dir: String) throws -> String {
        String(decoding: try readWholeFile(dir + "/state/work/oauth2-tokens").get(), as: UTF8.self)
    }

    @Test func signInWithTheBrowser() throws {
        let (dir, server, config) = try Self.setUp()
        defer { dir.remove(); server.stop() }
        let (p, url) = try Self.start(
            ["login", "--config", config, "work", "--no-browser", "--timeout", "20"], logs: dir.path + "/login",
            wanted: { $0.hasPrefix("http://127.0.0.1:\(server.port)/authorize?") })
        #expect(url.contains("code_challenge_method=S256") && url.contains("login_hint=me@example.com"))
        // The browser: the sign-in page answers 302 to the loopback redirect, which the command answers.
        let location = try #require(try Self.location(url: url))
        #expect(location.hasPrefix("http://127.0.0.1:") && location.contains("code=") && location.contains("state="))
        let redirect = try #require(WebAddress(location))
        let back = try HTTPClient.send("GET", redirect, maxBody: 4096)
        #expect(back.status == 200 && String(decoding: back.body, as: UTF8.self).contains("Signed in"))
        #expect(p.wait() == 0)
        let tokens = try Self.tokenFile(dir.path)
        #expect(tokens.hasPrefix("mo-oauth2-tokens 1\ntoken-endpoint http://127.0.0.1:\(server.port)/token\n"))
        #expect(tokens.contains("\nrefresh rt-") && tokens.contains("\naccess at-"))
        var st = stat()
        #expect(stat(dir.path + "/state/work/oauth2-tokens", &st) == 0 && st.st_mode & 0o777 == 0o600)
        let out = try readWholeFile(dir.path + "/login.out").get() + readWholeFile(dir.path + "/login.err").get()
        #expect(Self.noTokens(String(decoding: out, as: UTF8.self)))
    }

    /// The redirect the sign-in page answers with (its Location field), read with a raw request.
    static func location(url: String) throws -> String? {
        guard let address = WebAddress(url) else { return nil }
        let c = try Connection.connect(host: address.host, port: address.port, timeout: 10)
        defer { c.close() }
        try c.write(Array("GET \(address.target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8))
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try buffer.withUnsafeMutableBytes { raw throws(NetError) in try c.read(into: raw) }
            if n == 0 { break }
            all += buffer[0..<n]
        }
        let text = String(decoding: all, as: UTF8.self)
        return text.split(separator: "\r\n").first { $0.hasPrefix("Location: ") }.map { String($0.dropFirst(10)) }
    }

    @Test func signInWithADeviceCode() throws {
        let (dir, server, config) = try Self.setUp()
        defer { dir.remove(); server.stop() }
        let (p, line) = try Self.start(
            ["login", "--config", config, "work", "--device"], logs: dir.path + "/login", wanted: { $0.contains("enter the code") })
        let code = try #require(line.split(separator: " ").last.map(String.init))
        #expect(line.contains("open http://127.0.0.1:\(server.port)/activate"))
        usleep(1_500_000)  // a poll or two answered authorization_pending first
        let approve = try #require(WebAddress(server.issuer + "/approve?user_code=" + code))
        let approved = try HTTPClient.send("POST", approve, body: [], maxBody: 4096)
        #expect(approved.status == 200)
        #expect(p.wait() == 0)
        #expect(try Self.tokenFile(dir.path).contains("\nrefresh rt-"))
    }

    /// Signs in by the browser path (the test plays the browser) and waits for the command to end.
    static func signIn(_ dir: String, config: String, server: LocalOAuth2Server) throws -> Int32 {
        let (p, url) = try start(
            ["login", "--config", config, "work", "--no-browser", "--timeout", "20"], logs: dir + "/login",
            wanted: { $0.hasPrefix("http://127.0.0.1:\(server.port)/authorize?") })
        guard let location = try location(url: url), let redirect = WebAddress(location) else { p.kill(); return -1 }
        _ = try HTTPClient.send("GET", redirect, maxBody: 4096)
        return p.wait()
    }

    /// What an OAuth2 test runs against, signed in.
    struct Rig {
        let dir: String
        let oauth: LocalOAuth2Server
        let imap: TestServer
        /// The private Postfix authenticating through `imap` (with `postfix: true`).
        let postfix: SMTPTestServer?
        let config: String
    }

    /// A directory, the authorization server (tokens living `lifetime` s), the private Dovecot that checks
    /// them at its introspection endpoint (and, with `postfix`, a Postfix that authenticates submission
    /// through it), a configuration whose `[imap]` (and `[smtp]`) use `auth = "oauth2"`, and a completed
    /// sign-in; all stopped after `body`, and their logs searched for token text.
    static func signedIn(lifetime: Int, postfix: Bool = false, _ body: (Rig) throws -> Void) throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        let oauth = try LocalOAuth2Server(lifetime: lifetime)
        defer { oauth.stop() }
        let introspection = oauth.issuer + "/introspect"
        let servers = postfix ? try SubmissionServers.start(user: "me@example.com", introspection: introspection) : nil
        let imap = try servers?.dovecot ?? TestServer.start(user: "me@example.com", introspection: introspection)
        defer { if let servers { servers.stop() } else { imap.stop() } }
        let config = try Self.config(dir.path, issuer: oauth.issuer, imap: imap)
        if let servers {
            try writePrivateFile(
                config,
                oauth2AccountConfig(in: dir.path, issuer: oauth.issuer, imap: imap)
                    + "[account.work.smtp]\nhost = \"127.0.0.1\"\nport = \(servers.submissionPort)\ntls = \"starttls\"\n"
                    + "auth = \"oauth2\"\nca-file = \"\(servers.caFile)\"\n")
        }
        try #require(try Self.signIn(dir.path, config: config, server: oauth) == 0)
        try body(Rig(dir: dir.path, oauth: oauth, imap: imap, postfix: servers?.postfix, config: config))
        expectNoTokens(inLogsUnder: [imap.directory + "/log"] + (servers.map { [$0.postfix.directory + "/log"] } ?? []))
    }

    /// Token text is only in the token file: not in the servers' logs either.
    static func expectNoTokens(inLogsUnder directories: [String]) {
        for logs in directories {
            let names = (try? directoryNames(logs).get()) ?? []
            #expect(!names.isEmpty, "no logs in \(logs)")
            for name in names {
                let text = String(decoding: (try? readWholeFile(logs + "/" + name).get()) ?? [], as: UTF8.self)
                #expect(noTokens(text), "token text in \(logs)/\(name)")
            }
        }
    }

    /// Whether `text` holds none of the test server's token text (`at-…`, `rt-…`).
    static func noTokens(_ text: String) -> Bool { !text.contains("at-") && !text.contains("rt-") }

    static func refreshes(_ server: LocalOAuth2Server) throws -> Int64 {
        let stats = try HTTPClient.send("GET", WebAddress(server.issuer + "/stats")!, maxBody: 4096)
        return (try JSONReader.parse(stats.body))["refresh_token"]?.intValue ?? 0
    }

    /// Real parts end to end: the private Dovecot checks every XOAUTH2/OAUTHBEARER token at the
    /// authorization server's introspection endpoint (its oauth2 passdb). A sync logs in with the signed-in
    /// token; one across the token's renewal time makes exactly one refresh; a revoked grant gives the one
    /// line and exit 77, after one refresh try. No token text reaches the output.
    @Test func syncWithTokensThroughDovecotsOAuth2Passdb() throws {
        try Self.signedIn(lifetime: 8) { rig in
            let (oauth, config) = (rig.oauth, rig.config)

            let sync = { try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "--config", config, "work"]) }
            var outputs: [ChildProcess.Result] = []
            let first = try sync()
            outputs.append(first)
            #expect(first.status == 0, "\(first.stderrString)")
            #expect(try Self.refreshes(oauth) == 0)
            // mo-sync-check signs in with the same token and finds the Maildir and the server agree.
            let check = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync-check", "--config", config, "work"])
            outputs.append(check)
            #expect(check.status == 0, "\(check.stdoutString) \(check.stderrString)")
            #expect(try Self.refreshes(oauth) == 0)
            // The token is renewed at 3/4 of its 8 s: a sync after that refreshes once, the next one not.
            usleep(6_500_000)
            for _ in 0..<2 {
                let r = try sync()
                outputs.append(r)
                #expect(r.status == 0, "\(r.stderrString)")
            }
            #expect(try Self.refreshes(oauth) == 1)

            _ = try HTTPClient.send("POST", WebAddress(oauth.issuer + "/revoke?user=me@example.com")!, body: [], maxBody: 4096)
            let revoked = try sync()
            outputs.append(revoked)
            #expect(revoked.status == 77)
            #expect(
                revoked.stderrString.hasSuffix("work: sign-in expired or was revoked; run mo-sync login work\n"), "\(revoked.stderrString)")
            #expect(try Self.refreshes(oauth) == 2)
            for r in outputs { #expect(Self.noTokens(r.stdoutString + r.stderrString)) }
        }
    }

    /// Appends a message to the server's INBOX over plain IMAP with the password login (the oauth2 passdb
    /// is only for XOAUTH2 and OAUTHBEARER), as another device would.
    static func deliver(_ imap: TestServer, _ id: String) throws {
        let script = """
            import imaplib, sys
            m = imaplib.IMAP4("127.0.0.1", int(sys.argv[1])); m.login(sys.argv[2], sys.argv[3])
            m.append("INBOX", None, None, ("Message-ID: <%s@example.com>\\r\\nSubject: %s\\r\\n\\r\\nbody\\r\\n" % (sys.argv[4], sys.argv[4])).encode())
            m.logout()
            """
        let r = try ChildProcess.run(["python3", "-c", script, String(imap.imapPort), imap.user, imap.password, id])
        if r.status != 0 { throw GenericError(.software, "append failed: \(r.stderrString)") }
    }

    /// Seconds until a message whose name contains nothing we know arrives in the local INBOX (count grows to
    /// `count`), polled every 50 ms; nil after `limit`.
    static func arrival(_ dir: String, count: Int, limit: Double = 10) -> Double? {
        let start = monotonicSeconds()
        while monotonicSeconds() - start < limit {
            let n = ["new", "cur"].reduce(0) { $0 + ((try? directoryNames(dir + "/Mail/INBOX/" + $1).get())?.count ?? 0) }
            if n >= count { return monotonicSeconds() - start }
            usleep(50_000)
        }
        return nil
    }

    /// `mo-sync --watch` across two expiries of a 6 s token: each new message still arrives within 3 s (the
    /// listener's session stays logged in; each sync's connection asks the broker), and the token endpoint
    /// is asked at most once per lifetime.
    @Test func watchAcrossTwoExpiries() throws {
        try Self.signedIn(lifetime: 6) { rig in
            let (dir, oauth, imap, config) = (rig.dir, rig.oauth, rig.imap, rig.config)
            let log = dir + "/watch"
            let watch = try BackgroundProcess(
                [
                    "/bin/sh", "-c", "exec \"$0\" \"$@\" >\(log).out 2>\(log).err", TestPaths.binDirectory + "/mo-sync", "--config", config,
                    "--watch", "work"
                ])
            defer { _ = watch.kill() }
            usleep(2_000_000)
            var seen: [Double] = []
            for round in 1...2 {
                usleep(5_000_000)  // past the token's renewal time (4.5 s) each round
                try Self.deliver(imap, "watch-\(round)")
                if let t = Self.arrival(dir, count: round) { seen.append(t) }
            }
            #expect(seen.count == 2 && seen.allSatisfy { $0 < 3 }, "arrivals: \(seen)")
            let refreshes = try Self.refreshes(oauth)
            #expect(refreshes >= 1 && refreshes <= 3, "refresh requests: \(refreshes) over about 16 s of 6 s tokens")
            let out = try readWholeFile(log + ".out").get() + readWholeFile(log + ".err").get()
            #expect(Self.noTokens(String(decoding: out, as: UTF8.self)))
        }
    }
}
