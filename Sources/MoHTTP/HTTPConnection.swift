import MoCore
import MoNet

/// One HTTP/1.1 connection to one origin (scheme, host, port), kept open for request after request: a JMAP
/// sync makes many small requests, and a TCP and TLS handshake each would cost more than most of them.
/// `https` verifies the certificate as every connection does; plain `http` is refused except to a loopback
/// host (the tests' local servers). No redirects, no cookies, bounded bodies. Nothing is logged: headers and
/// bodies may carry secrets.
///
/// Invariants:
/// - one request at a time, and the whole response is read before the next request is written, so a
///   response always belongs to the request before it;
/// - the connection is dropped after a response that closes it, after any error, and after a response
///   whose body the caller did not take whole (a sink that threw);
/// - a request on a reused connection that the server had already closed while idle (the write fails, or
///   the stream ends before one byte of a response) is sent again once on a new connection, when the
///   caller says it is safe to repeat (`idempotent`: a read, a keyword or mailbox patch, an upload stored by
///   content). A server may have taken a request and then reset the connection without answering, so a
///   request that creates something (`Email/import`) is never sent twice: its failure is the caller's.
public final class HTTPConnection {
    public let secure: Bool
    public let host: String
    public let port: Int
    public var timeout: Double
    private let tls: TLSOptions
    private var connection: Connection?
    /// How many connections were opened (for benchmarks: requests per connection).
    public private(set) var connectionsOpened = 0

