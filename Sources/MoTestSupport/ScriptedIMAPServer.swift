#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import Synchronization

/// The one fake IMAP server of the tests: listens on 127.0.0.1, sends a greeting, and answers each command
/// the client sends by a script, falling back to a small correct server over `mailboxes`. The script can send
/// any bytes (malformed, truncated, non-UTF-8), close the connection, or stall. Every accepted connection is
/// served on its own thread; `stop()` ends them all, stalled ones included.
///
/// ```
/// let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX", messages: [...])]) { request in
///     request.verb == "SELECT" ? [.text("\(request.tag) NO gone\r\n")] : nil   // nil: the default answer
/// }
/// ```
public final class ScriptedIMAPServer: @unchecked Sendable {
    /// One command as the client sent it; synchronising and non-synchronising literals are read and inlined
    /// as quoted strings.
    public struct Request: Sendable {
        public let tag: String
        /// Upper-cased; `UID FETCH`, `UID STORE`... for UID commands.
        public let verb: String
        /// The arguments after the verb, literals inlined as their bytes.
        public let arguments: [UInt8]
        /// Counted from 0 in order of acceptance.
        public let connection: Int
        /// The whole line (tag, verb as sent, arguments).
        public let line: [UInt8]
        public var argumentText: String { String(decoding: arguments, as: UTF8.self) }
        public var lineText: String { String(decoding: line, as: UTF8.self) }
        /// The first argument as a mailbox name's bytes (atom, quoted string or literal).
        public var firstArgument: [UInt8]? { ScriptedIMAPServer.tokens(arguments).first }
    }

    public enum Reply: Sendable {
        case send([UInt8])
        /// Closes the connection (after what was sent before).
        case close
        /// Sends nothing more and reads nothing more on this connection until `stop()`.
        case stall
        /// What the default server answers (to add lies before or after it).
        case standard

        public static func text(_ s: String) -> Reply { .send(Array(s.utf8)) }
    }

    /// Returns the replies to a request, or nil for the default answer (`[.standard]`).
    public typealias Script = @Sendable (Request) -> [Reply]?

    public let port: Int
    public let store: MailStore
    private let listener: Int32
    private let greeting: [Reply]
    private let script: Script
    private let state = Mutex<(clients: [Int32], threads: [ThreadHandle], log: [UInt8], stopped: Bool)>(([], [], [], false))

    /// `greeting` defaults to PREAUTH with IMAP4rev1 (a run with `tls = "none"` needs no login).
    public init(
        greeting: [Reply] = [.text("* PREAUTH [CAPABILITY IMAP4rev1] scripted\r\n")],
        mailboxes: [MailStore.Mailbox] = [], script: @escaping Script = { _ in nil }
    ) throws {
        (listener, port) = try listenOnLoopback()
        self.greeting = greeting
        self.script = script
        self.store = MailStore(mailboxes)
        nonisolated(unsafe) let unretained = Unmanaged.passUnretained(self)
        let t = startThread { unretained.takeUnretainedValue().acceptLoop() }
        state.withLock { $0.threads.append(t) }
    }

    /// Everything every client sent, in arrival order (to check that a password never went out).
    public var received: [UInt8] { state.withLock { $0.log } }
    public var receivedText: String { String(decoding: received, as: UTF8.self) }
    /// How many connections were accepted.
    public var connections: Int { state.withLock { $0.clients.count } }
    /// The most connections open at once (a client's session lasts until it closes its end).
    public var peakOpenConnections: Int { open.withLock { $0.peak } }
    private let open = Mutex<(now: Int, peak: Int)>((0, 0))

    /// Writes `bytes` to connection `index` now, outside any command's answer: news a server sends to an
    /// idling client (IDLE). False when there is no such open connection.
    @discardableResult
    public func push(_ bytes: [UInt8], toConnection index: Int) -> Bool {
        guard let fd = state.withLock({ s in s.stopped || index >= s.clients.count ? nil : s.clients[index] }) else { return false }
        return Self.write(fd, bytes)
    }

