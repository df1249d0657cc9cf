import Foundation
import MoCore
import MoTestSupport
@testable import SMTPClient

/// The private Dovecot (for SASL) and the private Postfix from scripts/test-smtp-server, started together.
typealias SMTPTestServers = SubmissionServers

extension SubmissionServers {
    /// Settings for the submission port (STARTTLS + AUTH) unless told otherwise.
    func settings(
        security: TLSMode = .starttls, port: Int? = nil, password: String? = nil,
        authMethod: AuthMethod = .auto, caFile: String? = nil,
        trace: SMTPTrace? = nil
    ) -> SMTPSettings {
        let defaultPort =
            switch security {
            case .starttls: submissionPort
            case .implicit: smtpsPort
            case .none: plainPort
            }
        return SMTPSettings(
            host: host, port: port ?? defaultPort, security: security,
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
