#if canImport(Glibc)
    import Glibc
#endif

// EINTR-safe wrappers over the system calls that durable file code needs (Maildir delivery, state files,
// journals). Paths are Swift strings; Swift hands them to the kernel as their exact UTF-8 bytes.
// Functions return errno values rather than throwing so each caller wraps them in its own typed error.

/// Writes all of `bytes` to `fd`, retrying partial writes and EINTR; returns errno on failure.
public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    var done = 0
    while done < bytes.count {
        let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
        if n < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if n == 0 { return EIO }
        done += n
    }
    return nil
}

/// Appends `text` (whole lines) to a line-oriented append-only record file with one write, then fsyncs:
/// the action journal and the triage log. A new file gets `header` first (and its directory is fsynced, so
/// the name survives a crash); a torn last line is cut off first (`cutTornLastLine`), so records never run
/// together. The caller holds the file's lock. Returns what failed and errno, or nil once durable.
public func appendRecords(_ path: String, header: String, text: String) -> (operation: String, code: Int32)? {
    let fd = openRetrying(path, O_RDWR | O_CREAT | O_APPEND, 0o600)
    guard fd >= 0 else { return ("open", -fd) }
    defer { close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else { return ("stat", errno) }
    var bytes: [UInt8] = []
    if st.st_size == 0 {
        bytes = Array((header + "\n").utf8)
    } else if let e = cutTornLastLine(fd, size: Int(st.st_size)) {
        return ("cut its torn last line", e)
    }
    bytes += Array(text.utf8)
    if let e = bytes.withUnsafeBytes({ writeAll(fd, $0) }) ?? fsyncRetrying(fd) { return ("write", e) }
    if st.st_size == 0, let slash = path.lastIndex(of: "/"), let e = fsyncDirectoryEntries(String(path[..<slash])) {
        return ("sync its directory", e)
    }
    return nil
}

/// A new record id that sorts by time: the time in base 36, a dash, 8 random base-36 digits
/// (`sl2k3a-0x9f3kqp`): the action journal's and the triage log's.
public func timeOrderedID(now: Int) -> String {
    var rng = SystemRandomNumberGenerator()
    let random = String(UInt64.random(in: 0..<2_821_109_907_456, using: &rng), radix: 36)  // 36^8
    return String(now, radix: 36) + "-" + String(repeating: "0", count: 8 - random.count) + random
}

/// Cuts a torn last line off a line-oriented append-only file of `size` bytes: everything after its last
/// line end (the whole file when it has none); `fd` open for reading and writing. Such a tail is an append a crash or a full disk cut short;
/// its fsync never returned, so nothing acted on it, and an append after it would run into it. Returns
/// errno on failure.
public func cutTornLastLine(_ fd: Int32, size: Int) -> Int32? {
    var end = size
    var chunk = [UInt8](repeating: 0, count: 4096)
    while end > 0 {
        let start = max(0, end - chunk.count)
        let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, end - start, off_t(start)) }
        if n < 0 { if errno == EINTR { continue }; return errno }
        if n != end - start { return EIO }
        if let i = chunk[0..<n].lastIndex(of: UInt8(ascii: "\n")) { end = start + i + 1; break }
        end = start
    }
    if end == size { return nil }
    while ftruncate(fd, off_t(end)) != 0 {
        if errno == EINTR { continue }
        return errno
    }
    return nil
}

/// The last complete line of a line-oriented file, without its newline, read from its last `limit` bytes:
/// nil when the file does not end with a newline (a torn append) or that line is longer than `limit`.
public func lastLine(ofFile path: String, limit: Int = 512) -> Result<String?, ErrnoCode> {
    let fd = openRetrying(path, O_RDONLY)
    guard fd >= 0 else { return .failure(ErrnoCode(-fd)) }
    defer { Glibc.close(fd) }
    var st = stat()
    guard fstat(fd, &st) == 0 else { return .failure(ErrnoCode(errno)) }
    let size = Int(st.st_size), start = max(0, size - limit - 1)
    var tail = [UInt8](repeating: 0, count: size - start)
    while true {
        let n = tail.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(start)) }
        if n < 0 { if errno == EINTR { continue }; return .failure(ErrnoCode(errno)) }
        tail.removeLast(tail.count - n)
        break
    }
    guard tail.last == UInt8(ascii: "\n") else { return .success(nil) }
    tail.removeLast()
    guard let nl = tail.lastIndex(of: UInt8(ascii: "\n")) else {
        return .success(start == 0 ? String(decoding: tail, as: UTF8.self) : nil)
    }
    return .success(String(decoding: tail[(nl + 1)...], as: UTF8.self))
}

/// fsync with EINTR retry; returns errno on failure.
public func fsyncRetrying(_ fd: Int32) -> Int32? {
    while fsync(fd) != 0 {
        if errno == EINTR { continue }
        return errno
    }
    return nil
}

/// Opens with O_CLOEXEC and EINTR retry; returns the fd or -errno.
public func openRetrying(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    while true {
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        if fd >= 0 { return fd }
        if errno != EINTR { return -errno }
    }
}

