#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// One directory entry as readdir returns it.
struct RawDirectoryEntry {
    /// The name, or nil when it is not valid UTF-8 (such files are skipped with a warning: a lossy
    /// String would name a different file).
    var name: String?
    /// The name with invalid bytes replaced, for messages only.
    var displayName: String
    /// `d_type` (DT_UNKNOWN on file systems that do not fill it in).
    var type: UInt8
}

/// An open directory (fd kept for fstatat relative to it).
final class DirectoryReader {
    let path: String
    let fd: Int32
    private let dir: OpaquePointer

    init(_ path: String) throws(MaildirError) {
        self.path = path
        let fd = openRetrying(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw MaildirError("cannot open directory", path, code: -fd) }
        guard let d = fdopendir(fd) else {
            let e = errno
            Glibc.close(fd)
            throw MaildirError("cannot open directory", path, code: e)
        }
        self.fd = fd
        self.dir = d
    }

    deinit { closedir(dir) }  // also closes fd

    /// All entries except `.` and `..`.
    func entries() throws(MaildirError) -> [RawDirectoryEntry] {
        var result: [RawDirectoryEntry] = []
        try forEach { result.append($0) }
        return result
    }

    /// Each entry except `.` and `..`, as readdir returns it: a large folder's names are never all held.
    func forEach(_ body: (RawDirectoryEntry) -> Void) throws(MaildirError) {
        while true {
            errno = 0
            guard let ent = readdir(dir) else {
                if errno != 0 { throw MaildirError("cannot read directory", path, code: errno) }
                return
            }
            let type = ent.pointee.d_type
            let entry: RawDirectoryEntry? = withUnsafePointer(to: &ent.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: 256) { p in
                    if p[0] == UInt8(ascii: ".") && (p[1] == 0 || (p[1] == UInt8(ascii: ".") && p[2] == 0)) { return nil }
                    let name = String(validatingCString: p)
                    return RawDirectoryEntry(name: name, displayName: name ?? String(cString: p), type: type)
                }
            }
            if let entry { body(entry) }
        }
    }

    /// lstat of an entry (symlinks are not followed).
    func stat(_ name: String) -> Glibc.stat? {
        var st = Glibc.stat()
        return fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st : nil
    }

    /// Whether the entry is a real directory (not a symlink to one).
    func isDirectory(_ entry: RawDirectoryEntry) -> Bool {
        if entry.type == UInt8(DT_DIR) { return true }
        if entry.type != UInt8(DT_UNKNOWN) { return false }
        guard let name = entry.name, let st = stat(name) else { return false }
        return (st.st_mode & S_IFMT) == S_IFDIR
    }

    func isSymlink(_ entry: RawDirectoryEntry) -> Bool {
        if entry.type == UInt8(DT_LNK) { return true }
        if entry.type != UInt8(DT_UNKNOWN) { return false }
        guard let name = entry.name, let st = stat(name) else { return false }
        return (st.st_mode & S_IFMT) == S_IFLNK
    }
}
