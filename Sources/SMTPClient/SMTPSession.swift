import MoCore
import MoNet

/// One SMTP conversation with a submission server over a blocking `MoNet.Connection`.
///
/// Use: `open()` (connect, greeting, EHLO, TLS, AUTH), then `send(envelope:message:)` once or more, then
/// `quit()`. Blocking and not thread-safe: run it on one thread, outside the cooperative pool.
///
/// Invariants:
/// - With `.startTLS`, nothing but EHLO and STARTTLS is sent before TLS is up; a server that does not offer
///   STARTTLS, or whose upgrade fails, is refused. With `.none`, only loopback hosts are allowed.
/// - Capabilities always come from the latest EHLO (the one after TLS when there is one).
/// - DATA is sent only when every recipient was accepted; otherwise the transaction is reset.
public final class SMTPSession {
    public let settings: SMTPSettings
    /// What the server announced in its last EHLO reply (empty after a HELO fallback).
    public private(set) var capabilities = SMTPCapabilities()

    private var connection: Connection?
    private var parser = SMTPReplyParser()
    private var readBuffer = [UInt8](repeating: 0, count: 16 * 1024)
    /// Whether the server's greeting arrived: network failures before it mean the server was unreachable.
    private var greeted = false
    /// Size of the pieces a message is encoded and written in.
    static let chunkSize = 256 * 1024

    public init(settings: SMTPSettings) {
        self.settings = settings
    }

    deinit { connection?.close() }

    /// The negotiated TLS version ("TLSv1.3"), nil without TLS or before `open`.
    public var tlsVersion: String? { connection?.tlsVersion }

    // MARK: - Opening

    /// Connects, reads the greeting, says EHLO, starts TLS as configured and authenticates.
    public func open() throws(SMTPError) {
        if settings.security == .none && !isLoopbackHost(settings.host) {
            throw failure(
                .invalidRequest,
                "refusing to send without TLS to a host that is not loopback; "
                    + "use tls = starttls or implicit", kind: .config)
        }
        let timeout = settings.timeouts.connect
        greeted = false
        do throws(NetError) {
            let tls = TLSOptions(caFile: settings.caFile)
            connection =
                settings.security == .implicit
                ? try Connection.connectTLS(host: settings.host, port: settings.port, options: tls, timeout: timeout)
                : try Connection.connect(host: settings.host, port: settings.port, timeout: timeout)
        } catch {
            throw failure(net: error, context: nil)
        }
        settings.trace?(.connected("\(settings.host):\(settings.port)"))
        if let version = connection?.tlsVersion { settings.trace?(.tlsStarted(version)) }

        let greeting = try readReply(timeout: settings.timeouts.command, context: "waiting for the greeting")
        greeted = true
        guard greeting.code == 220 else {
            throw failure(.rejected, "the server refused the session: \(greeting)", reply: greeting)
        }
        try hello()

        if settings.security == .starttls {
            guard capabilities.startTLS else {
                throw failure(.tls, "the server does not offer STARTTLS; refusing to send without TLS", kind: .security)
            }
            let reply = try command(.startTLS)
            guard reply.code == 220 else {
                throw failure(
                    .tls, "STARTTLS refused: \(reply); refusing to send without TLS", reply: reply,
                    kind: reply.isTransientFailure ? .temporary : .security)
            }
            // Bytes already queued after the 220 were sent before TLS and could be an injected reply.
            guard !parser.hasBufferedInput else {
                throw failure(.protocolViolation, "the server sent data after its STARTTLS reply")
            }
            do throws(NetError) {
                connection?.timeout = settings.timeouts.connect
                try connection?.startTLS(options: TLSOptions(caFile: settings.caFile))
            } catch {
                throw failure(net: error, context: nil)
            }
            settings.trace?(.tlsStarted(connection?.tlsVersion ?? "?"))
            // RFC 3207 §4.2: forget everything learnt before TLS.
            capabilities = SMTPCapabilities()
            try hello(requireEHLO: true)
        }

        if settings.user != nil { try authenticate() }
    }

