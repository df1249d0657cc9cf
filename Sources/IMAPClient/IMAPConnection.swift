import IMAPCodec
import MoCore
import MoNet

/// One authenticated IMAP session over a blocking connection. Not thread-safe: a connection belongs to
/// one thread at a time (the sync runs several connections on several threads).
///
/// The core is `run`: encode a command, write its chunks (waiting for `+` before synchronising literals),
/// then read events until the command's tagged completion, handing untagged responses and FETCH events
/// to the caller as they arrive. `pipeline` does the same for several commands in flight.
public final class IMAPConnection {
    public let settings: IMAPSettings
    public internal(set) var capabilities: Set<Capability> = []
    /// Capabilities turned on with ENABLE (CONDSTORE, QRESYNC).
    public private(set) var enabled: Set<Capability> = []
    /// The mailbox the last successful SELECT/EXAMINE opened.
    public internal(set) var selectedMailbox: MailboxName?

    let connection: Connection
    var parser: ResponseParser
    var encoder = CommandEncoder()
    let trace: IMAPTrace?
    /// Socket reads land here. Allocated, never zeroed: only the pages reads fill join the resident set (a
    /// timer run's replies fill a few; a zeroed array would make all 256 KiB resident at once).
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 * 1024, alignment: 16)
    private var byeText: String?
    /// False only while IDLE waits in short slices, where a read timeout is its clock, not a failure.
    var timeoutEndsSession = true

    var server: String { "\(settings.host):\(settings.port)" }

    /// The negotiated TLS version ("TLSv1.3"), nil without TLS.
    public var tlsVersion: String? { connection.tlsVersion }

    /// Connects, secures the connection as `settings.security` says, reads the greeting and logs in.
    public static func open(
        _ settings: IMAPSettings, trace: IMAPTrace? = nil,
        parserOptions: ResponseParser.Options = ResponseParser.Options()
    ) throws(IMAPError) -> IMAPConnection {
        let server = "\(settings.host):\(settings.port)"
        if settings.security == .none && !isLoopbackHost(settings.host) {
            throw IMAPError(server: server, .insecure("refusing to send a password without TLS to a host that is not loopback"))
        }
        let connection: Connection
        do {
            connection =
                settings.security == .implicit
                ? try Connection.connectTLS(host: settings.host, port: settings.port, options: settings.tls, timeout: settings.timeout)
                : try Connection.connect(host: settings.host, port: settings.port, timeout: settings.timeout)
        } catch {
            throw IMAPError(server: server, .network(error))
        }
        let session = IMAPConnection(settings: settings, connection: connection, trace: trace, parserOptions: parserOptions)
        do {
            let preauthenticated = try session.readGreeting()
            if settings.security == .starttls { try session.upgradeToTLS() }
            if !preauthenticated { try session.authenticate() }
            if !session.capabilities.contains(.imap4rev1) && !session.capabilities.contains("IMAP4rev2") {
                try session.refreshCapabilities()
            }
        } catch {
            connection.close()
            throw error
        }
        return session
    }

    init(settings: IMAPSettings, connection: Connection, trace: IMAPTrace?, parserOptions: ResponseParser.Options) {
        self.settings = settings
        self.connection = connection
        self.trace = trace
        self.parser = ResponseParser(options: parserOptions)
    }

    deinit {
        connection.close()
        readBuffer.deallocate()
    }

    // MARK: - Events

    /// The next parsed event, reading from the network as needed.
    func nextEvent() throws(IMAPError) -> ResponseEvent {
        while true {
            let event: ResponseEvent?
            do { event = try parser.next() } catch {
                connection.close()
                throw IMAPError(server: server, .parse(error))
            }
            if let event {
                if case .untagged(.bye(let text)) = event { byeText = text.text }
                return event
            }
            var outcome: Result<Int, NetError> = .success(0)
            let connection = self.connection
            do throws(NetError) { outcome = .success(try connection.read(into: readBuffer)) } catch { outcome = .failure(error) }
            let n: Int
            switch outcome {
            case .success(let count): n = count
            case .failure(let error):
                // A command's answer is missing or half read: the session cannot go on. Closing now also
                // spares the LOGOUT that follows a second wait of the whole timeout (a stall would cost two).
                if error.code != .timeout || timeoutEndsSession { connection.close() }
                throw IMAPError(server: server, .network(error))
            }
            if n == 0 {
                connection.close()
                throw IMAPError(server: server, byeText.map { .bye($0) } ?? .bye("connection closed"))
            }
            let received = UnsafeRawBufferPointer(rebasing: readBuffer[0..<n])
            trace?.received(Array(received)[...])
            parser.append(received)
        }
    }

    func write(_ bytes: [UInt8]) throws(IMAPError) {
        do { try connection.write(bytes) } catch {
            connection.close()  // part of a command may have gone out: nothing more can be said
            throw IMAPError(server: server, .network(error))
        }
    }

    /// Receives FETCH events (`fetchStart` … `fetchEnd`, body chunks included) as they are parsed.
    public typealias FetchHandler = (ResponseEvent) throws -> Void
    public typealias UntaggedHandler = (UntaggedResponse) throws -> Void
    /// Writes exactly the announced number of APPEND body bytes to the connection.
    public typealias BodyWriter = (Connection) throws -> Void

    /// Runs one command to completion. NO and BAD become errors (with the server's text); the tagged OK
    /// is returned for its response code (APPENDUID, COPYUID, READ-WRITE...).
    @discardableResult
    public func run(
        _ command: Command, untagged: UntaggedHandler? = nil, fetch: FetchHandler? = nil,
        body: BodyWriter? = nil
    ) throws -> TaggedResponse {
        let tag = try send(command, untagged: untagged, fetch: fetch, body: body)
        return try complete(tag: tag, command: command, untagged: untagged, fetch: fetch)
    }

    /// Several commands in flight at once (RFC 3501 §5.5): up to `window` sent before the first completion
    /// is awaited. Only for commands without synchronising literals (FETCH, STORE, EXPUNGE, NOOP...).
    /// Returns the completions in command order; the first NO/BAD is thrown after all have completed, so the
    /// connection stays in step.
    @discardableResult
    public func pipeline(
        _ commands: [Command], window: Int = 16, untagged: UntaggedHandler? = nil,
        fetch: FetchHandler? = nil
    ) throws -> [TaggedResponse] {
        var results: [TaggedResponse?] = Array(repeating: nil, count: commands.count)
        var inFlight: [(tag: String, index: Int)] = []
        var nextToSend = 0
        var firstFailure: Error?
        while nextToSend < commands.count || !inFlight.isEmpty {
            while nextToSend < commands.count && inFlight.count < max(1, window) {
                let tag = try send(commands[nextToSend], untagged: untagged, fetch: fetch, body: nil)
                inFlight.append((tag, nextToSend))
                nextToSend += 1
            }
            let done: TaggedResponse
            do { done = try readUntilTagged(untagged: untagged, fetch: fetch) } catch let e as HandlerFailure {
                drain(Set(inFlight.map(\.tag)))
                throw e.error
            }
            guard let position = inFlight.firstIndex(where: { $0.tag == done.tag }) else {
                throw IMAPError(server: server, .unexpected("completion for unknown tag \(done.tag)"))
            }
            let index = inFlight.remove(at: position).index
            results[index] = done
            if firstFailure == nil, let failure = failure(for: done, command: commands[index]) { firstFailure = failure }
        }
        if let firstFailure { throw firstFailure }
        return results.map { $0! }
    }

    /// Encodes and writes a command, honouring synchronising literals; returns its tag.
    func send(_ command: Command, untagged: UntaggedHandler?, fetch: FetchHandler?, body: BodyWriter?) throws -> String {
        let encoded: EncodedCommand
        do { encoded = try encoder.encode(command) } catch { throw IMAPError(server: server, .encode(error)) }
        trace?.sent(encoded.tag, command)
        for (i, chunk) in encoded.chunks.enumerated() {
            if chunk.waitForContinuation {
                // The server either invites the rest (+) or ends the command early (tagged NO/BAD).
                while true {
                    let event = try nextEvent()
                    if case .continuation = event { break }
                    if case .tagged(let t) = event, t.tag == encoded.tag {
                        throw failure(for: t, command: command)
                            ?? IMAPError(server: server, .unexpected("\(t.tag) completed before its literal was sent"))
                    }
                    do { try dispatch(event, untagged: untagged, fetch: fetch) } catch {
                        // The server waits for a literal that will not come: nothing more can be said here.
                        connection.close()
                        throw error
                    }
                }
            }
            switch chunk.payload {
            case .bytes(let bytes):
                // The SASL answer without SASL-IR is a chunk of its own after the command line.
                if i > 0, case .authenticate = command { trace?.sentRaw("<redacted>") }
                try write(bytes)
            case .messageBody(let size):
                guard let body else { throw IMAPError(server: server, .unexpected("APPEND of \(size) bytes without a body")) }
                do {
                    try body(connection)
                } catch {
                    // Part of a literal went out: nothing more can be said on this connection. The error
                    // says so (a network error), so that callers drop the connection, not just the command.
                    connection.close()
                    if error is IMAPError || error is NetError { throw error }
                    throw networkError(.io, "APPEND abandoned mid-literal (\(error)); connection closed")
                }
            }
        }
        return encoded.tag
    }

    /// Reads until `tag` completes; NO/BAD → error.
    func complete(tag: String, command: Command, untagged: UntaggedHandler?, fetch: FetchHandler?) throws -> TaggedResponse {
        while true {
            let done: TaggedResponse
            do { done = try readUntilTagged(untagged: untagged, fetch: fetch) } catch let e as HandlerFailure {
                drain([tag])
                throw e.error
            }
            guard done.tag == tag else {
                throw IMAPError(server: server, .unexpected("completion for unknown tag \(done.tag)"))
            }
            if let failure = failure(for: done, command: command) { throw failure }
            return done
        }
    }

    /// Reads to the next tagged completion. A handler's error comes out as `HandlerFailure`: the command's
    /// remaining responses are still unread then, and the caller must `drain` before the error goes on.
    func readUntilTagged(untagged: UntaggedHandler?, fetch: FetchHandler?) throws -> TaggedResponse {
        while true {
            let event = try nextEvent()
            if case .tagged(let t) = event { return t }
            if case .continuation = event {
                throw IMAPError(server: server, .unexpected("continuation request where none was expected"))
            }
            do { try dispatch(event, untagged: untagged, fetch: fetch) } catch { throw HandlerFailure(error: error) }
        }
    }

    /// A caller's handler failed (e.g. the disk filled while a FETCH body was written).
    struct HandlerFailure: Error { let error: any Error }

    /// After a handler failed: reads and drops the responses up to the completion of every command in
    /// `tags`, so the connection stays in step for the next command (another folder). Each read keeps the
    /// connection's timeout; if the drain fails, the connection is closed, so it is never reused out of step.
    func drain(_ tags: Set<String>) {
        var waiting = tags
        do {
            while !waiting.isEmpty {
                let event = try nextEvent()
                switch event {
                case .tagged(let t): waiting.remove(t.tag)
                case .continuation: throw IMAPError(server: server, .unexpected("continuation request while draining"))
                case .untagged(let u): noteUntagged(u)
                default: break
                }
            }
        } catch {
            connection.close()
        }
    }

    func dispatch(_ event: ResponseEvent, untagged: UntaggedHandler?, fetch: FetchHandler?) throws {
        switch event {
        case .untagged(let u):
            noteUntagged(u)
            try untagged?(u)
        case .fetchStart, .fetchAttribute, .bodyStart, .bodyBytes, .bodyEnd, .fetchEnd:
            try fetch?(event)
        case .tagged, .continuation:
            break
        }
    }

    /// Capability changes the server announces on its own.
    private func noteUntagged(_ u: UntaggedResponse) {
        switch u {
        case .capability(let caps): capabilities = Set(caps)
        case .ok(let text), .preauth(let text):
            if case .capability(let caps)? = text.code { capabilities = Set(caps) }
        case .enabled(let caps): enabled.formUnion(caps)
        default: break
        }
    }

    func failure(for tagged: TaggedResponse, command: Command) -> IMAPError? {
        switch tagged.status {
        case .ok: return nil
        case .no: return IMAPError(server: server, .refused(command: Self.name(of: command), text: tagged.text))
        case .bad: return IMAPError(server: server, .rejected(command: Self.name(of: command), text: tagged.text))
        }
    }

    /// The command's verb for messages ("UID FETCH", "SELECT INBOX").
    static func name(of command: Command) -> String {
        switch command {
        case .select(let m, _): "SELECT \(m)"
        case .examine(let m, _): "EXAMINE \(m)"
        case .create(let m): "CREATE \(m)"
        case .delete(let m): "DELETE \(m)"
        case .append(let m, _, _, _): "APPEND to \(m)"
        case .uidMove(_, let m): "UID MOVE to \(m)"
        case .uidCopy(_, let m): "UID COPY to \(m)"
        case .status(let m, _): "STATUS \(m)"
        case .uidFetch: "UID FETCH"
        case .uidStore: "UID STORE"
        case .uidExpunge: "UID EXPUNGE"
        case .uidSearch: "UID SEARCH"
        default: String(IMAPTrace.redacted(command).prefix { $0 != " " })
        }
    }

    // MARK: - Session start

    /// Reads `* OK`/`* PREAUTH`/`* BYE`; returns whether the session is already authenticated.
    func readGreeting() throws(IMAPError) -> Bool {
        let event = try nextEvent()
        switch event {
        case .untagged(.ok(let text)):
            if case .capability(let caps)? = text.code { capabilities = Set(caps) }
            return false
        case .untagged(.preauth(let text)):
            if case .capability(let caps)? = text.code { capabilities = Set(caps) }
            if settings.security == .starttls {
                // RFC 3501 §6.2.1 leaves no way to STARTTLS after PREAUTH; going on would be plaintext.
                throw IMAPError(
                    server: server,
                    .insecure("the server pre-authenticated the session, so STARTTLS is impossible; refusing to continue without TLS"))
            }
            return true
        case .untagged(.bye(let text)):
            throw IMAPError(server: server, .bye(text.text))
        default:
            throw IMAPError(server: server, .unexpected("greeting was not OK, PREAUTH or BYE"))
        }
    }

    /// A network failure on this connection's server, found by the client rather than the socket.
    func networkError(_ code: NetError.Code, _ detail: String) -> IMAPError {
        IMAPError(server: server, .network(NetError(code, host: settings.host, port: settings.port, detail: detail)))
    }

    func refreshCapabilities() throws(IMAPError) {
        do { try run(.capability) } catch let e as IMAPError { throw e } catch { throw IMAPError(server: server, .unexpected("\(error)")) }
    }

    /// STARTTLS (RFC 3501 §6.2.1, RFC 2595): required when configured; never a plaintext fallback.
    func upgradeToTLS() throws(IMAPError) {
        if capabilities.isEmpty { try refreshCapabilities() }
        guard capabilities.contains(.startTLS) else {
            throw networkError(.startTLSUnavailable, "its capabilities lack STARTTLS")
        }
        do { try run(.startTLS) } catch let e as IMAPError {
            throw networkError(.startTLSUnavailable, "STARTTLS failed: \(e.description)")
        } catch { throw IMAPError(server: server, .unexpected("\(error)")) }
        // Bytes buffered before the handshake were sent in clear text and could be injected (CVE-2011-0411
        // style): discard nothing silently, refuse.
        if parser.bufferedByteCount > 0 {
            throw IMAPError(server: server, .insecure("the server sent data after accepting STARTTLS; refusing the session"))
        }
        do { try connection.startTLS(options: settings.tls) } catch { throw IMAPError(server: server, .network(error)) }
        // Capabilities learned before TLS may have been tampered with (RFC 3501 §6.2.1).
        capabilities = []
        try refreshCapabilities()
    }
}
