#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import MoHTTP
import MoTestSupport
import Testing

/// OAuth2 beyond the first login, against real parts: the private Postfix authenticates submission
/// through the private Dovecot, whose oauth2 passdb checks each token at the local authorization server
/// (scripts/test-oauth2-server). Sends across an expiry, an outage of the token endpoint, and processes
/// killed in the middle of a refresh.
@Suite(.serialized) struct OAuth2SendTests {
    static func run(_ program: String, _ args: [String], input: [UInt8] = [], config: String, crashAt: String = "") throws
        -> ChildProcess.Result
    {
        try ChildProcess.run(
            [TestPaths.binDirectory + "/" + program] + args, input: input,
            environment: ["MO_CONFIG": config, "MO_CRASH_AT": crashAt])
    }

    static func message(_ token: String) -> [UInt8] {
        Array("From: Me <me@example.com>\nTo: rcpt@mo.test\nSubject: \(token)\n\nhello\n".utf8)
    }

    static func stats(_ oauth: LocalOAuth2Server) throws -> JSONValue {
        try JSONReader.parse(try HTTPClient.send("GET", WebAddress(oauth.issuer + "/stats")!, maxBody: 4096).body)
    }

    static func outage(_ oauth: LocalOAuth2Server, _ on: Bool) throws {
        _ = try HTTPClient.send("POST", WebAddress(oauth.issuer + "/outage?on=\(on ? 1 : 0)")!, body: [], maxBody: 4096)
    }

    /// mo-sendmail signs in to Postfix with the token (no request while it lives); a send after the renewal
    /// time makes exactly one refresh. With the token endpoint down, a send is queued, mo-sync's flush says
    /// exit 75 and keeps it without spending a try, and the first run after the outage sends it once.
    @Test func sendAcrossAnExpiryAndAnOutage() throws {
        try LoginTests.signedIn(lifetime: 8, postfix: true) { rig in
            let (oauth, postfix, config) = (rig.oauth, rig.postfix!, rig.config)
            var outputs: [ChildProcess.Result] = []
            let send = { (token: String) throws -> ChildProcess.Result in
                let r = try Self.run("mo-sendmail", ["-oi", "--", "rcpt@mo.test"], input: Self.message(token), config: config)
                outputs.append(r)
                return r
            }
            let first = try send("oauth-send-1")
            #expect(first.status == 0, "\(first.stderrString)")
            #expect(postfix.waitDelivered("oauth-send-1", count: 1).count == 1)
            #expect(try LoginTests.refreshes(oauth) == 0)

            usleep(6_500_000)  // past 3/4 of the 8 s lifetime
            let second = try send("oauth-send-2")
            #expect(second.status == 0, "\(second.stderrString)")
            #expect(postfix.waitDelivered("oauth-send-2", count: 1).count == 1)
            #expect(try LoginTests.refreshes(oauth) == 1)

            usleep(8_500_000)  // past the new token's expiry: an outage now leaves no live token to use
            try Self.outage(oauth, true)
            let queued = try send("oauth-send-3")
            #expect(queued.status == 0 && queued.stderrString.contains("queued:"), "\(queued.stderrString)")
            let listed = try Self.run("mo-sendmail", ["--queue"], config: config)
            outputs.append(listed)
            #expect(listed.stdoutString.split(separator: "\n").count == 1, "\(listed.stdoutString)")
            let during = try Self.run("mo-sync", ["work"], config: config)
            outputs.append(during)
            #expect(during.status == 75, "\(during.stderrString)")
            let still = try Self.run("mo-sendmail", ["--queue"], config: config)
            outputs.append(still)
            // Still queued, with no try counted and no backoff.
            #expect(still.stdoutString.split(separator: "\n").count == 1, "\(still.stdoutString)")
            #expect(still.stdoutString.contains("(queued ") && still.stdoutString.contains(" ago; 0 tries; next try at the next flush;"))
            #expect((try Self.stats(oauth))["dropped"]?.intValue ?? 0 >= 2)

            try Self.outage(oauth, false)
            let after = try Self.run("mo-sync", ["--debug", "work"], config: config)  // its trace holds no token either
            outputs.append(after)
            #expect(after.status == 0, "\(after.stderrString)")
            #expect(postfix.waitDelivered("oauth-send-3", count: 1, settle: 1).count == 1)
            #expect(try Self.run("mo-sendmail", ["--queue"], config: config).stdoutString.isEmpty)
            #expect(try LoginTests.refreshes(oauth) == 2)

            // A revoked grant: the one line and exit 77, nothing queued.
            _ = try HTTPClient.send("POST", WebAddress(oauth.issuer + "/revoke?user=me@example.com")!, body: [], maxBody: 4096)
            let revoked = try send("oauth-send-4")
            #expect(revoked.status == 77)
            #expect(
                revoked.stderrString == "mo-sendmail: work: sign-in expired or was revoked; run mo-sync login work\n",
                "\(revoked.stderrString)")
            #expect(try Self.run("mo-sendmail", ["--queue"], config: config).stdoutString.isEmpty)
            for r in outputs { #expect(LoginTests.noTokens(r.stdoutString + r.stderrString)) }
        }
    }

