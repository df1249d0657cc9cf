#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import Synchronization

/// The tests' own JMAP push endpoint (RFC 8620 §7.3), for a server without push (Debian's Cyrus answers
/// its EventSource with 204): plain HTTP/1.1 on 127.0.0.1 serving
/// - `GET /session`: the session resource the test hands in (Cyrus's, its URLs made absolute, its
///   `eventSourceUrl` pointing here: `eventSourceURL`);
/// - `GET /events?...`: `200` and `text/event-stream`, the connection kept open; `push` writes a
///   `StateChange` to every open stream, `ping`, a ping event; or `204` while `offersPush` is false.
/// `dropStreams()` closes the open streams (a server restart, a dead path). Each connection on a thread;
/// `stop()` ends them all.
public final class PushTestServer: @unchecked Sendable {
    public let port: Int
    private let listener: Int32
    private let state = Mutex<
        (session: [UInt8], streams: [Int32], all: [Int32], threads: [ThreadHandle], targets: [String], stopped: Bool, offersPush: Bool)
    >(
        ([], [], [], [], [], false, true))

    public init() throws {
        (listener, port) = try listenOnLoopback()
        nonisolated(unsafe) let unretained = Unmanaged.passUnretained(self)
        let t = startThread { unretained.takeUnretainedValue().acceptLoop() }
        state.withLock { $0.threads.append(t) }
    }

    public var sessionURL: String { "http://127.0.0.1:\(port)/session" }
    /// The `eventSourceUrl` template to put in the session.
    public var eventSourceURL: String { "http://127.0.0.1:\(port)/events?types={types}&closeafter={closeafter}&ping={ping}" }

    /// The bytes `GET /session` answers.
    public func serve(session: [UInt8]) { state.withLock { $0.session = session } }
    /// False: the event source answers 204 (a server without push).
    public func offer(push: Bool) { state.withLock { $0.offersPush = push } }
    /// The request targets of every event-stream GET, in order.
    public var streamTargets: [String] { state.withLock { $0.targets } }
    /// Event streams open now.
    public var openStreams: Int { state.withLock { $0.streams.count } }

    /// A `StateChange` for `account`: `{"@type":"StateChange","changed":{account:{type:state}}}`.
    public func push(account: String, _ states: [String: String]) {
        let inner = states.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",")
        send("event: state\r\ndata: {\"@type\":\"StateChange\",\r\ndata: \"changed\":{\"\(account)\":{\(inner)}}}\r\n\r\n")
    }

    public func ping() { send(": keep\nevent: ping\ndata: {\"interval\":1}\n\n") }

    /// Closes every open stream (the client should come back).
    public func dropStreams() {
        let fds = state.withLock { s in
            defer { s.streams = [] }
            return s.streams
        }
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    public func stop() {
        let threads: [ThreadHandle]? = state.withLock { s in
            if s.stopped { return nil }
            s.stopped = true
            for fd in s.all { shutdown(fd, Int32(SHUT_RDWR)) }
            return s.threads
        }
        guard let threads else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for t in threads { t.join() }
        state.withLock { s in for fd in s.all { close(fd) } }
    }

    private func send(_ text: String) {
        let fds = state.withLock { $0.streams }
        for fd in fds { _ = write(fd, Array(text.utf8)) }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            done += n
        }
        return true
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { return }
            guard
                state.withLock({ s in
                    s.stopped
                        ? false
                        : {
                            s.all.append(fd); return true
                        }()
                })
            else { close(fd); return }
            let t = startThread { [self] in serve(fd) }
            state.withLock { $0.threads.append(t) }
        }
    }

    /// Answers requests on one connection until it closes; an event stream keeps it.
    private func serve(_ fd: Int32) {
        var input: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            guard let end = input.firstRange(of: Array("\r\n\r\n".utf8)) else {
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 { return }
                input += buffer[0..<n]
                continue
            }
            let head = String(decoding: input[..<end.lowerBound], as: UTF8.self)
            input.removeSubrange(..<end.upperBound)
            let target = head.split(separator: " ").dropFirst().first.map(String.init) ?? ""
            if target == "/session" {
                let body = state.withLock { $0.session }
                guard
                    write(
                        fd, Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
                else { return }
            } else if target.hasPrefix("/events") {
                let offers = state.withLock { s in
                    s.targets.append(target)
                    return s.offersPush
                }
                guard offers else {
                    guard write(fd, Array("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n".utf8)) else { return }
                    continue
                }
                guard
                    write(
                        fd,
                        Array(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"
                                .utf8))
                else { return }
                state.withLock { $0.streams.append(fd) }
                // Held open: events are written by `push` and `ping`; nothing more is read.
                while read(fd, &buffer, buffer.count) > 0 {}
                state.withLock { $0.streams.removeAll { $0 == fd } }
                return
            } else {
                guard write(fd, Array("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".utf8)) else { return }
            }
        }
    }
}
