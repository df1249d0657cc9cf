import Foundation
import MoCore
import MoTestSupport
@testable import SMTPClient

/// The private Dovecot (for SASL) and the private Postfix from scripts/test-smtp-server, started together.
final class SMTPTestServers: Sendable {
    let dovecot: TestServer
    let postfix: SMTPTestServer

    var host: String { postfix.host }
    var submissionPort: Int { postfix.submissionPort }
    var smtpsPort: Int { postfix.smtpsPort }
    var plainPort: Int { postfix.plainPort }
    var caFile: String { postfix.caFile }
    var wrongCAFile: String { postfix.wrongCAFile }
    var user: String { postfix.user }
    var password: String { postfix.password }
    var maildir: String { postfix.maildir }
    var rejectAddress: String { postfix.rejectAddress }

    private init(dovecot: TestServer, postfix: SMTPTestServer) {
        self.dovecot = dovecot
        self.postfix = postfix
    }

    static func start() throws -> SMTPTestServers {
        let dovecot = try TestServer.start()
        do {
            return SMTPTestServers(dovecot: dovecot, postfix: try SMTPTestServer.start(dovecotEnv: dovecot.directory + "/env"))
        } catch {
            dovecot.stop()
            throw error
        }
    }

    func stop() {
        postfix.remove()
        dovecot.stop()
    }

    /// Settings for the submission port (STARTTLS + AUTH) unless told otherwise.
    func settings(security: SMTPSettings.Security = .startTLS, port: Int? = nil, password: String? = nil,
                  authMethod: SMTPSettings.AuthMethod = .auto, caFile: String? = nil,
                  trace: SMTPTrace? = nil) -> SMTPSettings {
        let defaultPort = switch security {
        case .startTLS: submissionPort
        case .implicitTLS: smtpsPort
        case .none: plainPort
        }
        return SMTPSettings(host: host, port: port ?? defaultPort, security: security,
                            user: security == .none ? nil : user,
                            secret: .value(password ?? self.password), authMethod: authMethod,
                            caFile: caFile ?? self.caFile, heloName: "client.mo.test",
                            timeouts: .init(connect: 10, command: 30, dataBlock: 30, dataFinal: 60), trace: trace)
    }

    /// The delivered messages, oldest first, once at least `count` are there (Postfix delivers asynchronously).
    func waitForMessages(count: Int, timeout: Double = 30) throws -> [[UInt8]] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: maildir + "/new")) ?? []).sorted()
            if files.count >= count {
                return try files.map { Array(try Data(contentsOf: URL(fileURLWithPath: maildir + "/new/" + $0))) }
            }
            if Date() > deadline {
                throw GenericError(.software, "only \(files.count) of \(count) messages delivered to \(maildir)")
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
    }
}

/// A port on 127.0.0.1 that nothing listens on.
func closedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = 0
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) }
    }
    _ = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
    }
    return Int(UInt16(bigEndian: addr.sin_port))
}
