import Foundation
import MoCore
import MoTestSupport
@testable import SMTPClient

/// The private Dovecot (for SASL) and the private Postfix from scripts/test-smtp-server, started together.
final class SMTPTestServers: Sendable {
    let dovecot: TestServer
    let directory: String
    let env: [String: String]

    var host: String { env["MO_TEST_SMTP_HOST"]! }
    var submissionPort: Int { Int(env["MO_TEST_SMTP_PORT"]!)! }
    var smtpsPort: Int { Int(env["MO_TEST_SMTPS_PORT"]!)! }
    var plainPort: Int { Int(env["MO_TEST_SMTP_PLAIN_PORT"]!)! }
    var caFile: String { env["MO_TEST_SMTP_CA"]! }
    var wrongCAFile: String { env["MO_TEST_SMTP_WRONG_CA"]! }
    var user: String { env["MO_TEST_SMTP_USER"]! }
    var password: String { env["MO_TEST_SMTP_PASSWORD"]! }
    var maildir: String { env["MO_TEST_SMTP_MAILDIR"]! }
    var rejectAddress: String { env["MO_TEST_SMTP_REJECT"]! }

    private init(dovecot: TestServer, directory: String, env: [String: String]) {
        self.dovecot = dovecot
        self.directory = directory
        self.env = env
    }

    static func start() throws -> SMTPTestServers {
        let dovecot = try TestServer.start()
        do {
            let dir = try TemporaryDirectory("mo-postfix")
            let result = try ChildProcess.run([TestPaths.projectRoot + "/scripts/test-smtp-server", "start", dir.path,
                                               "--dovecot-env", dovecot.directory + "/env"])
            guard result.status == 0 else {
                dir.remove()
                throw GenericError(.software, "scripts/test-smtp-server start failed (\(result.status)): \(result.stderrString)")
            }
            var env: [String: String] = [:]
            for line in result.stdoutString.split(separator: "\n") {
                guard let eq = line.firstIndex(of: "=") else { continue }
                env[String(line[..<eq])] = String(line[line.index(after: eq)...])
            }
            return SMTPTestServers(dovecot: dovecot, directory: dir.path, env: env)
        } catch {
            dovecot.stop()
            throw error
        }
    }

    func stop() {
        _ = try? ChildProcess.run([TestPaths.projectRoot + "/scripts/test-smtp-server", "stop", directory])
        _ = try? ChildProcess.run(["rm", "-rf", directory])
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
