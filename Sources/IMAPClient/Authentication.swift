import IMAPCodec
import MoCore

extension IMAPConnection {
    /// Logs in with the configured method. The secret is fetched once, used, and not kept. An OAuth2 token
    /// the server refuses is renewed once (`IMAPSettings.renewSecret`: the broker refreshes it unless another
    /// process already did) and tried again; a second refusal ends the login.
    func authenticate() throws(IMAPError) {
        if capabilities.isEmpty { try refreshCapabilities() }
        let method = try chooseMethod()
        var secret: String
        do { secret = try settings.secret() } catch { throw secretFailure(error) }
        let renewable = (method == .xoauth2 || method == .oauthbearer) && settings.renewSecret != nil
        if try authenticate(method, secret: secret, last: !renewable) { return }
        do { secret = try settings.renewSecret!(secret) } catch { throw secretFailure(error) }
        _ = try authenticate(method, secret: secret, last: true)
    }

    /// How a failure to get the password or token ends the login: a lapsed OAuth2 grant is its own line,
    /// an unreachable token endpoint stays temporary, anything else fails the authentication.
    private func secretFailure(_ error: any Error) -> IMAPError {
        switch error {
        case let e as SignInNeededError: IMAPError(server: server, .signIn(e.description))
        case let e as OutageError: IMAPError(server: server, .outage("cannot get a new OAuth2 token: \(e)"))
        case let e as any MoError where e.kind == .temporary || e.kind == .busy:
            IMAPError(server: server, .outage("cannot get the password or token: \(e)"))
        case let e as any MoError: IMAPError(server: server, .authentication(e.description))
        default: IMAPError(server: server, .authentication("cannot get the password: \(error)"))
        }
    }

    /// One login exchange; false when the server refused and `last` is false (the caller may try again).
    private func authenticate(_ method: AuthMethod, secret: String, last: Bool) throws(IMAPError) -> Bool {
        let command: Command
        switch method {
        case .login:
            command = .login(username: settings.user, password: secret)
        case .plain:
            command = .authenticate(mechanism: "PLAIN", initialResponse: SASL.plain(user: settings.user, password: secret))
        case .xoauth2:
            command = .authenticate(mechanism: "XOAUTH2", initialResponse: SASL.xoauth2(user: settings.user, token: secret))
        case .oauthbearer:
            command = .authenticate(
                mechanism: "OAUTHBEARER",
                initialResponse: SASL.oauthBearer(
                    user: settings.user, token: secret,
                    host: settings.host, port: settings.port))
        case .auto, .oauth2:
            preconditionFailure("chooseMethod resolves auto and oauth2")
        }
        do {
            let tag = try send(command, untagged: nil, fetch: nil, body: nil)
            // A failing OAuth exchange gets a `+ <base64 JSON error>` challenge, answered so that the server
            // sends the tagged NO: OAUTHBEARER with a single ^A (RFC 7628 §3.2.3), XOAUTH2 with an empty line.
            let reply = method == .oauthbearer ? Base64.encode(SASL.oauthBearerErrorAcknowledgement) : ""
            while true {
                let event = try nextEvent()
                switch event {
                case .continuation:
                    trace?.sentRaw(reply)
                    try write(Array(reply.utf8) + [UInt8(ascii: "\r"), UInt8(ascii: "\n")])
                case .tagged(let t) where t.tag == tag:
                    if t.status != .ok {
                        if !last { return false }
                        throw IMAPError(
                            server: server,
                            .authentication(
                                "\(settings.user) was refused (\(method.rawValue.uppercased())): \(t.text.text)"))
                    }
                    if case .capability(let caps)? = t.text.code { capabilities = Set(caps) } else { try refreshCapabilities() }
                    return true
                default:
                    try dispatch(event, untagged: nil, fetch: nil)
                }
            }
        } catch let e as IMAPError {
            throw e
        } catch {
            throw IMAPError(server: server, .unexpected("\(error)"))
        }
    }

    private func chooseMethod() throws(IMAPError) -> AuthMethod {
        let offered = { (m: String) in self.capabilities.contains(.auth(m)) }
        switch settings.authentication {
        case .auto:
            if offered("PLAIN") { return .plain }
            if !capabilities.contains(.loginDisabled) { return .login }
            throw IMAPError(server: server, .unsupported("no usable login method (AUTH=PLAIN not offered and LOGIN is disabled)"))
        case .login:
            if capabilities.contains(.loginDisabled) {
                throw IMAPError(server: server, .unsupported("the server disables LOGIN; set auth = \"plain\" or \"auto\""))
            }
            return .login
        case .oauth2:
            if offered("OAUTHBEARER") { return .oauthbearer }
            if offered("XOAUTH2") { return .xoauth2 }
            throw IMAPError(server: server, .unsupported("the server offers neither AUTH=OAUTHBEARER nor AUTH=XOAUTH2"))
        case .plain, .xoauth2, .oauthbearer:
            let name = settings.authentication.rawValue.uppercased()
            guard offered(name) else {
                throw IMAPError(server: server, .unsupported("the server does not offer AUTH=\(name)"))
            }
            return settings.authentication
        }
    }
}
