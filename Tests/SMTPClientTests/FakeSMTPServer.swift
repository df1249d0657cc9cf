import MoTestSupport
import Foundation
import Synchronization

/// A scripted one-connection SMTP server on 127.0.0.1, for behaviour a real server will not show (no
/// STARTTLS, a tiny SIZE, replies injected after STARTTLS, a connection dropped after the final dot).
///
/// `respond` gets each command line (without CRLF) and returns the raw reply bytes to send, or nil to close
/// the connection. After a reply starting with 354 the message is read up to its final dot and `respond`
/// is called with "<DATA n bytes>".
final class FakeSMTPServer: Sendable {
    let port: Int
    private let listenFD: Int32
    private let received = Mutex<[String]>([])
    private let done = Mutex<Bool>(false)

    /// Every command line received, in order.
    var commands: [String] { received.withLock { $0 } }

    init(greeting: String = "220 fake.mo.test ESMTP\r\n", respond: @escaping @Sendable (String) -> String?) throws {
        let (fd, port) = try listenOnLoopback(backlog: 1)
        listenFD = fd
        self.port = port
        Thread.detachNewThread { [self] in serve(greeting: greeting, respond: respond) }
    }

    func stop() {
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
    }

    private func serve(greeting: String, respond: @Sendable (String) -> String?) {
        let conn = accept(listenFD, nil, nil)
        guard conn >= 0 else { return }
        defer { close(conn) }
        func send(_ text: String) { _ = text.withCString { Glibc.send(conn, $0, strlen($0), Int32(MSG_NOSIGNAL)) } }
        send(greeting)
        var buffer: [UInt8] = []
        var inData = false
        var dataBytes = 0
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            // Take complete lines out of the buffer.
            while let lf = buffer.firstIndex(of: 10) {
                var line = Array(buffer[..<lf])
                buffer.removeFirst(lf + 1)
                if line.last == 13 { line.removeLast() }
                if inData {
                    if line == [UInt8(ascii: ".")] {
                        inData = false
                        guard let reply = respond("<DATA \(dataBytes) bytes>") else { return }
                        send(reply)
                    } else {
                        dataBytes += line.count + 2
                    }
                    continue
                }
                let text = String(decoding: line, as: UTF8.self)
                received.withLock { $0.append(text) }
                guard let reply = respond(text) else { return }
                send(reply)
                if reply.hasPrefix("354") { inData = true; dataBytes = 0 }
            }
            let n = chunk.withUnsafeMutableBytes { recv(conn, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return }
            buffer.append(contentsOf: chunk[0..<n])
        }
    }
}

/// Replies of a plain, well-behaved server, for scripts that change only a step or two.
func standardReply(_ line: String, ehlo: String = "250-fake.mo.test\r\n250-8BITMIME\r\n250 SIZE 0\r\n") -> String? {
    let upper = line.uppercased()
    if upper.hasPrefix("EHLO") { return ehlo }
    if upper.hasPrefix("HELO") { return "250 fake.mo.test\r\n" }
    if upper.hasPrefix("MAIL") { return "250 2.1.0 Ok\r\n" }
    if upper.hasPrefix("RCPT") { return "250 2.1.5 Ok\r\n" }
    if upper == "DATA" { return "354 End data with <CR><LF>.<CR><LF>\r\n" }
    if upper.hasPrefix("<DATA") { return "250 2.0.0 Ok: queued as FAKE\r\n" }
    if upper == "RSET" { return "250 2.0.0 Ok\r\n" }
    if upper == "QUIT" { return "221 2.0.0 Bye\r\n" }
    return "502 5.5.2 Error: command not recognized\r\n"
}
