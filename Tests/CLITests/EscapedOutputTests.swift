#if canImport(Glibc)
import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

/// A server's text reaches the terminal escaped (issue #14): mo-sync against a scripted server whose NO to
/// SELECT carries ESC[2J and an OSC title string.
struct EscapedOutputTests {
    /// Accepts one connection and answers line by line: PREAUTH, one INBOX in LIST, NO with escapes to SELECT.
    final class HostileServer: @unchecked Sendable {
        let port: Int
        private let listener: Int32
        private var thread = pthread_t()

        init() throws {
            (listener, port) = try listenOnLoopback()
            pthread_create(&thread, nil, { raw in
                Unmanaged<HostileServer>.fromOpaque(raw!).takeUnretainedValue().serve()
                return nil
            }, Unmanaged.passUnretained(self).toOpaque())
        }

        private func serve() {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            func send(_ s: String) { _ = Array(s.utf8).withUnsafeBytes { write(client, $0.baseAddress, $0.count) } }
            send("* PREAUTH [CAPABILITY IMAP4rev1] hostile\r\n")
            var pending: [UInt8] = [], buf = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(client, &buf, buf.count)
                if n <= 0 { return }
                pending += buf[0..<n]
                while let lf = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[..<lf], as: UTF8.self)
                    pending.removeSubrange(...lf)
                    let tag = line.prefix { $0 != " " }
                    let verb = line.split(separator: " ").dropFirst().first?.uppercased() ?? ""
                    switch verb {
                    case "LIST": send("* LIST () \"/\" INBOX\r\n\(tag) OK done\r\n")
                    case "SELECT", "EXAMINE": send("\(tag) NO \u{1B}[2J\u{1B}]0;pwned\u{7}mailbox gone\r\n")
                    case "LOGOUT": send("* BYE bye\r\n\(tag) OK done\r\n"); return
                    default: send("\(tag) OK done\r\n")
                    }
                }
            }
        }

        func stop() {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
            pthread_join(thread, nil)
        }
    }

    @Test func imapRefusalTextIsPrintedEscaped() throws {
        let server = try HostileServer()
        defer { server.stop() }
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.path + "/config.toml"
        try write(file, """
            [general]
            state-dir = "\(dir.path)/state"
            [account.t]
            address = "me@example.com"
            maildir = "\(dir.path)/Mail"
            [account.t.imap]
            host = "127.0.0.1"
            port = \(server.port)
            tls = "none"
            user = "u"
            password-command = "echo x"
            """)
        let r = try CLITests.run("mo-sync", ["--config", file])
        #expect(r.status != 0)
        #expect(!r.stderr.contains(0x1B) && !r.stderr.contains(0x07), "raw escapes reached the terminal: \(r.stderrString)")
        #expect(r.stderrString.contains("refused: \\u{1B}[2J\\u{1B}]0;pwned\\u{7}mailbox gone"), "\(r.stderrString)")
    }
}