    /// EHLO, falling back to HELO only when EHLO is refused and no extension is needed.
    private func hello(requireEHLO: Bool = false) throws(SMTPError) {
        let reply = try command(.ehlo(settings.heloName))
        if reply.code == 250 {
            capabilities = SMTPCapabilities(ehloReply: reply)
            return
        }
        let needsExtensions = requireEHLO || settings.security == .starttls || settings.user != nil
        guard reply.isPermanentFailure, !needsExtensions else {
            throw failure(.rejected, "EHLO refused: \(reply)", reply: reply)
        }
        let helo = try command(.helo(settings.heloName))
        guard helo.code == 250 else { throw failure(.rejected, "HELO refused: \(helo)", reply: helo) }
        capabilities = SMTPCapabilities()
    }

    // MARK: - Authentication

    private func authenticate() throws(SMTPError) {
        guard let user = settings.user else { return }
        let offered = capabilities.authMechanisms
        let mechanism: SASLMechanism
        switch settings.authMethod {
        case .auto:
            guard let pick = SASLMechanism.passwordPreference.first(where: { offered.contains($0.rawValue) }) else {
                throw failure(
                    .authenticationUnavailable,
                    offered.isEmpty
                        ? "the server does not offer AUTH; refusing to send without logging in"
                        : "the server offers no password mechanism this client speaks (it offers \(offered.joined(separator: " ")))")
            }
            mechanism = pick
        case .plain: mechanism = .plain
        case .login: mechanism = .login
        case .xoauth2: mechanism = .xoauth2
        case .oauthbearer: mechanism = .oauthBearer
        case .oauth2: mechanism = offered.contains(SASLMechanism.oauthBearer.rawValue) ? .oauthBearer : .xoauth2
        }
        guard offered.contains(mechanism.rawValue) else {
            throw failure(
                .authenticationUnavailable,
                "the server does not offer AUTH \(mechanism.rawValue)"
                    + (offered.isEmpty ? "" : " (it offers \(offered.joined(separator: " ")))"))
        }
        guard let secretSource = settings.secret else {
            throw failure(.credentials, "no password or token configured for \(user)", kind: .config)
        }
        let secret: String
        do {
            secret = try secretSource.get()
        } catch {
            throw oauth2Failure(error)
                ?? failure(.credentials, "cannot get the password for \(user): \(error)", kind: (error as? any MoError)?.kind ?? .config)
        }

        var reply = try authExchange(mechanism, user: user, secret: secret)
        // An OAuth2 token the server refused is renewed once (the broker refreshes it unless another process
        // already did) and tried again in the same session.
        if reply.code != 235, mechanism == .xoauth2 || mechanism == .oauthBearer, let renew = settings.renewSecret {
            let fresh: String
            do {
                fresh = try renew(secret)
            } catch let error as any MoError {
                throw oauth2Failure(error) ?? failure(.credentials, "\(error)", kind: error.kind)
            } catch {
                throw failure(.credentials, "cannot renew the token for \(user): \(error)", kind: .authentication)
            }
            reply = try authExchange(mechanism, user: user, secret: fresh)
        }
        guard reply.code == 235 else {
            throw failure(.authentication, "authentication as \(user) failed: \(reply)", reply: reply)
        }
    }

