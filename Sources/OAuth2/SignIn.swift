#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import MoNet

/// Signing in, once per account (`mo-sync login`): the authorization code grant with PKCE over a loopback
/// redirect (RFC 8252), or the device authorization grant (RFC 8628) for a machine without a browser.
/// Either ends in a grant with a refresh token, which the caller saves as the account's `TokenFile`.
public struct SignIn {
    public let provider: OAuth2Provider
    public let clientID: String
    public let clientSecret: () throws -> String?
    /// The account's address, so the provider's page offers the right account.
    public let loginHint: String?
    public let post: (_ endpoint: String, _ fields: [(String, String)]) throws -> (status: Int, body: [UInt8])

    public init(
        provider: OAuth2Provider, clientID: String, clientSecret: @escaping () throws -> String? = { nil },
        loginHint: String? = nil,
        post: @escaping (_ endpoint: String, _ fields: [(String, String)]) throws -> (status: Int, body: [UInt8]) = TokenBroker.httpPost
    ) {
        self.provider = provider
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.loginHint = loginHint
        self.post = post
    }

    // MARK: - Authorization code with PKCE, loopback redirect

    /// Listens on 127.0.0.1 (a port the kernel picks), hands `show` the address to open in a browser, and
    /// waits at most `timeout` seconds for the browser to come back with the code; then exchanges it. A
    /// request whose `state` is not this sign-in's is answered 400 and ignored (another page cannot feed
    /// it a code); a provider's `error` ends the sign-in with its text.
    public func withBrowser(timeout: Double = 300, show: (String) -> Void) throws -> TokenGrant {
        let listener = try LoopbackListener()
        let redirectURI = "http://127.0.0.1:\(listener.port)/"
        let pkce = PKCE()
        show(provider.authorizationURL(clientID: clientID, redirectURI: redirectURI, pkce: pkce, loginHint: loginHint))
        let deadline = monotonicSeconds() + timeout
        while true {
            let left = deadline - monotonicSeconds()
            guard left > 0, let connection = try listener.accept(timeout: left) else {
                throw GenericError(.temporary, "sign-in: no answer from the browser within \(Int(timeout)) s; run the command again")
            }
            defer { connection.close() }
            guard let query = try? Self.readRedirect(connection) else {
                Self.answer(connection, 404, "Not the sign-in address.")
                continue
            }
            let fields = Dictionary(query, uniquingKeysWith: { first, _ in first })
            guard fields["state"] == pkce.state else {
                Self.answer(connection, 400, "This answer is not for the sign-in in progress; it was ignored.")
                continue
            }
            if let error = fields["error"] {
                Self.answer(connection, 200, "Sign-in refused. You can close this page.")
                let text = escapedForMessage(error + (fields["error_description"].map { ": " + $0 } ?? ""))
                throw GenericError(.authentication, "sign-in: \(provider.name) refused: \(text)")
            }
            guard let code = fields["code"], !code.isEmpty else {
                Self.answer(connection, 400, "No code in this answer.")
                continue
            }
            Self.answer(connection, 200, "Signed in to mo. You can close this page and return to the terminal.")
            var form = [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI), ("client_id", clientID),
                ("code_verifier", pkce.verifier)
            ]
            if let secret = try clientSecret() { form.append(("client_secret", secret)) }
            return try exchange(form)
        }
    }

    /// The query of a `GET /?…` request, read from `connection` (its head at most 8 KiB); nil for any
    /// other request.
    static func readRedirect(_ connection: Connection) throws -> [(String, String)]? {
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while head.firstRange(of: [13, 10, 13, 10]) == nil && head.firstRange(of: [10, 10]) == nil {
            let n = try buffer.withUnsafeMutableBytes { raw throws(NetError) in try connection.read(into: raw) }
            guard n > 0, head.count + n <= 8192 else { return nil }
            head += buffer[0..<n]
        }
        let line = head.prefix { $0 != 13 && $0 != 10 }
        let parts = line.split(separator: 0x20)
        guard parts.count == 3, parts[0].elementsEqual("GET".utf8) else { return nil }
        let target = String(decoding: parts[1], as: UTF8.self)
        guard target.hasPrefix("/?") else { return nil }
        return FormEncoding.decode(target.dropFirst(2))
    }

    static func answer(_ connection: Connection, _ status: Int, _ text: String) {
        let reason = status == 200 ? "OK" : status == 400 ? "Bad Request" : "Not Found"
        let body = Array("<!doctype html><meta charset=utf-8><title>mo</title><p>\(text)</p>\n".utf8)
        let head =
            "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n"
        try? connection.write(Array(head.utf8) + body)
    }

    // MARK: - Device authorization grant

    /// Asks for a device code, hands it to `show` (the user opens the address on any device and types the
    /// code), and polls the token endpoint at the interval the server asks, 5 s slower after each
    /// `slow_down`, until the user has signed in, refused, or the code expired.
    public func withDevice(show: (DeviceAuthorization) -> Void, sleep: (Double) -> Void = { usleepSeconds($0) }) throws -> TokenGrant {
        guard let endpoint = provider.deviceEndpoint else {
            throw GenericError(
                .unavailable,
                "sign-in: \(provider.name) offers no device sign-in for mail; sign in with a browser (over ssh: forward the port the command prints)"
            )
        }
        var form = [("client_id", clientID), ("scope", provider.scopes.joined(separator: " "))]
        if let secret = try clientSecret() { form.append(("client_secret", secret)) }
        let (status, body) = try post(endpoint, form)
        let device = try DeviceAuthorization.parse(status: status, body: body, endpoint: endpoint)
        show(device)
        var interval = Double(device.interval)
        let deadline = monotonicSeconds() + Double(device.expiresIn)
        var poll = [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", device.deviceCode),
            ("client_id", clientID)
        ]
        if let secret = try clientSecret() { poll.append(("client_secret", secret)) }
        while monotonicSeconds() + interval < deadline {
            sleep(interval)
            let (status, body) = try post(provider.tokenEndpoint, poll)
            switch try TokenReply.parse(status: status, body: body, endpoint: provider.tokenEndpoint) {
            case .granted(let grant): return try Self.lasting(grant, provider)
            case .refused(let r):
                switch r.meaning {
                case .pending: continue
                case .slowDown: interval += 5
                default: throw Self.refused(r, provider)
                }
            }
        }
        throw GenericError(.temporary, "sign-in: the code expired before it was entered; run the command again")
    }

    // MARK: - Both

    func exchange(_ form: [(String, String)]) throws -> TokenGrant {
        let (status, body) = try post(provider.tokenEndpoint, form)
        switch try TokenReply.parse(status: status, body: body, endpoint: provider.tokenEndpoint) {
        case .granted(let grant): return try Self.lasting(grant, provider)
        case .refused(let r): throw Self.refused(r, provider)
        }
    }

    /// A grant that can last: it must carry a refresh token.
    static func lasting(_ grant: TokenGrant, _ provider: OAuth2Provider) throws -> TokenGrant {
        guard grant.refreshToken != nil else {
            throw GenericError(
                .protocolViolation, "sign-in: \(provider.name) gave no refresh token (check the client's scopes: docs/oauth2.md)")
        }
        return grant
    }

    static func refused(_ r: TokenReply.Refusal, _ provider: OAuth2Provider) -> GenericError {
        let text = escapedForMessage(r.code + (r.description.map { ": " + $0 } ?? ""))
        switch r.meaning {
        case .clientRejected:
            return GenericError(.config, "sign-in: \(provider.name) refused the client (\(text)); check oauth2-client-id and its secret")
        case .stopped: return GenericError(.authentication, "sign-in: not signed in (\(text))")
        default: return GenericError(.authentication, "sign-in: \(provider.name) refused (\(text))")
        }
    }
}

/// Sleeps `seconds` (the device flow's poll interval).
public func usleepSeconds(_ seconds: Double) {
    var left = seconds
    while left > 0 {
        let step = min(left, 1.0)
        usleep(UInt32(step * 1_000_000))
        left -= step
    }
}