    /// A process killed at each step of a refresh, then the next run: killed before the request, the next
    /// run refreshes; after the save, it uses the saved token; after the reply but before the save, the
    /// rotated refresh token died with the process, so the next run says plainly to sign in again (exit 77),
    /// and a new login mends it.
    @Test func killedInTheMiddleOfARefresh() throws {
        try LoginTests.signedIn(lifetime: 4) { rig in
            let sync = { (crashAt: String) in try Self.run("mo-sync", ["--quiet", "work"], config: rig.config, crashAt: crashAt) }
            let steps: [(step: String, requestsByCrash: Int64, requestsByNext: Int64, next: Int32)] = [
                ("oauth2: refreshing", 0, 1, 0), ("oauth2: tokens saved", 1, 0, 0), ("oauth2: token reply received", 1, 1, 77)
            ]
            var requests: Int64 = 0
            for s in steps {
                usleep(4_500_000)  // past the expiry (4 s): a refresh is due whatever the second it fell in
                let crashed = try sync(s.step)
                #expect(crashed.status == 137, "\(s.step): \(crashed.status) \(crashed.stderrString)")
                requests += s.requestsByCrash
                #expect(try LoginTests.refreshes(rig.oauth) == requests, "\(s.step)")
                let next = try sync("")
                requests += s.requestsByNext
                #expect(next.status == s.next, "after \(s.step): \(next.stderrString)")
                #expect(try LoginTests.refreshes(rig.oauth) == requests, "after \(s.step)")
                #expect(LoginTests.noTokens(next.stdoutString + next.stderrString))
                if s.next == 77 {
                    #expect(next.stderrString == "mo-sync: work: sign-in expired or was revoked; run mo-sync login work\n")
                }
            }
            try #require(try LoginTests.signIn(rig.dir, config: rig.config, server: rig.oauth) == 0)
            let mended = try sync("")
            #expect(mended.status == 0, "\(mended.stderrString)")
        }
    }

    /// Two programs that need a refresh at once (a sync and a send, after the renewal time) make one token
    /// request: the second waits for the lock and reads the token the first one got.
    @Test func twoProgramsAtOnceMakeOneRefresh() throws {
        try LoginTests.signedIn(lifetime: 8, postfix: true) { rig in
            let (dir, oauth, postfix, config) = (rig.dir, rig.oauth, rig.postfix!, rig.config)
            try writePrivateFile(dir + "/two.eml", String(decoding: Self.message("oauth-two"), as: UTF8.self))
            usleep(6_500_000)  // past the renewal time (6 s); the new token lives past both runs
            let shell = { (line: String, argv: [String]) in
                try BackgroundProcess(["/bin/sh", "-c", line] + argv, environment: ["MO_CONFIG": config])
            }
            let sync = try shell("exec \"$0\" work >\(dir)/sync.log 2>&1", [TestPaths.binDirectory + "/mo-sync"])
            let send = try shell(
                "exec \"$0\" -oi -- rcpt@mo.test <\(dir)/two.eml >\(dir)/send.log 2>&1", [TestPaths.binDirectory + "/mo-sendmail"])
            let logs = { (name: String) in String(decoding: (try? readWholeFile(dir + "/" + name).get()) ?? [], as: UTF8.self) }
            #expect(sync.wait() == 0, "\(logs("sync.log"))")
            #expect(send.wait() == 0, "\(logs("send.log"))")
            #expect(postfix.waitDelivered("oauth-two", count: 1).count == 1)
            #expect(try LoginTests.refreshes(oauth) == 1)
            #expect(LoginTests.noTokens(logs("sync.log") + logs("send.log")))
        }
    }
}
