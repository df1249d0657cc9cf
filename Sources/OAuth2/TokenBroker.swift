#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import Synchronization
import MoHTTP

/// An account's access token on demand: the saved one while it has time to live, else one refresh at the
/// token endpoint. What every program (mo-sync, --watch, mo-sync-check, mo-sendmail) asks for a login.
///
/// Invariants:
/// - **One refresh at a time.** A refresh happens under `oauth2-tokens.lock` (a `FileLock`), and the file
///   is read again under it: a process that waited finds the token the other one got and makes no request.
///   So a timer run, `--watch` and `mo-sendmail` never race to spend a rotating refresh token.
/// - **Saved before used.** A grant (and a rotated refresh token) is written to the token file (new file,
///   fsync, rename) before its access token is returned; a process killed after the request but before the
///   save loses at most that grant, and the old refresh token is still on disk (providers that rotate
///   accept the previous one for a while, or the next run says to sign in again).
/// - **At most one refresh a call**, and a refused refresh is final for the run: no retry storm.
/// - **An outage is not a failure while the token lives.** When the token endpoint cannot be reached, a
///   token past its renewal time but not its expiry is still returned; only an expired one fails (with
///   `OutageError`: temporary, and a queued message spends no try on it).
/// - **Tokens never leave**: not in messages, not in argv or a child's environment.
public struct TokenBroker: Sendable {
    /// The account's state directory (`<state-dir>/<account>`), where the token file and its lock live.
    public let directory: String
    public let account: String
    /// The client's secret, for providers that want one (run late, only for a request).
    public let clientSecret: @Sendable () throws -> String?
    /// The token endpoint's exchange: form fields in, (status, body) out. `HTTPClient` by default.
    public let post: @Sendable (_ endpoint: String, _ fields: [(String, String)]) throws -> (status: Int, body: [UInt8])
    public let now: @Sendable () -> Int64

