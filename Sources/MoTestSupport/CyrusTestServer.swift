#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import Synchronization

/// A private Cyrus IMAP 3.6 with JMAP started by `scripts/test-cyrus`, with the values of its env file.
/// One per test process (`shared()`), as for Dovecot: started on first use, stopped when the process exits.
public final class CyrusTestServer: Sendable {
    public let directory: String
    public let env: [String: String]

    /// The JMAP session URL (plain http on 127.0.0.1).
    public var sessionURL: String { env["MO_TEST_JMAP_URL"]! }
    public var httpPort: Int { Int(env["MO_TEST_JMAP_PORT"]!)! }
    public var imapPort: Int { Int(env["MO_TEST_CYRUS_IMAP_PORT"]!)! }
    public var user: String { env["MO_TEST_USER"]! }
    public var password: String { env["MO_TEST_PASSWORD"]! }

    /// Whether Cyrus with JMAP is installed (cyrus-common, cyrus-caldav, sasl2-bin). CI installs it
    /// (.ci/run sets MO_CI): there its absence is a failure, elsewhere the tests that need it are skipped.
    public static let usable =
        (access("/usr/lib/cyrus/bin/master", X_OK) == 0 && access("/usr/lib/cyrus/bin/httpd", X_OK) == 0) || getenv("MO_CI") != nil

    private init(directory: String, env: [String: String]) {
        self.directory = directory
        self.env = env
    }

    /// Starts a new instance in a new temporary directory, with a user `user`; `blobGet` offers `Blob/get`
    /// (Cyrus's nonstandard extensions); `smtp` (`HOST:PORT`) is where it relays what `EmailSubmission` sends.
    public static func start(user: String? = nil, blobGet: Bool = false, smtp: String? = nil) throws -> CyrusTestServer {
        let dir = try TemporaryDirectory("mo-cyrus")
        var argv = [TestPaths.projectRoot + "/scripts/test-cyrus", "start", dir.path]
        if let user { argv += ["--user", user] }
        if blobGet { argv.append("--blob-get") }
        if let smtp { argv += ["--smtp", smtp] }
        let result = try ChildProcess.run(argv)
        guard result.status == 0 else {
            throw GenericError(.software, "scripts/test-cyrus start failed (\(result.status)): \(result.stderrString)")
        }
        return CyrusTestServer(directory: dir.path, env: parseEnvLines(result.stdoutString))
    }

    /// Stops the instance and removes its directory (kept with MO_KEEP_TEST_SERVERS=1).
    public func stop() {
        _ = try? ChildProcess.run([TestPaths.projectRoot + "/scripts/test-cyrus", "stop", directory])
        if getenv("MO_KEEP_TEST_SERVERS") == nil { TemporaryDirectory.removeTree(directory) }
    }

    /// Stops the instance, keeping its directory: an outage, ended by `restart()`.
    public func halt() {
        _ = try? ChildProcess.run([TestPaths.projectRoot + "/scripts/test-cyrus", "stop", directory])
    }

    /// Starts the halted instance again, on the same ports, with the mail it had.
    public func restart() throws {
        let result = try ChildProcess.run([TestPaths.projectRoot + "/scripts/test-cyrus", "restart", directory])
        guard result.status == 0 else {
            throw GenericError(.software, "scripts/test-cyrus restart failed (\(result.status)): \(result.stderrString)")
        }
    }

    private static let sharedInstance = Mutex<CyrusTestServer?>(nil)

    public static func shared() throws -> CyrusTestServer {
        try sharedInstance.withLock { slot in
            if let s = slot { return s }
            let s = try CyrusTestServer.start()
            slot = s
            atexit {
                CyrusTestServer.sharedInstance.withLock {
                    $0?.stop(); $0 = nil
                }
            }
            return s
        }
    }
}
