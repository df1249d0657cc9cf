#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A private dnsmasq (Debian's dnsmasq-base) on 127.0.0.1 and a port of its own, answering the SRV records
/// given and nothing else: names under `localDomain` without a record get NXDOMAIN, any other is refused.
/// No config file, no /etc/hosts, no upstream server, no PID file.
public final class LocalDNS {
    public static let binary = "/usr/sbin/dnsmasq"
    public static var isInstalled: Bool { access(binary, X_OK) == 0 }

    public let port: Int
    private let process: BackgroundProcess

    public struct SRV {
        public var name: String, target: String, port: Int, priority: Int, weight: Int
        public init(_ name: String, _ target: String, _ port: Int, priority: Int = 0, weight: Int = 1) {
            self.name = name; self.target = target; self.port = port; self.priority = priority; self.weight = weight
        }
    }

    public init(srv: [SRV], localDomain: String) throws {
        port = freeUDPPort()
        var argv = [
            Self.binary, "--no-daemon", "--conf-file", "--pid-file", "--port=\(port)", "--listen-address=127.0.0.1",
            "--bind-interfaces", "--no-resolv", "--no-hosts", "--local=/\(localDomain)/"
        ]
        for r in srv { argv.append("--srv-host=\(r.name),\(r.target),\(r.port),\(r.priority),\(r.weight)") }
        process = try BackgroundProcess(argv)
        // Ready once it answers anything on its port.
        for _ in 0..<200 {
            if answersQuery(port: port) { return }
            var status: Int32 = 0
            if waitpid(process.pid, &status, WNOHANG) == process.pid {
                throw GenericError(.software, "dnsmasq exited at start (status \(status)): \(argv.joined(separator: " "))")
            }
        }
        stop()
        throw GenericError(.software, "dnsmasq did not answer on 127.0.0.1:\(port)")
    }

    public func stop() { process.kill() }
}

/// python3's http.server on 127.0.0.1, serving `directory` (for autoconfig files).
public final class LocalHTTP {
    public let port: Int
    private let process: BackgroundProcess

    public init(directory: String) throws {
        port = closedLoopbackPort()
        process = try startListener(
            ["python3", "-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", directory], port: port,
            name: "python3 -m http.server")
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public func stop() { process.kill() }
}

/// Whether a DNS server on 127.0.0.1:`port` answers a query (for "localhost", type A) within 50 ms.
func answersQuery(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    let query: [UInt8] = [0x00, 0x01, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 9] + Array("localhost".utf8) + [0, 0, 1, 0, 1]
    let sent = query.withUnsafeBytes { q in
        withLoopbackAddress(port: port) { sendto(fd, q.baseAddress, q.count, 0, $0, $1) }
    }
    guard sent == query.count else { usleep(50_000); return false }
    var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&pfd, 1, 50) == 1
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
func acceptsConnection(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    defer { close(fd) }
    return withLoopbackAddress(port: port) { Glibc.connect(fd, $0, $1) == 0 }
}

/// `scripts/test-oauth2-server` on 127.0.0.1: a small OAuth2 authorization server (code with PKCE, refresh
/// with rotation, device grant, introspection), for the sign-in tests.
public final class LocalOAuth2Server {
    public let port: Int
    private let process: BackgroundProcess

    public init(lifetime: Int = 20) throws {
        port = closedLoopbackPort()
        process = try startListener(
            ["python3", TestPaths.projectRoot + "/scripts/test-oauth2-server", "--port", String(port), "--lifetime", String(lifetime)],
            port: port, name: "scripts/test-oauth2-server")
    }

    /// The issuer: also the base of every endpoint.
    public var issuer: String { "http://127.0.0.1:\(port)" }

    public func stop() { process.kill() }
}

/// Starts `argv`, a server that listens on 127.0.0.1:`port`, and waits (10 s at most) until it accepts.
func startListener(_ argv: [String], port: Int, name: String) throws -> BackgroundProcess {
    let process = try BackgroundProcess(argv)
    for _ in 0..<200 {
        if acceptsConnection(port: port) { return process }
        usleep(50_000)
    }
    process.kill()
    throw GenericError(.software, "\(name) did not listen on 127.0.0.1:\(port)")
}
