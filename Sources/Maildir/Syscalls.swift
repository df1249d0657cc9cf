#if canImport(Glibc)
    import Glibc
#endif
import MoCore

// Thin, EINTR-safe wrappers over the system calls the Maildir code needs. Paths are passed as Swift
// strings; Swift hands them to the kernel as their exact UTF-8 bytes.

/// Makes a directory's entries durable (after link, rename, unlink in it).
func fsyncDirectory(_ path: String) throws(MaildirError) {
    if let e = fsyncDirectoryEntries(path) { throw MaildirError("cannot sync directory", path, code: e) }
}

private typealias RenameAt2 = @convention(c) (Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32) -> Int32
/// glibc's renameat2 is not imported by Swift's Glibc module; look it up once.
private let renameat2Function: RenameAt2? = {
    guard let sym = dlsym(nil, "renameat2") else { return nil }
    return unsafeBitCast(sym, to: RenameAt2.self)
}()
private let RENAME_NOREPLACE: UInt32 = 1
private let RENAME_EXCHANGE: UInt32 = 2

/// Swaps two existing names atomically (renameat2 RENAME_EXCHANGE); errno ENOENT if either is gone, and
/// EINVAL (or ENOSYS, EOPNOTSUPP) where the file system cannot.
func renameExchange(_ a: String, _ b: String) -> Int32? {
    guard let f = renameat2Function else { return ENOSYS }
    return f(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0 ? nil : errno
}

/// Renames without ever replacing an existing target: errno EEXIST if `to` exists.
/// Uses renameat2(RENAME_NOREPLACE), which is atomic. Where the file system lacks it, falls back to
/// link + unlink (both names exist for a moment, but nothing can be overwritten), and where hard links
/// are unsupported too, to lstat + rename (a tiny race, only against another writer choosing the same
/// unique name).
func renameNoReplace(_ from: String, _ to: String) -> Int32? {
    if let f = renameat2Function {
        if f(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0 { return nil }
        let e = errno
        if e != EINVAL && e != ENOSYS && e != EOPNOTSUPP { return e }
    }
    if Glibc.link(from, to) == 0 {
        Glibc.unlink(from)
        return nil
    }
    let e = errno
    if !linkUnsupported(e) { return e }
    var st = stat()
    if lstat(to, &st) == 0 { return EEXIST }
    if errno != ENOENT { return errno }
    return Glibc.rename(from, to) == 0 ? nil : errno
}

private typealias SyncFileRange = @convention(c) (Int32, Int64, Int64, UInt32) -> Int32
/// Not imported by Swift's Glibc module either (it needs _GNU_SOURCE).
private let syncFileRangeFunction: SyncFileRange? = {
    guard let sym = dlsym(nil, "sync_file_range") else { return nil }
    return unsafeBitCast(sym, to: SyncFileRange.self)
}()
private let SYNC_FILE_RANGE_WRITE: UInt32 = 2

/// Starts writeback of a file's dirty pages without waiting (a later fsync finds them on the way).
/// Best effort: nothing happens where the call is missing or fails.
func startWriteback(_ fd: Int32) {
    _ = syncFileRangeFunction?(fd, 0, 0, SYNC_FILE_RANGE_WRITE)
}

/// errno values meaning "this file system has no hard links".
func linkUnsupported(_ e: Int32) -> Bool {
    e == EPERM || e == EOPNOTSUPP || e == ENOSYS || e == EXDEV || e == EMLINK
}

/// mkdir that accepts an existing directory (but not an existing non-directory).
/// Returns whether it created the directory.
@discardableResult
func makeDirectory(_ path: String, mode: mode_t = 0o700) throws(MaildirError) -> Bool {
    if mkdir(path, mode) == 0 { return true }
    let e = errno
    var st = stat()
    if e == EEXIST, stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR { return false }
    throw MaildirError("cannot create directory", path, code: e)
}
