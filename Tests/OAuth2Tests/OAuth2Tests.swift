import MoCore
@testable import OAuth2
import Testing

@Suite struct PKCETests {
    /// RFC 7636 Appendix B.
    @Test func challengeOfTheRFCsExample() {
        let p = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", state: "s")
        #expect(p.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func freshValuesAreLongAndDistinct() {
        let a = PKCE(), b = PKCE()
        #expect(a.verifier.count == 43 && a.state.count == 43)
        #expect(a.verifier != b.verifier && a.state != b.state && a.verifier != a.state)
        #expect(a.verifier.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }
}

@Suite struct ProviderTests {
    @Test func googleAuthorizationURL() {
        let p = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", state: "xyz")
        let url = OAuth2Provider.google.authorizationURL(
            clientID: "id.apps", redirectURI: "http://127.0.0.1:4711/", pkce: p, loginHint: "me+x@gmail.com")
        #expect(
            url == "https://accounts.google.com/o/oauth2/v2/auth?response_type=code&client_id=id.apps"
                + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A4711%2F&scope=https%3A%2F%2Fmail.google.com%2F&state=xyz"
                + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
                + "&login_hint=me%2Bx@gmail.com&access_type=offline&prompt=consent")
        #expect(OAuth2Provider.google.deviceEndpoint == nil)
    }

    @Test func microsoftTenants() {
        #expect(
            OAuth2Provider.builtIn("microsoft", tenant: nil)?.tokenEndpoint == "https://login.microsoftonline.com/common/oauth2/v2.0/token")
        let org = OAuth2Provider.microsoft(tenant: "contoso.onmicrosoft.com")
        #expect(org.deviceEndpoint == "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/devicecode")
        #expect(org.scopes.contains("offline_access"))
        #expect(OAuth2Provider.builtIn("yahoo", tenant: nil) == nil)
    }

    @Test func discovery() throws {
        let doc = try JSONReader.parse(
            Array(
                #"{"issuer":"https://id.example/","authorization_endpoint":"https://id.example/auth","token_endpoint":"https://id.example/token","device_authorization_endpoint":"https://id.example/device"}"#
                    .utf8))
        let p = try OAuth2Provider.discovered(issuer: "https://id.example", document: doc, scopes: ["mail"])
        #expect(p.tokenEndpoint == "https://id.example/token" && p.deviceEndpoint == "https://id.example/device")
        #expect(throws: GenericError.self) {
            try OAuth2Provider.discovered(issuer: "https://other.example", document: doc, scopes: [])
        }
        let plain = try JSONReader.parse(
            Array(
                #"{"issuer":"https://id.example","authorization_endpoint":"http://id.example/a","token_endpoint":"https://id.example/t"}"#
                    .utf8))
        #expect(throws: GenericError.self) { try OAuth2Provider.discovered(issuer: "https://id.example", document: plain, scopes: []) }
        #expect(OAuth2Provider.isAllowedEndpoint("http://127.0.0.1:9/token") && OAuth2Provider.isAllowedEndpoint("http://[::1]/t"))
        #expect(!OAuth2Provider.isAllowedEndpoint("http://127.attacker.example/t"))
    }
}

@Suite struct TokenReplyTests {
    static func parse(_ status: Int, _ body: String) throws(GenericError) -> TokenReply {
        try TokenReply.parse(status: status, body: Array(body.utf8), endpoint: "https://t.example/token")
    }

