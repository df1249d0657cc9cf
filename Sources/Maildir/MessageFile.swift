#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A message file open for reading by position. Reads go to one descriptor, so a rename in between (a
/// flag change by a mail client) does not matter. Closed when released. Opening honours `MO_FAIL_OPEN`
/// (`OpenFault`), so tests can make a message unreadable.
public final class MessageFile {
    public let path: String
    private let fd: Int32
    /// The file's size when opened (nil if fstat failed).
    public let size: Int?

    public init(path: String) throws(MaildirError) {
        self.path = path
        let fd = OpenFault.error(opening: path).map { -$0 } ?? openRetrying(path, O_RDONLY)
        guard fd >= 0 else { throw MaildirError("cannot read", path, code: -fd) }
        self.fd = fd
        var st = stat()
        size = fstat(fd, &st) == 0 ? Int(st.st_size) : nil
    }

    deinit { Glibc.close(fd) }

    /// Reads the file from its start in chunks of at most `chunkSize` bytes, handing each to `body`.
    public func forEachChunk(of chunkSize: Int, _ body: ([UInt8]) throws -> Void) throws {
        // No bigger than the file (most messages are a few KiB): a zeroed chunk is resident memory.
        var buffer = [UInt8](repeating: 0, count: max(1, min(chunkSize, (size ?? chunkSize) + 1)))
        var offset: off_t = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MaildirError("cannot read", path, code: errno)
            }
            if n == 0 { return }
            offset += off_t(n)
            try body(n == buffer.count ? buffer : Array(buffer[0..<n]))
        }
    }

    /// The whole content of a message file.
    public static func contents(of path: String) throws(MaildirError) -> [UInt8] {
        switch readWholeFile(path) {
        case .success(let bytes): return bytes
        case .failure(let e): throw MaildirError("cannot read", path, code: e.code)
        }
    }
}