/// Makes a directory's entries durable (after link, rename, unlink in it); returns errno on failure.
/// File systems that cannot fsync a directory (EINVAL, EROFS) are not a failure.
public func fsyncDirectoryEntries(_ path: String) -> Int32? {
    let fd = openRetrying(path, O_RDONLY | O_DIRECTORY)
    guard fd >= 0 else { return -fd }
    defer { Glibc.close(fd) }
    if let e = fsyncRetrying(fd), e != EINVAL, e != EROFS { return e }
    return nil
}

/// A file read a chunk at a time, so a large one is never held whole (a large folder's state file). The
/// descriptor closes with the reader.
public final class ChunkReader {
    private let fd: Int32
    private let chunk: Int
    /// The file's size when opened (a hint for what its reader builds).
    public let size: Int

    private init(fd: Int32, chunk: Int, size: Int) {
        self.fd = fd; self.chunk = chunk; self.size = size
    }

    public static func open(_ path: String, chunk: Int = 256 << 10) -> Result<ChunkReader, ErrnoCode> {
        let fd = openRetrying(path, O_RDONLY)
        guard fd >= 0 else { return .failure(ErrnoCode(-fd)) }
        var st = stat()
        return .success(ChunkReader(fd: fd, chunk: max(1, chunk), size: fstat(fd, &st) == 0 ? Int(st.st_size) : 0))
    }

    /// The next bytes (at most a chunk), nil at the end.
    public func next() -> Result<[UInt8]?, ErrnoCode> {
        var bytes = [UInt8](repeating: 0, count: chunk)
        while true {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 { bytes.removeLast(bytes.count - n); return .success(bytes) }
            if n == 0 { return .success(nil) }
            if errno != EINTR { return .failure(ErrnoCode(errno)) }
        }
    }

    deinit { Glibc.close(fd) }
}

/// The whole content of a file; `.failure(errno)` if it cannot be opened or read.
public func readWholeFile(_ path: String) -> Result<[UInt8], ErrnoCode> {
    let reader: ChunkReader
    switch ChunkReader.open(path, chunk: 65536) {
    case .success(let r): reader = r
    case .failure(let e): return .failure(e)
    }
    var data: [UInt8] = []
    data.reserveCapacity(reader.size)
    while true {
        switch reader.next() {
        case .success(let chunk?): data += chunk
        case .success(nil): return .success(data)
        case .failure(let e): return .failure(e)
        }
    }
}

/// Replaces `path` with `bytes` atomically and durably: write `path.new`, fsync it, rename over `path`,
/// fsync the directory. A crash leaves either the old or the new content, never a mix.
public func replaceFileAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) -> Result<Void, ErrnoCode> {
    let tmp = path + ".new"
    let fd = openRetrying(tmp, O_WRONLY | O_CREAT | O_TRUNC, mode)
    guard fd >= 0 else { return .failure(ErrnoCode(-fd)) }
    let failed = bytes.withUnsafeBytes { writeAll(fd, $0) } ?? fsyncRetrying(fd)
    Glibc.close(fd)
    if let e = failed { Glibc.unlink(tmp); return .failure(ErrnoCode(e)) }
    if Glibc.rename(tmp, path) != 0 { let e = errno; Glibc.unlink(tmp); return .failure(ErrnoCode(e)) }
    var dir = path
    if let slash = dir.lastIndex(of: "/") { dir = slash == dir.startIndex ? "/" : String(dir[..<slash]) } else { dir = "." }
    if let e = fsyncDirectoryEntries(dir) { return .failure(ErrnoCode(e)) }
    return .success(())
}

/// Creates `path` with `bytes`, durably, and never over an existing file (EEXIST then, even for a
/// dangling symlink): write and fsync `path.new`, `link` it to `path` (which fails if the name exists),
/// remove `path.new`, fsync the directory. A crash leaves no file or the whole file.
public func createFileExclusively(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o600) -> Result<Void, ErrnoCode> {
    let tmp = path + ".new"
    let fd = openRetrying(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode)
    guard fd >= 0 else { return .failure(ErrnoCode(-fd)) }
    let failed = bytes.withUnsafeBytes { writeAll(fd, $0) } ?? fsyncRetrying(fd)
    Glibc.close(fd)
    defer { Glibc.unlink(tmp) }
    if let e = failed { return .failure(ErrnoCode(e)) }
    if Glibc.link(tmp, path) != 0 { return .failure(ErrnoCode(errno)) }
    var dir = path
    if let slash = dir.lastIndex(of: "/") { dir = slash == dir.startIndex ? "/" : String(dir[..<slash]) } else { dir = "." }
    if let e = fsyncDirectoryEntries(dir) { return .failure(ErrnoCode(e)) }
    return .success(())
}

/// mkdir -p with mode 0700; returns errno on failure.
public func makeDirectories(_ path: String) -> Int32? {
    var built = path.hasPrefix("/") ? "" : "."
    for part in path.split(separator: "/") {
        built += "/" + part
        if mkdir(built, 0o700) != 0 && errno != EEXIST { return errno }
    }
    return nil
}

/// An errno value as an Error, for `Result`.
public struct ErrnoCode: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int32
    public init(_ code: Int32) { self.code = code }
    public var description: String { errnoDescription(code) }
}
