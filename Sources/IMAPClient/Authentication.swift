import IMAPCodec
import MoCore

extension IMAPConnection {
    /// Logs in with the configured method. The secret is fetched once, used, and not kept.
    func authenticate() throws(IMAPError) {
        if capabilities.isEmpty { try refreshCapabilities() }
        let method = try chooseMethod()
        let secret: String
        do { secret = try settings.secret() } catch let e as MoError {
            throw IMAPError(server: server, .authentication(e.description))
        } catch {
            throw IMAPError(server: server, .authentication("cannot get the password: \(error)"))
        }
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
        case .auto:
            preconditionFailure("chooseMethod resolves auto")
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
                        throw IMAPError(
                            server: server,
                            .authentication(
                                "\(settings.user) was refused (\(method.rawValue.uppercased())): \(t.text.text)"))
                    }
                    if case .capability(let caps)? = t.text.code { capabilities = Set(caps) } else { try refreshCapabilities() }
                    return
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
        case .plain, .xoauth2, .oauthbearer:
            let name = settings.authentication.rawValue.uppercased()
            guard offered(name) else {
                throw IMAPError(server: server, .unsupported("the server does not offer AUTH=\(name)"))
            }
            return settings.authentication
        }
    }
}
