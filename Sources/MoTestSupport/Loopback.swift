#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A listening TCP socket on 127.0.0.1 with a port the kernel chose, for the scripted fake servers and
/// relays in tests. The caller owns (and closes) the descriptor.
public func listenOnLoopback(backlog: Int32 = 8) throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw GenericError(.localIO, "socket: \(errnoDescription(errno))") }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    guard let port = bindToLoopback(fd), listen(fd, backlog) == 0 else {
        let e = errno
        close(fd)
        throw GenericError(.localIO, "cannot listen on 127.0.0.1: \(errnoDescription(e))")
    }
    return (fd, port)
}

/// Binds `fd` to 127.0.0.1 on a port the kernel picks: that port, or nil where binding fails.
public func bindToLoopback(_ fd: Int32) -> Int? {
    var addr = loopbackAddress(port: 0)
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
    }
    return bound ? Int(UInt16(bigEndian: addr.sin_port)) : nil
}

/// Calls `body` with 127.0.0.1:`port` as a `sockaddr` and its length (for `connect` and `sendto`).
public func withLoopbackAddress<R>(port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
    var addr = loopbackAddress(port: port)
    return withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
}

private func loopbackAddress(port: Int) -> sockaddr_in {
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = UInt16(port).bigEndian
    return addr
}

/// A port on 127.0.0.1 that nothing listens on (bound for a moment, then closed): connecting is refused.
public func closedLoopbackPort() -> Int { unusedLoopbackPort(Int32(SOCK_STREAM.rawValue)) }

/// A UDP port on 127.0.0.1 that nothing uses (bound for a moment, then closed).
public func freeUDPPort() -> Int { unusedLoopbackPort(Int32(SOCK_DGRAM.rawValue)) }

/// A port of socket `type` on 127.0.0.1 that the kernel picked and nothing holds any more.
func unusedLoopbackPort(_ type: Int32) -> Int {
    let fd = socket(AF_INET, type, 0)
    defer { close(fd) }
    return bindToLoopback(fd) ?? 0
}
