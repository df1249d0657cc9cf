#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` on a lock file, held for the life of the object and released by the kernel if
/// the process dies: the one lock helper (the account lock, the action journal's locks, the index update
/// lock). The file holds the holder's PID, for messages (`holder`).
public final class FileLock {
    public let path: String
    private let fd: Int32

    /// Why a lock could not be taken, other than another holder: `operation` is "open" or "lock".
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let operation: String
        public let code: Int32
        public var description: String { "cannot \(operation): \(errnoDescription(code))" }
    }

    /// Takes the lock, waiting up to `wait` seconds (0: try once). Nil when another process still holds
    /// it; throws when the file cannot be opened or locked for another reason.
    public init?(path: String, mode: mode_t = 0o600, wait: Double = 0) throws(Failure) {
        self.path = path
        let fd = openRetrying(path, O_RDWR | O_CREAT, mode)
        guard fd >= 0 else { throw Failure(operation: "open", code: -fd) }
        var waited = 0.0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            if e == EINTR { continue }
            guard e == EWOULDBLOCK, waited < wait else {
                Glibc.close(fd)
                if e == EWOULDBLOCK { return nil }
                throw Failure(operation: "lock", code: e)
            }
            usleep(50_000)
            waited += 0.05
        }
        self.fd = fd
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// The PID written by the current holder, or "?".
    public static func holder(_ path: String) -> String {
        guard case .success(let bytes) = readWholeFile(path) else { return "?" }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "?"
    }

    deinit { Glibc.close(fd) }
}