    /// Stops listening, ends every connection and joins every thread.
    /// Idempotent: a second call does nothing (the listener's fd number may already be another's).
    public func stop() {
        let threads: [ThreadHandle]? = state.withLock { s in
            if s.stopped { return nil }
            s.stopped = true
            for fd in s.clients { shutdown(fd, Int32(SHUT_RDWR)) }
            return s.threads
        }
        guard let threads else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for t in threads { t.join() }
        state.withLock { s in for fd in s.clients { close(fd) } }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { return }
            let index: Int? = state.withLock { s in
                if s.stopped { return nil }
                s.clients.append(fd)
                return s.clients.count - 1
            }
            guard let index else { close(fd); return }
            // Replies go out in several writes: without this, Nagle holds each second one for the client's
            // delayed ACK (40 ms a command).
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let t = startThread { [self] in serve(fd, connection: index) }
            state.withLock { $0.threads.append(t) }
        }
    }

    // MARK: - One connection

    private func serve(_ fd: Int32, connection: Int) {
        open.withLock {
            $0.now += 1; $0.peak = max($0.peak, $0.now)
        }
        defer { open.withLock { $0.now -= 1 } }
        var input = Input(fd: fd)
        var session = MailStore.Session()
        guard perform(greeting, fd) else { return }
        while let (line, continued) = input.command(onLiteral: { _ = Self.write(fd, Array("+ go on\r\n".utf8)) }) {
            state.withLock { $0.log += continued }
            let words = Self.splitCommand(line)
            let request = Request(tag: words.tag, verb: words.verb, arguments: words.arguments, connection: connection, line: line)
            // A scripted SELECT selects too, so the default answers after it see the mailbox.
            if ["SELECT", "EXAMINE"].contains(request.verb) { session.selected = request.firstArgument }
            let replies = (script(request) ?? [.standard]).flatMap { reply -> [Reply] in
                if case .standard = reply { return store.answer(request, &session) }
                return [reply]
            }
            guard perform(replies, fd) else { return }
        }
    }

    /// Sends replies in order; false once the connection is to end.
    private func perform(_ replies: [Reply], _ fd: Int32) -> Bool {
        for reply in replies {
            switch reply {
            case .send(let bytes): if !Self.write(fd, bytes) { return false }
            case .close: shutdown(fd, Int32(SHUT_RDWR)); return false
            case .standard: continue  // expanded in `serve`
            case .stall:
                var b: UInt8 = 0
                while read(fd, &b, 0) >= 0 && !state.withLock({ $0.stopped }) { usleep(20_000) }
                return false
            }
        }
        return true
    }

    static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; return false }
            offset += n
        }
        return true
    }

    /// Reads commands: a line, and for each literal `{n}`/`{n+}` ending it, `n` more bytes and the line after.
    private struct Input {
        let fd: Int32
        var pending: [UInt8] = []

        /// The command with literals inlined, and the raw bytes it came in; nil at end of stream.
        mutating func command(onLiteral: () -> Void) -> ([UInt8], [UInt8])? {
            var command: [UInt8] = [], raw: [UInt8] = []
            while true {
                guard let line = readLine() else { return nil }
                raw += line
                var body = Array(line.dropLast(line.last == UInt8(ascii: "\n") ? (line.dropLast().last == UInt8(ascii: "\r") ? 2 : 1) : 0))
                guard body.last == UInt8(ascii: "}"), let open = body.lastIndex(of: UInt8(ascii: "{")) else {
                    return (command + body, raw)
                }
                var digits = body[(open + 1)..<(body.count - 1)]
                let synchronising = digits.last != UInt8(ascii: "+")
                if !synchronising { digits = digits.dropLast() }
                guard let size = Int(String(decoding: digits, as: UTF8.self)) else { return (command + body, raw) }
                body.removeSubrange(open...)
                if synchronising { onLiteral() }
                guard let literal = readBytes(size) else { return nil }
                raw += literal
                // Inlined as a quoted string, so `tokens` still sees one argument.
                command +=
                    body + [UInt8(ascii: "\"")]
                    + literal.flatMap { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") ? [UInt8(ascii: "\\"), $0] : [$0] } + [
                        UInt8(ascii: "\"")
                    ]
            }
        }

        mutating func readLine() -> [UInt8]? {
            while true {
                if let lf = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    defer { pending.removeSubrange(...lf) }
                    return Array(pending[...lf])
                }
                guard fill() else { return nil }
            }
        }

        mutating func readBytes(_ n: Int) -> [UInt8]? {
            while pending.count < n { guard fill() else { return nil } }
            defer { pending.removeSubrange(..<n) }
            return Array(pending[..<n])
        }

        mutating func fill() -> Bool {
            var buffer = [UInt8](repeating: 0, count: 65536)
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { return false }
            pending += buffer[..<n]
            return true
        }
    }

    static func splitCommand(_ line: [UInt8]) -> (tag: String, verb: String, arguments: [UInt8]) {
        var rest = line[...]
        func word() -> String {
            let w = rest.prefix { $0 != UInt8(ascii: " ") }
            rest = rest.dropFirst(w.count).drop { $0 == UInt8(ascii: " ") }
            return String(decoding: w, as: UTF8.self)
        }
        let tag = word()
        var verb = word().uppercased()
        if verb == "UID" { verb += " " + word().uppercased() }
        return (tag, verb, Array(rest))
    }

    /// Arguments split into atoms, quoted strings (unquoted) and parenthesised lists (kept whole).
    static func tokens(_ bytes: [UInt8]) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: " ") { i += 1; continue }
            var token: [UInt8] = []
            if bytes[i] == UInt8(ascii: "\"") {
                i += 1
                while i < bytes.count && bytes[i] != UInt8(ascii: "\"") {
                    if bytes[i] == UInt8(ascii: "\\") && i + 1 < bytes.count { i += 1 }
                    token.append(bytes[i])
                    i += 1
                }
                i += 1
            } else if bytes[i] == UInt8(ascii: "(") {
                var depth = 0
                repeat {
                    if bytes[i] == UInt8(ascii: "(") { depth += 1 }
                    if bytes[i] == UInt8(ascii: ")") { depth -= 1 }
                    token.append(bytes[i])
                    i += 1
                } while i < bytes.count && depth > 0
            } else {
                while i < bytes.count && bytes[i] != UInt8(ascii: " ") { token.append(bytes[i]); i += 1 }
            }
            out.append(token)
        }
        return out
    }
}