    /// A response: the status, the body unless it was streamed to a sink, and the `Location` field.
    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]
        public var location: String?
        public init(status: Int, body: [UInt8], location: String?) {
            self.status = status
            self.body = body
            self.location = location
        }
    }

    public init(origin: WebAddress, tls: TLSOptions = TLSOptions(), timeout: Double = 30) {
        secure = origin.secure
        host = origin.host
        port = origin.port
        self.tls = tls
        self.timeout = timeout
    }

    deinit { connection?.close() }

    /// `https://host:port` as the messages name it.
    public var name: String { "\(secure ? "https" : "http")://\(host):\(port)" }

    /// Sends `method target` with `headers` (besides Host, User-Agent and, with a body, Content-Length) and
    /// `body`. The body of the response is at most `maxBody` bytes (more is an error). A 2xx body is handed to
    /// `sink` piece by piece as it arrives when one is given (then `Response.body` is empty), first (perhaps
    /// empty) as soon as the head is in, which tells a stream open (JMAP push); any other body, and every body
    /// without a sink, is returned whole. A 204 has no body: the sink hears nothing.
    /// `close` asks the server to close the connection after this response.
    public func send(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil, maxBody: Int,
        close: Bool = false, idempotent: Bool = true, sink: (([UInt8]) throws(GenericError) -> Void)? = nil
    ) throws(GenericError) -> Response {
        guard secure || isLoopbackHost(host) else { throw GenericError(.security, "\(name): plain http is refused; only https") }
        let request = head(method, target, headers: headers, bodyLength: body?.count, close: close) + (body ?? [])
        let reused = connection != nil
        do {
            return try exchange(request, maxBody: maxBody, sink: sink)
        } catch let failure as StaleConnection {
            guard reused, idempotent else { throw failure.error }
            return try exchangeOrDrop(request, maxBody: maxBody, sink: sink)
        } catch let error as GenericError {
            throw error
        } catch {
            throw GenericError(.software, "\(name): \(error)")
        }
    }

    /// What `pipeline` hands over for each request, in order: its status, its body's bytes, its end.
    public enum PipelinedEvent {
        case status(Int)
        case bytes([UInt8])
        case end
    }

    /// GETs of `targets` written back to back, at most `window` unanswered at a time, their answers read in
    /// order (HTTP/1.1 pipelining, RFC 9112 §9.3.2): for many small downloads, so each costs the server's
    /// time and not a round trip. GETs only (safe to repeat): when the server closes the connection after an
    /// answer, or a reused connection turns out closed, the requests not yet answered are written again on a
    /// new one. `each` gets every request's index with its events; each body at most `maxBody` bytes.
    public func pipeline(
        _ targets: [String], headers: [(String, String)] = [], maxBody: Int, window: Int = 32,
        _ each: (Int, PipelinedEvent) throws(GenericError) -> Void
    ) throws(GenericError) {
        guard secure || isLoopbackHost(host) else { throw GenericError(.security, "\(name): plain http is refused; only https") }
        var answered = 0
        var attempts = 0
        while answered < targets.count {
            let reused = connection != nil
            do {
                try pipelineOnce(targets, answered: &answered, headers: headers, maxBody: maxBody, window: max(1, window), each)
            } catch let failure as StaleConnection {
                // Nothing of the next answer came: written again on a new connection, once per answer.
                attempts += 1
                guard reused || attempts < 2 else { throw failure.error }
            } catch let error as GenericError {
                throw error
            } catch {
                throw GenericError(.software, "\(name): \(error)")
            }
        }
    }

    /// Answers requests `answered`… on one connection, counting each answer handed over in `answered` (all,
    /// or up to an answer after which the server closes). Throws `StaleConnection` when the stream ends
    /// before a byte of the next answer.
    private func pipelineOnce(
        _ targets: [String], answered: inout Int, headers: [(String, String)], maxBody: Int, window: Int,
        _ each: (Int, PipelinedEvent) throws(GenericError) -> Void
    ) throws {
        let first = answered
        let connection = try open()
        var keep = false
        defer { if !keep { self.close() } }
        var written = first
        func writeMore(upTo limit: Int) throws(NetError) {
            var batch: [UInt8] = []
            while written < min(targets.count, limit) {
                batch += head("GET", targets[written], headers: headers, bodyLength: nil, close: false)
                written += 1
            }
            if !batch.isEmpty { try connection.write(batch) }
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var current = first
        var carried: ArraySlice<UInt8> = []
        var any = false
        do {
            try writeMore(upTo: first + window)
            while current < targets.count {
                var parser = HTTPResponseParser(maxBody: maxBody)
                var announced = false
                try readAnswer(connection, into: &parser, carried: carried, buffer: &buffer, any: &any) { parser throws in
                    guard parser.status >= 200 else { return }
                    if !announced {
                        announced = true
                        try each(current, .status(parser.status))
                    }
                    let piece = parser.takeBody()
                    if !piece.isEmpty { try each(current, .bytes(piece)) }
                }
                if !announced { try each(current, .status(parser.status)) }
                let rest = parser.takeBody()
                if !rest.isEmpty { try each(current, .bytes(rest)) }
                try each(current, .end)
                carried = parser.leftover
                current += 1
                answered = current
                if parser.closesConnection { return }
                try writeMore(upTo: current + window)
            }
        } catch let error as NetError {
            let wrapped = GenericError(error.kind, error.description)
            if !any && (error.code == .closed || error.code == .io) { throw StaleConnection(error: wrapped) }
            throw wrapped
        } catch let error as GenericError {
            throw GenericError(error.kind, error.message.hasPrefix(name) ? error.message : "\(name): \(error.message)")
        }
        keep = carried.isEmpty
    }

    /// Closes the connection; the next request opens a new one.
    public func close() {
        connection?.close()
        connection = nil
    }

    private struct StaleConnection: Error { let error: GenericError }

    private func exchangeOrDrop(
        _ request: [UInt8], maxBody: Int, sink: (([UInt8]) throws(GenericError) -> Void)?
    ) throws(GenericError) -> Response {
        do {
            return try exchange(request, maxBody: maxBody, sink: sink)
        } catch let failure as StaleConnection {
            throw failure.error
        } catch let error as GenericError {
            throw error
        } catch {
            throw GenericError(.software, "\(name): \(error)")
        }
    }

    /// One request and its response. Throws `StaleConnection` when nothing of a response came back (the
    /// write failed, or the stream ended at once), `GenericError` otherwise.
    private func exchange(
        _ request: [UInt8], maxBody: Int, sink: (([UInt8]) throws(GenericError) -> Void)?
    ) throws -> Response {
        let connection = try open()
        var keep = false
        defer { if !keep { self.close() } }
        var parser = HTTPResponseParser(maxBody: maxBody)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var any = false
        do {
            try connection.write(request)
            try readAnswer(connection, into: &parser, carried: [], buffer: &buffer, any: &any) { parser throws in
                // Once the head is in (a 2xx with a body: not 204): the sink hears of it, bytes or not.
                if let sink, (200..<300).contains(parser.status), parser.status != 204 { try sink(parser.takeBody()) }
            }
        } catch let error as NetError {
            let wrapped = GenericError(error.kind, error.description)
            if !any, error.code == .closed || error.code == .io { throw StaleConnection(error: wrapped) }
            throw wrapped
        } catch let error as GenericError {
            throw GenericError(error.kind, error.message.hasPrefix(name) ? error.message : "\(name): \(error.message)")
        }
        keep = !parser.closesConnection && parser.leftover.isEmpty
        return Response(status: parser.status, body: parser.body, location: parser.location)
    }

    /// Reads one answer into `parser` (`carried`, the bytes read after the answer before, first), letting
    /// `arrived` act after each arrival; `any` says whether a byte of it came. Throws `StaleConnection` when
    /// the stream ends before one did.
    private func readAnswer(
        _ connection: Connection, into parser: inout HTTPResponseParser, carried: ArraySlice<UInt8>, buffer: inout [UInt8], any: inout Bool,
        _ arrived: (inout HTTPResponseParser) throws -> Void
    ) throws {
        any = !carried.isEmpty
        if !carried.isEmpty {
            try parser.append(carried)
            try arrived(&parser)
        }
        while !parser.isComplete {
            let n = try buffer.withUnsafeMutableBytes { raw throws(NetError) in try connection.read(into: raw) }
            if n == 0 {
                if !any { throw StaleConnection(error: GenericError(.temporary, "\(name): the server closed the connection")) }
                try parser.finish()
                break
            }
            any = true
            try parser.append(buffer[0..<n])
            try arrived(&parser)
        }
    }

    private func open() throws(GenericError) -> Connection {
        if let connection { return connection }
        do {
            let opened =
                secure
                ? try Connection.connectTLS(host: host, port: port, options: tls, timeout: timeout)
                : try Connection.connect(host: host, port: port, timeout: timeout)
            connection = opened
            connectionsOpened += 1
            return opened
        } catch {
            throw GenericError(error.kind, error.description)
        }
    }

    private func head(_ method: String, _ target: String, headers: [(String, String)], bodyLength: Int?, close: Bool) -> [UInt8] {
        let hostField = host.contains(":") ? "[\(host)]" : host
        let defaultPort = secure ? 443 : 80
        var head =
            "\(method) \(target) HTTP/1.1\r\nHost: \(hostField)\(port == defaultPort ? "" : ":\(port)")\r\n"
            + "User-Agent: mo/\(MoVersion.string)\r\n"
        if close { head += "Connection: close\r\n" }
        for (field, value) in headers { head += "\(field): \(value)\r\n" }
        if let bodyLength { head += "Content-Length: \(bodyLength)\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }
}
