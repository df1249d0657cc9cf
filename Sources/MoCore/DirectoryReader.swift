#if canImport(Glibc)
    import Glibc
#endif

/// One directory entry as readdir returns it.
public struct RawDirectoryEntry: Sendable {
    /// The name, or nil when it is not valid UTF-8 (such files are skipped, with a warning where the
    /// caller reports: a lossy String would name a different file).
    public var name: String?
    /// The name with invalid bytes replaced, for messages only.
    public var displayName: String
    /// `d_type` (DT_UNKNOWN on file systems that do not fill it in).
    public var type: UInt8

    /// The entry of a name's bytes (no NUL).
    public init(bytes: UnsafeBufferPointer<UInt8>, type: UInt8) {
        let name = String(validating: bytes, as: UTF8.self)
        self.name = name
        self.displayName = name ?? String(decoding: bytes, as: UTF8.self)
        self.type = type
    }
}

/// A directory that could not be opened or read: `cannot read directory PATH: reason`.
public struct DirectoryError: MoError, Equatable {
    public let operation: String
    public let path: String
    public let code: Int32
    public var kind: ErrorKind { .localIO }
    public init(operation: String, path: String, code: Int32) {
        self.operation = operation; self.path = path; self.code = code
    }
    public var description: String { "\(operation) \(path): \(errnoDescription(code))" }
}

/// The one reader of directories (the Maildir scanner, the outbox, the state directory): strict, so a
/// name that is not valid UTF-8 is never turned into a String that names another file. An open directory
/// (fd kept for fstatat relative to it).
public final class DirectoryReader {
    public let path: String
    public let fd: Int32
    private let dir: OpaquePointer

    public init(_ path: String) throws(DirectoryError) {
        self.path = path
        let fd = openRetrying(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw DirectoryError(operation: "cannot open directory", path: path, code: -fd) }
        guard let d = fdopendir(fd) else {
            let e = errno
            Glibc.close(fd)
            throw DirectoryError(operation: "cannot open directory", path: path, code: e)
        }
        self.fd = fd
        self.dir = d
    }

    deinit { closedir(dir) }  // also closes fd

    /// All entries except `.` and `..`.
    public func entries() throws(DirectoryError) -> [RawDirectoryEntry] {
        var result: [RawDirectoryEntry] = []
        try forEach { result.append($0) }
        return result
    }

    /// Each entry except `.` and `..`, as readdir returns it: a large folder's names are never all held.
    public func forEach(_ body: (RawDirectoryEntry) -> Void) throws(DirectoryError) {
        try forEachName { name, type in body(RawDirectoryEntry(bytes: name, type: type)) }
    }

    /// Each entry except `.` and `..` as its name's bytes (valid only during the call, no NUL) and its
    /// `d_type`: no string is made, for a caller that can judge most names by their bytes.
    public func forEachName(_ body: (UnsafeBufferPointer<UInt8>, UInt8) -> Void) throws(DirectoryError) {
        while true {
            errno = 0
            guard let ent = readdir(dir) else {
                if errno != 0 { throw DirectoryError(operation: "cannot read directory", path: path, code: errno) }
                return
            }
            let type = ent.pointee.d_type
            withUnsafePointer(to: &ent.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: 256) { c in
                    let n = strlen(c)
                    c.withMemoryRebound(to: UInt8.self, capacity: n) { p in
                        if p[0] == UInt8(ascii: ".") && (n == 1 || (n == 2 && p[1] == UInt8(ascii: "."))) { return }
                        body(UnsafeBufferPointer(start: p, count: n), type)
                    }
                }
            }
        }
    }

    /// lstat of an entry (symlinks are not followed).
    public func stat(_ name: String) -> Glibc.stat? {
        var st = Glibc.stat()
        return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st : nil
    }

    /// Whether the entry is a real directory (not a symlink to one).
    public func isDirectory(_ entry: RawDirectoryEntry) -> Bool {
        if entry.type == UInt8(DT_DIR) { return true }
        if entry.type != UInt8(DT_UNKNOWN) { return false }
        guard let name = entry.name, let st = stat(name) else { return false }
        return (st.st_mode & S_IFMT) == S_IFDIR
    }

    public func isSymlink(_ entry: RawDirectoryEntry) -> Bool {
        if entry.type == UInt8(DT_LNK) { return true }
        if entry.type != UInt8(DT_UNKNOWN) { return false }
        guard let name = entry.name, let st = stat(name) else { return false }
        return (st.st_mode & S_IFMT) == S_IFLNK
    }
}

/// The names in a directory (not "." and ".."), in no particular order; names that are not valid UTF-8
/// are left out (no String could name their files).
public func directoryNames(_ path: String) -> Result<[String], ErrnoCode> {
    do {
        return .success(try DirectoryReader(path).entries().compactMap(\.name))
    } catch {
        return .failure(ErrnoCode(error.code))
    }
}