    public init(
        directory: String, account: String, clientSecret: @escaping @Sendable () throws -> String? = { nil },
        post: @escaping @Sendable (_ endpoint: String, _ fields: [(String, String)]) throws -> (status: Int, body: [UInt8]) =
            TokenBroker.httpPost,
        now: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }
    ) {
        self.directory = directory
        self.account = account
        self.clientSecret = clientSecret
        self.post = post
        self.now = now
    }

    public var tokenPath: String { directory + "/" + TokenFile.fileName }
    var lockPath: String { tokenPath + ".lock" }

    /// What every program says when the grant is gone (exit 77), after the account's name as it prefixes
    /// every error: `ACCOUNT: sign-in expired or was revoked; run mo-sync login ACCOUNT`.
    public var signInNeeded: SignInNeededError { SignInNeededError(account: account) }

    /// An access token with time to live. `refused`: the token a server just refused (its SASL error), so
    /// a refresh is made even before expiry, unless another process already replaced it.
    public func accessToken(refused: String? = nil) throws -> String {
        if refused == nil {
            let file = try load()
            if let token = file.usableAccessToken(now: now()) { return token }
            // The endpoint was out a moment ago: each login of this process need not wait on it again.
            if let since = Self.outages.withLock({ $0[tokenPath] }), now() - since < Self.outageMemory,
                let token = file.liveAccessToken(now: now())
            {
                return token
            }
        }
        let lock: FileLock?
        do {
            lock = try FileLock(path: lockPath, wait: 60)
        } catch {
            throw GenericError(.localIO, "\(quotedForMessage(lockPath)): \(error)")
        }
        guard let lock else {
            throw GenericError(.busy, "another program has been refreshing the OAuth2 token of \(account) for a minute")
        }
        defer { withExtendedLifetime(lock) {} }
        // Read again under the lock: another process may have refreshed meanwhile.
        let file = try load()
        if let token = file.usableAccessToken(now: now()), token != refused { return token }
        do {
            return try refresh(file)
        } catch let outage as OutageError {
            // The endpoint is out, but the token (unless a server just refused it) lives on: use it until
            // it expires rather than fail now; this process asks again after `outageMemory`.
            Self.outages.withLock { $0[tokenPath] = now() }
            if refused == nil, let token = file.liveAccessToken(now: now()) { return token }
            throw outage
        }
    }

    /// When this process last found each token endpoint out (by token file), and for how long that spares
    /// its other logins the request: a connection that must time out costs each of them 30 s otherwise.
    static let outages = Mutex<[String: Int64]>([:])
    static let outageMemory: Int64 = 60

    /// One refresh request; the grant saved before its token is returned.
    func refresh(_ file: TokenFile) throws -> String {
        var fields = [("grant_type", "refresh_token"), ("refresh_token", file.refreshToken), ("client_id", file.clientID)]
        if let secret = try clientSecret() { fields.append(("client_secret", secret)) }
        let start = now()
        CrashPoint.step("oauth2: refreshing")
        let (status, body) = try post(file.tokenEndpoint, fields)
        CrashPoint.step("oauth2: token reply received")
        let reply: TokenReply
        do {
            reply = try TokenReply.parse(status: status, body: body, endpoint: file.tokenEndpoint)
        } catch {
            if error.kind == .temporary { throw OutageError(error.message) }  // a 5xx: the provider's incident
            throw error
        }
        switch reply {
        case .granted(let grant):
            let next = file.applying(grant, now: start)
            try save(next)
            return grant.accessToken
        case .refused(let refusal):
            if refusal.meaning == .signInNeeded { throw signInNeeded }
            throw Self.refusalError(refusal, endpoint: file.tokenEndpoint, account: account)
        }
    }

    /// A provider's refusal other than a lapsed grant, its text escaped, with the hint that fits.
    static func refusalError(_ r: TokenReply.Refusal, endpoint: String, account: String) -> GenericError {
        let text = escapedForMessage(r.code + (r.description.map { ": " + $0 } ?? ""))
        switch r.meaning {
        case .clientRejected:
            return GenericError(
                .config, "\(endpoint) refused the client (\(text)); check oauth2-client-id and its secret (docs/oauth2.md)")
        default:
            return GenericError(.authentication, "\(endpoint) refused the token request (\(text))")
        }
    }

    /// The token file; none is "not signed in yet".
    public func load() throws -> TokenFile {
        switch readWholeFile(tokenPath) {
        case .success(let bytes): return try TokenFile.parse(bytes, file: tokenPath)
        case .failure(let e) where e.code == ENOENT:
            throw GenericError(.authentication, "not signed in; run mo-sync login \(account)")
        case .failure(let e): throw GenericError(.localIO, "cannot read \(quotedForMessage(tokenPath)): \(e)")
        }
    }

    /// Writes the token file whole: new file (mode 0600), fsync, rename.
    public func save(_ file: TokenFile) throws {
        if case .failure(let e) = replaceFileAtomically(tokenPath, file.rendered, mode: 0o600) {
            throw GenericError(.localIO, "cannot write \(quotedForMessage(tokenPath)): \(e)")
        }
        CrashPoint.step("oauth2: tokens saved")
    }

    /// A form POST over the one HTTP client; a token endpoint that cannot be reached is a temporary failure.
    public static func httpPost(_ endpoint: String, _ fields: [(String, String)]) throws -> (status: Int, body: [UInt8]) {
        guard let url = WebAddress(endpoint), url.secure || url.isLoopback else {
            throw GenericError(.config, "\(quotedForMessage(endpoint)): not an https address")
        }
        do {
            return try HTTPClient.send(
                "POST", url,
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                body: Array(FormEncoding.encode(fields).utf8), maxBody: 64 * 1024, timeout: 30)
        } catch {
            // Refused at the TLS level or misconfigured: the user's to mend. Anything else (unreachable,
            // cut, timed out) is an outage: the endpoint may work later, and a queued message waits for it.
            if error.kind == .security || error.kind == .config { throw error }
            throw OutageError(error.message)
        }
    }
}
