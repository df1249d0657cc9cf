#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// Asks one DNS server for SRV records over UDP. The server is `MO_DNS_SERVER` (`HOST` or `HOST:PORT`,
/// `[v6]:PORT`; for tests) or the first `nameserver` of /etc/resolv.conf.
///
/// Only the awaited answer counts: the socket is connected (the kernel drops datagrams from any other
/// address), and an answer with another ID is ignored while the wait goes on.
public struct DNSResolver: Sendable {
    public var host: String
    public var port: Int
    /// Seconds to wait for each of `attempts` tries.
    public var timeout: Double = 2
    public var attempts = 2

    public init(host: String, port: Int = 53) {
        self.host = host
        self.port = port
    }

    /// The resolver of this system, or the one `MO_DNS_SERVER` names.
    public static func system(environment: [String: String]) -> DNSResolver {
        if let spec = environment["MO_DNS_SERVER"], !spec.isEmpty, let (host, port) = parseServer(spec) {
            return DNSResolver(host: host, port: port)
        }
        var text = ""
        if case .success(let bytes) = readWholeFile("/etc/resolv.conf") { text = String(decoding: bytes, as: UTF8.self) }
        return DNSResolver(host: nameservers(resolvConf: text).first ?? "127.0.0.1")
    }

    /// `nameserver` addresses of a resolv.conf, in order (a zone index such as `%eth0` dropped).
    static func nameservers(resolvConf text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, words[0] == "nameserver" else { return nil }
            return String(words[1].split(separator: "%").first ?? words[1])
        }
    }

    /// `1.2.3.4`, `1.2.3.4:5353`, `::1`, `[::1]:5353`.
    static func parseServer(_ spec: String) -> (String, Int)? {
        if spec.hasPrefix("["), let close = spec.firstIndex(of: "]") {
            let host = String(spec[spec.index(after: spec.startIndex)..<close])
            let rest = spec[spec.index(after: close)...]
            if rest.isEmpty { return (host, 53) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = spec.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let port = Int(parts[1]), (1...65535).contains(port) else { return nil }
            return (String(parts[0]), port)
        }
        return (spec, 53)
    }

    /// The SRV records of `name` ([] when there are none).
    public func srv(_ name: String) throws(DNSError) -> [SRVRecord] {
        let id = UInt16.random(in: 0...UInt16.max)
        let query = try DNSMessage.query(id: id, name: name, type: DNSMessage.typeSRV)
        let fd = try openSocket(name)
        defer { close(fd) }
        var lastError = DNSError(.network, name: name, "no answer from \(host):\(port)")
        for _ in 0..<attempts {
            let sent = query.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent == query.count else {
                throw DNSError(.network, name: name, "cannot send to \(host):\(port): \(errnoDescription(errno))")
            }
            do {
                if let answer = try receive(fd, id: id, name: name) { return answer }
            } catch {
                // A malformed datagram may be a stray one; the real answer may follow. Keep the reason.
                lastError = error
                if error.code != .malformed { throw error }
            }
        }
        throw lastError
    }

    /// Waits up to `timeout` for the answer to `id`; nil when none came.
    private func receive(_ fd: Int32, id: UInt16, name: String) throws(DNSError) -> [SRVRecord]? {
        let deadline = monotonicSeconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let left = deadline - monotonicSeconds()
            if left <= 0 { return nil }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let rc = poll(&pfd, 1, Int32(left * 1000) + 1)
            if rc < 0 && errno == EINTR { continue }
            if rc <= 0 { if rc == 0 { return nil }; throw DNSError(.network, name: name, errnoDescription(errno)) }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                // ECONNREFUSED: an ICMP port unreachable, nothing listens there.
                throw DNSError(.network, name: name, "\(host):\(port): \(errnoDescription(errno))")
            }
            let message = Array(buffer[0..<n])
            // Another ID is a late answer to an earlier try or a forgery: not ours, keep waiting.
            guard n >= 2, UInt16(message[0]) << 8 | UInt16(message[1]) == id else { continue }
            return try DNSMessage.parseSRVAnswer(message, id: id, name: name)
        }
    }

    private func openSocket(_ name: String) throws(DNSError) -> Int32 {
        var v4 = sockaddr_in(), v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = UInt16(port).bigEndian
        } else if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = UInt16(port).bigEndian
        } else {
            throw DNSError(.network, name: name, "the DNS server \(host) is not an IP address")
        }
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw DNSError(.network, name: name, "socket: \(errnoDescription(errno))") }
        let rc: Int32 =
            family == AF_INET
            ? withUnsafePointer(to: &v4) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            : withUnsafePointer(to: &v6) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw DNSError(.network, name: name, "cannot reach \(host):\(port): \(errnoDescription(e))")
        }
        return fd
    }
}
