/// Incremental parser of the server-to-client stream (RFC 3501 and the extensions listed in this module's
/// README.md). Pure: bytes in through `append`, events out through `next`; no I/O.
///
/// ```
/// var parser = ResponseParser()
/// parser.append(bytesFromSocket)
/// while let event = try parser.next() { handle(event) }
/// ```
///
/// - `next()` returns nil when more bytes are needed; nothing is consumed then, and the partial unit is
///   re-parsed once more bytes arrive (at most when a new line arrives or the buffered unit has doubled,
///   so feeding byte by byte stays linear).
/// - FETCH is streamed: a body literal is handed out in `bodyBytes` chunks as it arrives and never buffered.
/// - Every limit in `Options` is enforced as soon as the buffered bytes cross it. After any error the
///   parser is dead: `next()` rethrows the same error and `append` ignores input. Close the connection.
public struct ResponseParser: Sendable {
    public let options: Options

    private var buffer: [UInt8] = []
    /// First unconsumed byte in `buffer`; always at a unit boundary or inside a streamed body.
    private var start = 0
    /// Stream offset of `buffer[0]`.
    private var streamBase = 0
    private var state: State = .response
    /// Events parsed ahead (an inline body yields three events at once).
    private var pending: [ResponseEvent] = []
    private var dead: IMAPParseError?
    /// After an incomplete attempt: do not retry before `buffer.count - start` reaches `retrySize`, unless a
    /// LF arrives past `lfScanned` (both relative to `start`, which does not move while waiting).
    private var waiting = false
    private var retrySize = 0
    private var lfScanned = 0
    /// Bytes (relative to `start`) an inline literal needs before a retry can succeed.
    private var literalNeed = 0

    private enum State: Sendable {
        case response
        /// Inside a FETCH: `count` attributes seen so far.
        case fetch(count: Int)
        /// Inside a FETCH body literal with `remaining` bytes still to hand out.
        case body(remaining: Int, count: Int)
    }

    public init(options: Options = Options()) {
        self.options = options
    }

    /// Adds bytes received from the server.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        guard dead == nil else { return }
        buffer.append(contentsOf: bytes)
    }

    /// Bytes appended but not yet consumed.
    public var bufferedByteCount: Int { buffer.count - start }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() throws(IMAPParseError) -> ResponseEvent? {
        if let e = dead { throw e }
        if !pending.isEmpty { return pending.removeFirst() }
        compact()
        switch state {
        case .body(let remaining, let count):
            if remaining == 0 {
                state = .fetch(count: count)
                return .bodyEnd
            }
            let available = buffer.count - start
            guard available > 0 else { return nil }
            let n = min(available, remaining)
            let chunk = Array(buffer[start..<start + n])
            start += n
            state = .body(remaining: remaining - n, count: count)
            return .bodyBytes(chunk)
        case .response, .fetch:
            return try parseUnit()
        }
    }

    /// Parses one unit in the `.response` or `.fetch` state.
    private mutating func parseUnit() throws(IMAPParseError) -> ResponseEvent? {
        let available = buffer.count - start
        guard available > 0 else { return nil }
        if waiting && available <= options.maxLineLength {
            if available < literalNeed { return nil }
            if available < retrySize {
                let newLF = buffer[(start + lfScanned)...].contains(UInt8(ascii: "\n"))
                lfScanned = available
                if !newLF { return nil }
            }
        }
        let state = self.state, options = self.options, start = self.start, base = self.streamBase
        let result: Result<(ResponseEvent, [ResponseEvent], State, Int), ParseFailure>
        var needUntil = 0
        result = buffer.withUnsafeBufferPointer { p in
            var c = Cursor(p, at: start, options: options, streamBase: base)
            do throws(ParseFailure) {
                let r = try ResponseParser.step(&c, state)
                return .success((r.0, r.1, r.2, c.pos))
            } catch {
                needUntil = c.needUntil
                return .failure(error)
            }
        }
        switch result {
        case .success(let (event, more, newState, newPos)):
            self.start = newPos
            self.state = newState
            pending = more
            waiting = false
            return event
        case .failure(.incomplete):
            if available > options.maxLineLength {
                throw die(
                    IMAPParseError(
                        "server sent a response longer than \(options.maxLineLength) bytes (not counting message bodies)",
                        limit: .lineLength, offset: base + start))
            }
            waiting = true
            retrySize = available * 2
            lfScanned = available
            literalNeed = needUntil > start ? needUntil - start : 0
            return nil
        case .failure(.failed(let e)):
            throw die(e)
        }
    }

    private mutating func die(_ e: IMAPParseError) -> IMAPParseError {
        dead = e
        buffer = []
        start = 0
        pending = []
        return e
    }

    /// Grammar dispatch for one unit: the event, any events that follow it at once, and the new state.
    private static func step(_ c: inout Cursor, _ state: State) throws(ParseFailure) -> (ResponseEvent, [ResponseEvent], State) {
        switch state {
        case .response, .body:
            let event = try c.response()
            if case .fetchStart = event { return (event, [], .fetch(count: 0)) }
            return (event, [], .response)
        case .fetch(let count):
            let step = try c.fetchStep()
            if case .end = step { return (.fetchEnd, [], .response) }
            guard count < c.options.maxFetchAttributes else {
                throw c.fail(
                    "server sent a FETCH response with more than \(c.options.maxFetchAttributes) attributes",
                    .fetchAttributes)
            }
            switch step {
            case .attribute(let a):
                return (.fetchAttribute(a), [], .fetch(count: count + 1))
            case .flags(let flags, let skipped):
                let more: [ResponseEvent] = skipped.isEmpty ? [] : [.fetchAttribute(.skippedFlags(skipped))]
                return (.fetchAttribute(.flags(flags)), more, .fetch(count: count + 1))
            case .bodyLiteral(let b):
                return (.bodyStart(b), [], .body(remaining: b.size, count: count + 1))
            case .bodyInline(let b, let bytes):
                return (.bodyStart(b), bytes.isEmpty ? [.bodyEnd] : [.bodyBytes(bytes), .bodyEnd], .fetch(count: count + 1))
            case .end:
                fatalError("handled above")
            }
        }
    }

    /// Drops consumed bytes. Cheap when everything was consumed (the common case between reads); otherwise
    /// only once the consumed prefix dominates, so each byte is moved O(1) times.
    private mutating func compact() {
        guard start > 0 else { return }
        if start == buffer.count {
            streamBase += start
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            start = 0
        } else if start >= 1 << 16 && start * 2 >= buffer.count {
            streamBase += start
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }
}
