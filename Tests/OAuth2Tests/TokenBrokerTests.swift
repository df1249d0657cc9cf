#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import MoTestSupport
@testable import OAuth2
import Synchronization
import Testing

/// The broker against a scripted token endpoint and clock: when it asks, what it saves, and what it says.
@Suite struct TokenBrokerTests {
    /// A token endpoint that counts its requests and answers each with the next access token, rotating the
    /// refresh token; or with a fixed body.
    final class Endpoint: Sendable {
        let requests = Mutex<[[String: String]]>([])
        let reply: @Sendable (Int) -> (Int, String)
        init(
            reply: @escaping @Sendable (Int) -> (Int, String) = { n in
                (200, #"{"access_token":"A\#(n)","token_type":"Bearer","expires_in":3600,"refresh_token":"R\#(n)"}"#)
            }
        ) { self.reply = reply }

        func post(_ endpoint: String, _ fields: [(String, String)]) throws -> (status: Int, body: [UInt8]) {
            let n = requests.withLock { r in
                r.append(Dictionary(fields, uniquingKeysWith: { a, _ in a }))
                return r.count
            }
            usleep(100_000)  // a slow endpoint: a second process arrives while the first waits
            let (status, body) = reply(n)
            return (status, Array(body.utf8))
        }
        var count: Int { requests.withLock { $0.count } }
    }

    static func broker(_ dir: String, _ endpoint: Endpoint, now: Int64 = 10_000) -> TokenBroker {
        TokenBroker(directory: dir, account: "work", post: endpoint.post, now: { now })
    }

    /// A broker over a new directory whose token file holds refresh token R0 (and A0 until `renew`).
    static func saved(
        _ dir: TemporaryDirectory, _ endpoint: Endpoint, access: String? = "A0", renew: Int64 = 20_000
    ) throws -> TokenBroker {
        let b = broker(dir.path, endpoint)
        try b.save(
            TokenFile(
                tokenEndpoint: "https://t.example/token", clientID: "cid", refreshToken: "R0", accessToken: access,
                expires: access == nil ? nil : 20_000, renew: access == nil ? nil : renew))
        return b
    }

    @Test func notSignedIn() throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        #expect(throws: GenericError(.authentication, "not signed in; run mo-sync login work")) {
            try Self.broker(dir.path, Endpoint()).accessToken()
        }
    }

    @Test func aLiveTokenCostsNoRequestAnExpiredOneExactlyOne() throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        let endpoint = Endpoint()
        let b = try Self.saved(dir, endpoint, renew: 19_700)
        #expect(try b.accessToken() == "A0" && endpoint.count == 0)
        // Five minutes before expiry it is refreshed, once; the rotated refresh token is on disk.
        let later = Self.broker(dir.path, endpoint, now: 19_800)
        #expect(try later.accessToken() == "A1")
        #expect(try later.accessToken() == "A1")
        #expect(endpoint.count == 1)
        #expect(endpoint.requests.withLock { $0[0] } == ["grant_type": "refresh_token", "refresh_token": "R0", "client_id": "cid"])
        let saved = try later.load()
        #expect(saved.refreshToken == "R1" && saved.accessToken == "A1" && saved.expires == 19_800 + 3600)
        var st = stat()
        #expect(stat(later.tokenPath, &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    /// A server refused the token: refreshed before expiry, unless another process has already replaced it.
    @Test func aRefusedTokenIsRefreshedOnce() throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        let endpoint = Endpoint()
        let b = try Self.saved(dir, endpoint)
        #expect(try b.accessToken(refused: "A0") == "A1" && endpoint.count == 1)
        #expect(try b.accessToken(refused: "A0") == "A1" && endpoint.count == 1)
    }

    /// Two processes (here threads with brokers of their own) needing a refresh at once make one request.
    @Test func twoAtOnceMakeOneRequest() throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        let endpoint = Endpoint()
        try Self.broker(dir.path, endpoint).save(
            TokenFile(tokenEndpoint: "https://t.example/token", clientID: "cid", refreshToken: "R0", accessToken: "A0", expires: 1))
        let path = dir.path
        let got = Mutex<[String]>([])
        let threads = (0..<2).map { _ in
            startThread {
                if let t = try? Self.broker(path, endpoint).accessToken() { got.withLock { $0.append(t) } }
            }
        }
        for t in threads { t.join() }
        #expect(got.withLock { $0 } == ["A1", "A1"])
        #expect(endpoint.count == 1)
    }

    /// An unreachable token endpoint does not stop a token that still lives: it is used until it expires,
    /// after one request a call; then the outage is the error (temporary). A token a server refused is
    /// never offered again.
    @Test func anOutageUsesTheLiveTokenUntilItExpires() throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        _ = try Self.saved(dir, Endpoint(), renew: 19_000)  // A0 expires at 20_000
        let asked = Mutex(0)
        let path = dir.path
        let down = { (now: Int64) in
            TokenBroker(
                directory: path, account: "work",
                post: { _, _ in
                    asked.withLock { $0 += 1 }
                    throw OutageError("https://t.example/token: cannot connect")
                }, now: { now })
        }
        #expect(try down(19_500).accessToken() == "A0")
        #expect(asked.withLock { $0 } == 1)
        // For a minute this process's other logins do not wait on the dead endpoint again.
        #expect(try down(19_530).accessToken() == "A0")
        #expect(asked.withLock { $0 } == 1)
        #expect(throws: OutageError("https://t.example/token: cannot connect")) { try down(19_500).accessToken(refused: "A0") }
        #expect(throws: OutageError("https://t.example/token: cannot connect")) { try down(20_000).accessToken() }
        #expect(asked.withLock { $0 } == 3)
    }

    /// A 5xx from the token endpoint is the provider's outage, not the user's: temporary, no try spent.
    @Test func aServerErrorIsAnOutage() throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        let b = try Self.saved(dir, Endpoint { _ in (503, "<html>busy</html>") }, access: nil)
        #expect(throws: OutageError("https://t.example/token: HTTP 503")) { try b.accessToken() }
    }

    @Test func aLapsedGrantSaysToSignInAgain() throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        let endpoint = Endpoint { _ in (400, #"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#) }
        let b = try Self.saved(dir, endpoint, access: nil)
        #expect(throws: SignInNeededError(account: "work")) {
            try b.accessToken()
        }
        #expect(endpoint.count == 1)
        #expect(try b.load().refreshToken == "R0")
    }

    @Test func aProvidersOtherRefusalIsShownEscaped() throws {
        let dir = try TemporaryDirectory("mo-oauth2")
        defer { dir.remove() }
        let endpoint = Endpoint { _ in
            (400, #"{"error":"invalid_client","error_description":"AADSTS7000218: secret\u001b[2J required"}"#)
        }
        let b = try Self.saved(dir, endpoint, access: nil)
        #expect(
            throws: GenericError(
                .config,
                "https://t.example/token refused the client (invalid_client: AADSTS7000218: secret\\u{1B}[2J required); "
                    + "check oauth2-client-id and its secret (docs/oauth2.md)")
        ) { try b.accessToken() }
    }
}
