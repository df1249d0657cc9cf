#if canImport(Glibc)
import Glibc
#endif
import MoCore

/// An exclusive `flock` on a file, held for the life of the object and released by the kernel if the
/// process dies. The file holds the holder's PID, for messages.
final class FileLock {
    let path: String
    private let fd: Int32

    /// Takes the lock, waiting up to `wait` seconds (0: try once). Nil when another process still holds it.
    init?(path: String, wait: Double) throws(JournalError) {
        self.path = path
        let fd = openRetrying(path, O_RDWR | O_CREAT, 0o600)
        guard fd >= 0 else { throw JournalError(file: path, problem: "cannot open: \(errnoDescription(-fd))", kind: .localIO) }
        var waited = 0.0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            if e == EINTR { continue }
            guard e == EWOULDBLOCK, waited < wait else {
                Glibc.close(fd)
                if e == EWOULDBLOCK { return nil }
                throw JournalError(file: path, problem: "cannot lock: \(errnoDescription(e))", kind: .localIO)
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
    static func holder(_ path: String) -> String {
        guard case .success(let bytes) = readWholeFile(path) else { return "?" }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? "?"
    }

    deinit { Glibc.close(fd) }
}
