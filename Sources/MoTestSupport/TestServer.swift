#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A private Dovecot started by `scripts/test-server`, with the values it wrote to its env file.
public final class TestServer: Sendable {
    public let directory: String
    public let env: [String: String]

    public var host: String { env["MO_TEST_IMAP_HOST"]! }
    public var imapPort: Int { Int(env["MO_TEST_IMAP_PORT"]!)! }
    public var imapsPort: Int { Int(env["MO_TEST_IMAPS_PORT"]!)! }
    public var caFile: String { env["MO_TEST_CA"]! }
    public var wrongCAFile: String { env["MO_TEST_WRONG_CA"]! }
    public var user: String { env["MO_TEST_USER"]! }
    public var password: String { env["MO_TEST_PASSWORD"]! }
    /// The server's own Maildir for the test user (Dovecot LAYOUT=fs, delimiter "/").
    public var maildir: String { env["MO_TEST_MAILDIR"]! }

    /// Gmail's post-login CAPABILITY as it announces it (CONDSTORE and ESEARCH, no QRESYNC), less what
    /// Dovecot does not implement (X-GM-EXT-1, XLIST, QUOTA, COMPRESS=DEFLATE, UTF8=ACCEPT, APPENDLIMIT).
    /// Source: Gmail's IMAP extensions page
    /// (developers.google.com/gmail/imap/imap-extensions) and its CAPABILITY answer.
    public static let gmailCapabilities =
        "IMAP4rev1 UNSELECT IDLE NAMESPACE ID CHILDREN UIDPLUS ENABLE MOVE CONDSTORE ESEARCH LIST-EXTENDED LIST-STATUS LITERAL- SPECIAL-USE"

    private init(directory: String, env: [String: String]) {
        self.directory = directory
        self.env = env
    }

    /// Starts a new instance in a new temporary directory. `seed` Maildir trees are copied in first;
    /// `listIndex` turns on Dovecot's mailbox list index, which makes it offer NOTIFY; `user` is the login
    /// name (default "mo"; an address for a configuration that logs in as its address).
    /// `introspection`: an RFC 7662 endpoint Dovecot's oauth2 passdb checks XOAUTH2 and OAUTHBEARER tokens at.
    /// `capabilities`: the CAPABILITY announced after login instead of Dovecot's (`gmailCapabilities`).
    public static func start(
        seed: [String] = [], listIndex: Bool = false, user: String? = nil, introspection: String? = nil,
        capabilities: String? = nil
    ) throws -> TestServer {
        let dir = try TemporaryDirectory("mo-dovecot")
        var argv = [TestPaths.projectRoot + "/scripts/test-server", "start", dir.path]
        for s in seed { argv += ["--seed", s] }
        if let user { argv += ["--user", user] }
        if listIndex { argv.append("--list-index") }
        if let introspection { argv += ["--oauth2-introspection", introspection] }
        if let capabilities { argv += ["--capabilities", capabilities] }
        let result = try ChildProcess.run(argv)
        guard result.status == 0 else {
            throw GenericError(.software, "scripts/test-server start failed (\(result.status)): \(result.stderrString)")
        }
        return TestServer(directory: dir.path, env: parseEnvLines(result.stdoutString))
    }

    /// Stops the instance and starts it again on the same ports with the same mail (a server restart as
    /// clients see it: their connections end).
    public func restart() throws {
        let result = try ChildProcess.run([TestPaths.projectRoot + "/scripts/test-server", "restart", directory])
        guard result.status == 0 else {
            throw GenericError(.software, "scripts/test-server restart failed (\(result.status)): \(result.stderrString)")
        }
    }

    /// Stops the instance by PID and removes its directory.
    public func stop() {
        _ = try? ChildProcess.run([TestPaths.projectRoot + "/scripts/test-server", "stop", directory])
        // MO_KEEP_TEST_SERVERS=1 keeps the directory (config, logs, mail) for a look after a failure.
        if getenv("MO_KEEP_TEST_SERVERS") == nil { TemporaryDirectory.removeTree(directory) }
    }
}

extension TemporaryDirectory {
    static func removeTree(_ path: String) {
        _ = try? ChildProcess.run(["rm", "-rf", path])
    }
}

import Synchronization

/// One Dovecot per test process, for the many tests that need a server but no isolation: started on first
/// use, stopped when the process exits.
extension TestServer {
    private static let sharedInstance = Mutex<TestServer?>(nil)

    public static func shared() throws -> TestServer {
        try sharedInstance.withLock { slot in
            if let s = slot { return s }
            let s = try TestServer.start()
            slot = s
            atexit {
                TestServer.sharedInstance.withLock {
                    $0?.stop(); $0 = nil
                }
            }
            return s
        }
    }
}