    @Test func grantsAndRefusals() throws {
        #expect(
            try Self.parse(200, #"{"access_token":"A","token_type":"Bearer","expires_in":3599,"refresh_token":"R","scope":"x"}"#)
                == .granted(TokenGrant(accessToken: "A", refreshToken: "R", expiresIn: 3599)))
        #expect(
            try Self.parse(200, #"{"access_token":"A","token_type":"bearer"}"#)
                == .granted(TokenGrant(accessToken: "A", refreshToken: nil, expiresIn: nil)))
        guard
            case .refused(let r) = try Self.parse(
                400, #"{"error":"invalid_grant","error_description":"Token has been expired or revoked."}"#)
        else {
            Issue.record("not a refusal")
            return
        }
        #expect(r.meaning == .signInNeeded && r.description == "Token has been expired or revoked.")
        for (code, meaning) in [
            ("authorization_pending", TokenReply.Refusal.Meaning.pending), ("slow_down", .slowDown), ("access_denied", .stopped),
            ("expired_token", .stopped), ("invalid_client", .clientRejected), ("invalid_scope", .other)
        ] {
            #expect(TokenReply.Refusal(code: code, description: nil).meaning == meaning)
        }
    }

    @Test func brokenResponses() {
        #expect(throws: GenericError(.temporary, "https://t.example/token: HTTP 503")) { try Self.parse(503, "<html>") }
        #expect(throws: GenericError.self) { try Self.parse(200, #"{"token_type":"Bearer"}"#) }
        #expect(throws: GenericError.self) { try Self.parse(200, #"{"access_token":"A","token_type":"mac"}"#) }
        #expect(throws: GenericError.self) { try Self.parse(400, "not json") }
    }

    @Test func deviceAuthorization() throws {
        let google = try DeviceAuthorization.parse(
            status: 200,
            body: Array(
                #"{"device_code":"D","user_code":"ABC-DEF","verification_url":"https://www.google.com/device","expires_in":1800}"#.utf8),
            endpoint: "e")
        #expect(google.verificationURI == "https://www.google.com/device" && google.interval == 5)
        let ms = try DeviceAuthorization.parse(
            status: 200,
            body: Array(
                #"{"device_code":"D","user_code":"XYZ","verification_uri":"https://microsoft.com/devicelogin","expires_in":900,"interval":3}"#
                    .utf8),
            endpoint: "e")
        #expect(ms.interval == 3 && ms.userCode == "XYZ")
    }
}

@Suite struct TokenFileTests {
    @Test func roundTripAndRotation() throws {
        var f = TokenFile(tokenEndpoint: "https://t.example/token", clientID: "c id", refreshToken: "R1")
        #expect(try TokenFile.parse(f.rendered, file: "f") == f)
        #expect(f.usableAccessToken(now: 0) == nil)
        f = f.applying(TokenGrant(accessToken: "A%1", refreshToken: "R2", expiresIn: 3600), now: 1000)
        #expect(f.refreshToken == "R2" && f.expires == 4600 && f.renew == 4300)
        #expect(try TokenFile.parse(f.rendered, file: "f") == f)
        #expect(String(decoding: f.rendered, as: UTF8.self).contains("client-id c%20id\n"))
        // Used while it has five minutes left; refreshed ahead of expiry (a short-lived one at 3/4 of its life).
        #expect(f.applying(TokenGrant(accessToken: "S", refreshToken: nil, expiresIn: 20), now: 0).renew == 15)
        #expect(f.usableAccessToken(now: 4299) == "A%1")
        #expect(f.usableAccessToken(now: 4300) == nil)
        // A grant that does not rotate keeps the refresh token.
        #expect(f.applying(TokenGrant(accessToken: "B", refreshToken: nil, expiresIn: 60), now: 0).refreshToken == "R2")
    }

    @Test(arguments: [
        (
            "mo-oauth2-tokens 1\ntoken-endpoint e\nclient-id c\nrefresh r",
            "f:4: incomplete last line \"refresh r\" (the file was cut short)"
        ),
        ("mo-oauth2-tokens 2\n", "f:1: not a token file of this version (expected \"mo-oauth2-tokens 1\")"),
        ("mo-oauth2-tokens 1\ntoken-endpoint e\nclient-id c\n", "f: lacks token-endpoint, client-id or refresh"),
        ("mo-oauth2-tokens 1\nrefresh a\nrefresh b\n", "f:3: refresh given twice"),
        ("mo-oauth2-tokens 1\nsecret x\n", "f:2: unknown key \"secret\""),
        (
            "mo-oauth2-tokens 1\ntoken-endpoint e\nclient-id c\nrefresh r\naccess a\n",
            "f: access, expires and renew go together, the times numbers"
        ),
        ("", "f: empty")
    ])
    func strict(_ text: String, _ message: String) {
        #expect(throws: GenericError(.data, message)) { try TokenFile.parse(Array(text.utf8), file: "f") }
    }
}