    /// One AUTH exchange; returns the server's last reply (235: logged in).
    private func authExchange(_ mechanism: SASLMechanism, user: String, secret: String) throws(SMTPError) -> SMTPReply {
        var first: SMTPCommand
        var responses: [String]
        let onChallenge: String  // what to send when the server challenges beyond our script
        switch mechanism {
        case .plain:
            first = .auth(mechanism: "PLAIN", initialResponse: Base64.encode(SASL.plain(user: user, password: secret)))
            responses = []; onChallenge = "*"
        case .login:
            first = .auth(mechanism: "LOGIN", initialResponse: nil)
            responses = SASL.login(user: user, password: secret).map { Base64.encode($0) }; onChallenge = "*"
        case .xoauth2:
            // On failure the server sends a 334 with an error document and waits for an empty line.
            first = .auth(mechanism: "XOAUTH2", initialResponse: Base64.encode(SASL.xoauth2(user: user, token: secret)))
            responses = []; onChallenge = ""
        case .oauthBearer:
            // RFC 7628 §3.2.3: the client answers the error challenge with a single ^A.
            first = .auth(mechanism: "OAUTHBEARER", initialResponse: Base64.encode(SASL.oauthBearer(user: user, token: secret)))
            responses = []; onChallenge = Base64.encode(SASL.oauthBearerErrorAcknowledgement)
        }
        var reply = try command(first)
        var rounds = 0
        while reply.code == 334 {
            rounds += 1
            guard rounds <= 4 else { throw failure(.protocolViolation, "AUTH \(mechanism.rawValue): too many challenges") }
            let next = responses.isEmpty ? onChallenge : responses.removeFirst()
            reply = try command(.authResponse(next))
        }
        return reply
    }

    // MARK: - Sending

    /// Sends one message. Returns only when the server accepted it; throws otherwise.
    ///
    /// `message` is the RFC 5322 message; line ends may be LF or CRLF. It is encoded and written in
    /// `chunkSize` pieces, never copied whole.
    ///
    /// `beforeFinalDot` runs once everything but the terminating `.` has been written: until then the
    /// server cannot accept the message, so a caller can journal "the next byte may commit it" there. If it
    /// throws, the connection is closed without the `.` (the server discards the transaction) and the
    /// error is rethrown as `.invalidRequest` with the thrown error's kind.
    public func send(
        envelope: SMTPEnvelope, message: [UInt8],
        beforeFinalDot: (() throws -> Void)? = nil
    ) throws(SMTPError) -> SMTPOutcome {
        guard connection != nil else { throw failure(.invalidRequest, "not connected", kind: .software) }
        if let problem = envelope.problem() { throw failure(.invalidRequest, problem, kind: .data) }
        let scan = MessageScan(message)
        let caps = capabilities

        if let max = caps.maxSize, scan.wireSize > max {
            throw failure(.messageTooLarge, "the message is \(scan.wireSize) bytes; the server accepts at most \(max)")
        }
        let needsUTF8 = envelope.needsSMTPUTF8
        if needsUTF8 && !caps.smtpUTF8 {
            let address = ([envelope.sender] + envelope.recipients).first { $0.utf8.contains { $0 >= 0x80 } } ?? ""
            throw failure(
                .extensionMissing,
                "address <\(address)> is not ASCII and the server does not offer SMTPUTF8")
        }
        let smtpUTF8 = caps.smtpUTF8 && (needsUTF8 || scan.headerHas8Bit)
        // RFC 6531 §3.4: SMTPUTF8 implies an 8-bit clean path, but BODY=8BITMIME still says what the body is.
        if scan.has8Bit && !caps.eightBitMIME && !smtpUTF8 {
            throw failure(
                .extensionMissing,
                "the message has 8-bit data and the server does not offer 8BITMIME; encode it as 7-bit MIME")
        }
        let dsn = caps.dsn ? envelope.dsn : nil
        let params = MailParameters(
            size: caps.sizeExtension ? scan.wireSize : nil,
            eightBitMIME: scan.has8Bit && caps.eightBitMIME,
            smtpUTF8: smtpUTF8, ret: dsn?.ret, envelopeID: dsn?.envelopeID)

        let mail = try command(.mailFrom(envelope.sender, params))
        guard mail.isSuccess else {
            resetQuietly()
            throw failure(.rejected, "sender <\(envelope.sender)> rejected: \(mail)", reply: mail)
        }
        var rejected: [SMTPError.RejectedRecipient] = []
        for recipient in envelope.recipients {
            let reply = try command(.rcptTo(recipient, notify: dsn?.notify))
            if !reply.isSuccess { rejected.append(.init(address: recipient, reply: reply)) }
        }
        if !rejected.isEmpty {
            resetQuietly()
            let detail =
                rejected.count == 1
                ? "recipient <\(rejected[0].address)> rejected: \(rejected[0].reply)"
                : "\(rejected.count) recipients rejected: "
                    + rejected.map { "<\($0.address)>: \($0.reply)" }.joined(separator: "; ")
            throw failure(.recipientsRejected, detail, reply: rejected[0].reply, rejected: rejected)
        }

        let data = try command(.data)
        guard data.code == 354 else {
            resetQuietly()
            throw failure(.rejected, "DATA refused: \(data)", reply: data)
        }
        try writeData(message, beforeFinalDot: beforeFinalDot)
        let final: SMTPReply
        do throws(SMTPError) {
            final = try readReply(timeout: settings.timeouts.dataFinal, context: "waiting for the reply to the message")
        } catch {
            throw error.markedAfterFinalDot()
        }
        guard final.isSuccess else {
            throw failure(.rejected, "message refused: \(final)", reply: final)
        }
        return .accepted(final)
    }

