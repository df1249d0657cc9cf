#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A private Postfix started by `scripts/test-smtp-server`, with the values it wrote to its env file.
/// Everything it accepts for `@mo.test` lands in one Maildir (`maildir`).
public final class SMTPTestServer: Sendable {
    public let directory: String
    public let env: [String: String]

    public var host: String { env["MO_TEST_SMTP_HOST"]! }
    /// STARTTLS + AUTH (AUTH only with a Dovecot for SASL).
    public var submissionPort: Int { Int(env["MO_TEST_SMTP_PORT"]!)! }
    public var smtpsPort: Int { Int(env["MO_TEST_SMTPS_PORT"]!)! }
    /// No TLS, no AUTH: loopback clients may send (`tls = "none"`).
    public var plainPort: Int { Int(env["MO_TEST_SMTP_PLAIN_PORT"]!)! }
    public var caFile: String { env["MO_TEST_SMTP_CA"]! }
    public var wrongCAFile: String { env["MO_TEST_SMTP_WRONG_CA"]! }
    public var user: String { env["MO_TEST_SMTP_USER"]! }
    public var password: String { env["MO_TEST_SMTP_PASSWORD"]! }
    public var maildir: String { env["MO_TEST_SMTP_MAILDIR"]! }
    public var rejectAddress: String { env["MO_TEST_SMTP_REJECT"]! }

    private init(directory: String, env: [String: String]) {
        self.directory = directory
        self.env = env
    }

    /// Starts a new instance in a new temporary directory; `dovecotEnv` (a `TestServer`'s env file) gives it SASL.
    public static func start(dovecotEnv: String? = nil) throws -> SMTPTestServer {
        let dir = try TemporaryDirectory("mo-postfix")
        let result = try ChildProcess.run(
            [TestPaths.projectRoot + "/scripts/test-smtp-server", "start", dir.path]
                + (dovecotEnv.map { ["--dovecot-env", $0] } ?? []))
        guard result.status == 0 else {
            dir.remove()
            throw GenericError(.software, "scripts/test-smtp-server start failed (\(result.status)): \(result.stderrString)")
        }
        return SMTPTestServer(directory: dir.path, env: parseEnvLines(result.stdoutString))
    }

    /// Stops Postfix, keeping its directory: an outage, ended by `restart()`.
    public func stop() {
        _ = try? ChildProcess.run([TestPaths.projectRoot + "/scripts/test-smtp-server", "stop", directory])
    }

    /// Starts the stopped instance again, on the same ports, with the mail it had.
    public func restart() throws {
        let result = try ChildProcess.run([TestPaths.projectRoot + "/scripts/test-smtp-server", "restart", directory])
        guard result.status == 0 else {
            throw GenericError(.software, "scripts/test-smtp-server restart failed (\(result.status)): \(result.stderrString)")
        }
    }

    /// Stops Postfix and removes its directory.
    public func remove() {
        stop()
        TemporaryDirectory.removeTree(directory)
    }

    /// Delivered messages whose first 4 KB contain `token`.
    public func delivered(_ token: String) -> [[UInt8]] {
        var out: [[UInt8]] = []
        for sub in ["/new", "/cur"] {
            let dir = maildir + sub
            for name in ((try? directoryNames(dir).get()) ?? []).sorted() {
                guard case .success(let bytes) = readWholeFile(dir + "/" + name) else { continue }
                if String(decoding: bytes.prefix(4096), as: UTF8.self).contains(token) { out.append(bytes) }
            }
        }
        return out
    }

    /// Waits until `count` messages with `token` arrived (Postfix delivers asynchronously), then `settle`
    /// seconds more so a duplicate would show; returns what is there (fewer after `timeout`).
    public func waitDelivered(_ token: String, count: Int, timeout: Double = 30, settle: Double = 0) -> [[UInt8]] {
        var waited = 0.0
        while delivered(token).count < count && waited < timeout {
            usleep(100_000)
            waited += 0.1
        }
        if settle > 0 { usleep(UInt32(settle * 1_000_000)) }
        return delivered(token)
    }
}

/// A private Dovecot (IMAP, and SASL for Postfix) and a private Postfix that authenticates through it:
/// what mo-sendmail needs to send and to store Sent copies.
public final class SubmissionServers: Sendable {
    public let dovecot: TestServer
    public let postfix: SMTPTestServer

    public var host: String { postfix.host }
    public var submissionPort: Int { postfix.submissionPort }
    public var smtpsPort: Int { postfix.smtpsPort }
    public var plainPort: Int { postfix.plainPort }
    public var caFile: String { postfix.caFile }
    public var wrongCAFile: String { postfix.wrongCAFile }
    public var user: String { postfix.user }
    public var password: String { postfix.password }
    public var maildir: String { postfix.maildir }
    public var rejectAddress: String { postfix.rejectAddress }
    public var imapPort: Int { dovecot.imapPort }

    private init(dovecot: TestServer, postfix: SMTPTestServer) {
        self.dovecot = dovecot
        self.postfix = postfix
    }

    /// Dovecot (with `seed`, login `user` and OAuth2 `introspection`, see `TestServer.start`), then Postfix
    /// checking passwords (or tokens) through it.
    public static func start(seed: [String] = [], user: String? = nil, introspection: String? = nil) throws -> SubmissionServers {
        let dovecot = try TestServer.start(seed: seed, user: user, introspection: introspection)
        do {
            return SubmissionServers(dovecot: dovecot, postfix: try SMTPTestServer.start(dovecotEnv: dovecot.directory + "/env"))
        } catch {
            dovecot.stop()
            throw error
        }
    }

    public func stop() {
        postfix.remove()
        dovecot.stop()
    }
}

/// `KEY=VALUE` lines, as the test-server scripts print them.
func parseEnvLines(_ text: String) -> [String: String] {
    var env: [String: String] = [:]
    for line in text.split(separator: "\n") {
        guard let eq = line.firstIndex(of: "=") else { continue }
        env[String(line[..<eq])] = String(line[line.index(after: eq)...])
    }
    return env
}
