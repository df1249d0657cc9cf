#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A TCP listener on 127.0.0.1 with a port the kernel picks: the one thing mo serves, the OAuth2 loopback
/// redirect (RFC 8252 §7.3: the browser brings the authorization code back to it). Only 127.0.0.1, never
/// a wildcard address, so nothing off the machine can reach it.
public final class LoopbackListener {
    public let port: Int
    private var fd: Int32

    public init() throws(NetError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw NetError(.connect, host: "127.0.0.1", port: 0, detail: errnoDescription(errno)) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            let e = errno
            Glibc.close(fd)
            throw NetError(.connect, host: "127.0.0.1", port: 0, detail: "cannot listen: \(errnoDescription(e))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// The next connection, waiting at most `timeout` seconds; nil when none came.
    public func accept(timeout: Double) throws(NetError) -> Connection? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = monotonicSeconds() + timeout
        while true {
            let left = deadline - monotonicSeconds()
            guard left > 0 else { return nil }
            let rc = poll(&p, 1, Int32(min(left, 3600) * 1000))
            if rc < 0 && errno == EINTR { continue }
            guard rc > 0 else { return nil }
            // accept4 is not in Glibc's Swift overlay: the flags are set right after (the process forks
            // nothing meanwhile).
            let client = Glibc.accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { continue }
                throw NetError(.io, host: "127.0.0.1", port: port, detail: "accept failed: \(errnoDescription(errno))")
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            return Connection(host: "127.0.0.1", port: port, fd: client, timeout: 10)
        }
    }
}