    /// Streams the dot-stuffed message, then calls `beforeFinalDot`, then writes the final `.` on its own.
    /// Errors raised while the terminator is in flight carry `afterFinalDot`.
    private func writeData(_ message: [UInt8], beforeFinalDot: (() throws -> Void)?) throws(SMTPError) {
        guard let connection else { return }
        connection.timeout = settings.timeouts.dataBlock
        var encoder = SMTPDataEncoder()
        var out: [UInt8] = []
        out.reserveCapacity(Self.chunkSize + Self.chunkSize / 8 + 8)
        var total = 0
        var failure: NetError?
        message.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let end = min(offset + Self.chunkSize, raw.count)
                out.removeAll(keepingCapacity: true)
                encoder.encode(UnsafeRawBufferPointer(rebasing: raw[offset..<end]), into: &out)
                total += out.count
                do throws(NetError) { try connection.write(out) } catch { failure = error; return }
                offset = end
            }
        }
        if let failure { throw self.failure(net: failure, context: "while sending the message") }
        settings.trace?(.data(bytes: total))
        if let beforeFinalDot {
            do { try beforeFinalDot() } catch {
                close()
                throw self.failure(
                    .invalidRequest, "stopped before the end of the message: \(error)",
                    kind: (error as? any MoError)?.kind ?? .localIO)
            }
        }
        out.removeAll(keepingCapacity: true)
        encoder.finish(into: &out)
        settings.trace?(.sent("."))
        do throws(NetError) { try connection.write(out) } catch {
            throw self.failure(net: error, context: "while sending the message").markedAfterFinalDot()
        }
    }

    /// RSET after a failed transaction, so the connection can carry the next message; errors ignored
    /// because the failure being reported matters more.
    private func resetQuietly() {
        _ = try? command(.rset)
    }

    /// Sends QUIT, waits briefly for its reply and closes. Never throws: the message is already settled.
    public func quit() {
        guard let connection else { return }
        connection.timeout = min(settings.timeouts.command, 10)
        if (try? write(.quit)) != nil {
            _ = try? readReply(timeout: min(settings.timeouts.command, 10), context: "waiting for the reply to QUIT")
        }
        close()
    }

    /// Closes the connection without QUIT.
    public func close() {
        connection?.close()
        connection = nil
    }

    // MARK: - Wire

    /// Writes `command` and reads its reply.
    @discardableResult
    func command(_ command: SMTPCommand) throws(SMTPError) -> SMTPReply {
        try write(command)
        let name = command.redactedText.split(separator: " ").prefix(2).joined(separator: " ")
        return try readReply(timeout: settings.timeouts.command, context: "waiting for the reply to \(name)")
    }

    private func write(_ command: SMTPCommand) throws(SMTPError) {
        guard let connection else { throw failure(.invalidRequest, "not connected", kind: .software) }
        settings.trace?(.sent(command.redactedText))
        connection.timeout = settings.timeouts.command
        do throws(NetError) { try connection.write(command.bytes) } catch {
            throw failure(net: error, context: "while sending \(command.redactedText.split(separator: " ").first ?? "")")
        }
    }

    private func readReply(timeout: Double, context: String) throws(SMTPError) -> SMTPReply {
        guard let connection else { throw failure(.invalidRequest, "not connected", kind: .software) }
        connection.timeout = timeout
        while true {
            let next: SMTPReply?
            do throws(SMTPReplyParser.ParseError) { next = try parser.next() } catch {
                throw failure(.protocolViolation, "\(error.message) (\(context))")
            }
            if let reply = next {
                if let trace = settings.trace {
                    for (i, line) in reply.lines.enumerated() {
                        trace(.received("\(reply.code)\(i == reply.lines.count - 1 ? " " : "-")\(line)"))
                    }
                }
                if reply.code == 421 {
                    // §3.8: the server is shutting the channel; the session cannot go on.
                    throw failure(.rejected, "the server closed the session: \(reply)", reply: reply)
                }
                return reply
            }
            var n = 0
            var readError: NetError?
            readBuffer.withUnsafeMutableBytes { raw in
                do throws(NetError) { n = try connection.read(into: raw) } catch { readError = error }
            }
            if let readError { throw failure(net: readError, context: context) }
            if n == 0 {
                throw failure(net: NetError(.closed, host: settings.host, port: settings.port, detail: ""), context: context)
            }
            parser.append(readBuffer[0..<n])
        }
    }

    // MARK: - Errors

    private func failure(
        _ code: SMTPError.Code, _ detail: String, reply: SMTPReply? = nil,
        rejected: [SMTPError.RejectedRecipient] = [], kind: ErrorKind? = nil, outage: Bool = false
    ) -> SMTPError {
        SMTPError(
            code, host: settings.host, port: settings.port, detail: detail, reply: reply,
            rejectedRecipients: rejected, unreachable: outage, kind: kind)
    }

    /// The two ways the token broker fails that are not a bad password: a lapsed grant (its one line,
    /// unwrapped) and an unreachable token endpoint (an outage: no try spent). nil for any other error.
    private func oauth2Failure(_ error: any Error) -> SMTPError? {
        switch error {
        case let e as SignInNeededError: failure(.signIn, e.description)
        case let e as OutageError: failure(.credentials, "cannot get a new OAuth2 token: \(e)", kind: e.kind, outage: true)
        default: nil
        }
    }

    /// A transport error, reworded without the endpoint (SMTPError prefixes it).
    private func failure(net: NetError, context: String?) -> SMTPError {
        let suffix = context.map { " \($0)" } ?? ""
        let detail: String
        let code: SMTPError.Code
        switch net.code {
        case .resolve: detail = "cannot resolve \(net.host): \(net.detail)"; code = .network
        case .connect: detail = "cannot connect: \(net.detail)"; code = .network
        case .timeout: detail = "timed out \(net.detail)\(suffix)"; code = .network
        case .closed: detail = "connection closed by the server\(suffix)"; code = .network
        case .io: detail = "\(net.detail)\(suffix)"; code = .network
        case .untrustedCertificate:
            detail = "certificate for \(net.host) is not trusted: \(net.detail); set ca-file or check the host"; code = .tls
        case .tlsHandshake: detail = "TLS handshake failed: \(net.detail)"; code = .tls
        case .tlsSetup: detail = net.detail; code = .tls
        case .startTLSUnavailable: detail = "the server does not offer STARTTLS; refusing to send without TLS"; code = .tls
        }
        return SMTPError(
            code, host: settings.host, port: settings.port, detail: detail, network: net,
            unreachable: code == .network && !greeted)
    }
}

extension SMTPError {
    /// The same error, marked as happening once the whole message had been sent.
    func markedAfterFinalDot() -> SMTPError {
        SMTPError(
            code, host: host, port: port, detail: detail, reply: reply, rejectedRecipients: rejectedRecipients,
            network: network, afterFinalDot: true, kind: kind)
    }
}
