#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// Where a message file lives in a Maildir folder.
public enum MaildirSubdir: String, Sendable, CaseIterable {
    case new, cur
}

/// One Maildir folder (a directory with `cur/`, `new/`, `tmp/`): delivery, flag changes, removal.
///
/// Invariants kept by every operation here:
/// - an existing file is never overwritten (link/renameat2 fail with EEXIST instead);
/// - a message is reported delivered only once its data and its directory entry are on disk
///   (file fsync, then target-directory fsync);
/// - a flag change is one rename within the folder, so the message exists under exactly one name
///   (except in the link + unlink fallback on file systems without renameat2).
public struct MaildirFolder: Sendable, Hashable {
    /// The folder's directory.
    public let path: String
    /// The info separator (`:` unless the setup uses e.g. `!` or `;`).
    public let separator: Character

    public init(path: String, separator: Character = ":") {
        // A trailing "/" would make the path checks below miss; the root "/" itself is kept.
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        self.path = p
        self.separator = separator
    }

    /// The path of a subdirectory: `new`, `cur` or `tmp`.
    public func directory(_ name: String) -> String { path + "/" + name }
    public func directory(_ subdir: MaildirSubdir) -> String { directory(subdir.rawValue) }

    /// Whether its path is a directory at all (a mail root a Maildir is to be made in).
    public var isDirectoryPresent: Bool { isDirectory(path) }

    /// Whether the folder has `cur/` and `new/` directories.
    public var exists: Bool {
        isDirectory(directory("cur")) && isDirectory(directory("new"))
    }

    /// Why the folder is damaged rather than absent, or nil: its path, `cur`, `new` or `tmp` is there but
    /// is no directory (a regular file, a FIFO, a dangling symbolic link). A damaged folder is neither
    /// missing (its messages were not deleted) nor creatable, so a sync must leave it and its server side
    /// alone. One line: `PATH: a regular file where a directory of the Maildir folder should be`.
    public var damage: String? {
        for p in [path, directory("cur"), directory("new"), directory("tmp")] {
            var st = stat()
            if stat(p, &st) == 0 {
                if (st.st_mode & S_IFMT) == S_IFDIR { continue }
            } else if errno == ENOENT && lstat(p, &st) != 0 {
                continue  // absent: nothing there
            } else if errno == ENOTDIR && p == path {
                return "\(quotedForMessage(p)): a file stands where one of its parent directories should be"
            } else if errno != ENOENT {
                continue  // cannot tell (no permission, under a file reported above): the folder's own calls say
            }
            let what =
                switch st.st_mode & S_IFMT {
                case S_IFREG: "a regular file"
                case S_IFLNK: "a dangling symbolic link"
                case S_IFIFO: "a FIFO"
                case S_IFSOCK: "a socket"
                case S_IFCHR, S_IFBLK: "a device"
                default: "something"
                }
            return "\(quotedForMessage(p)): \(what) where a directory of the Maildir folder should be"
        }
        return nil
    }

    /// Creates the folder (and missing parents) with `cur/`, `new/`, `tmp/`, all mode 0700.
    /// Existing directories are left as they are.
    /// New directories are made durable (their parents are fsynced), so a delivery reported after
    /// `create()` cannot vanish with its folder in a crash.
    public func create() throws(MaildirError) {
        var parent = path.hasPrefix("/") ? "/" : "."
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if component == "." { continue }
            if try makeDirectory(prefix) { try fsyncDirectory(parent) }
            parent = prefix
        }
        var created = false
        for sub in ["cur", "new", "tmp"] { created = try makeDirectory(directory(sub)) || created }
        if created { try fsyncDirectory(path) }
    }

    /// Delivers a whole message; returns the final path. See `beginDelivery()` for the steps.
    public func deliver(
        _ bytes: [UInt8], to subdir: MaildirSubdir = .new, flags: MaildirFlags = [],
        uid: UInt32? = nil
    ) throws(MaildirError) -> String {
        let pending = try beginDelivery()
        do {
            try pending.write(bytes)
            return try pending.commit(to: subdir, flags: flags, uid: uid)
        } catch {
            pending.abort()
            throw error
        }
    }

    /// Starts a streamed delivery: a new file in `tmp/` (O_EXCL, mode 0600). Write the body with
    /// `PendingDelivery.write`, then `commit` (fsync, link into `new/` or `cur/`, fsync the directory,
    /// unlink the tmp name) or `abort`. An uncommitted delivery is aborted when released.
    public func beginDelivery() throws(MaildirError) -> PendingDelivery {
        var createdTmp = false
        for _ in 0..<8 {
            let unique = MaildirUniqueName.generate(separator: separator)
            let tmpPath = directory("tmp") + "/" + unique
            let fd = openRetrying(tmpPath, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            if fd >= 0 { return PendingDelivery(folder: self, unique: unique, tmpPath: tmpPath, fd: fd) }
            // Some tools drop an empty tmp/; recreate it once, but only in an existing folder.
            if -fd == ENOENT && !createdTmp && exists {
                try makeDirectory(directory("tmp"))
                createdTmp = true
                continue
            }
            if -fd != EEXIST { throw MaildirError("cannot create", tmpPath, code: -fd) }
        }
        throw MaildirError("cannot create", directory("tmp"), detail: "unique names kept colliding")
    }

    /// Makes the entries of `new/` or `cur/` durable (after links made by `PendingDelivery.link`).
    public func syncDirectory(_ subdir: MaildirSubdir) throws(MaildirError) {
        try fsyncDirectory(directory(subdir))
    }

    /// Changes a message's flags with one rename in its directory (or into `cur/` when `moveToCur`
    /// is set, as mutt does once a message has been seen). Returns the new path (the same path if
    /// nothing changes). Throws `MaildirFilenameError` for a name it cannot rewrite safely, and
    /// `MaildirError` if the rename fails (EEXIST if a file of the new name exists). With `sync: false`
    /// the directories are not fsynced: the caller syncs them (`syncDirectory`) before relying on it.
    public func setFlags(path: String, flags: MaildirFlags, moveToCur: Bool = false, sync: Bool = true) throws -> String {
        try rename(path: path, moveToCur: moveToCur, sync: sync) { $0.withFlags(flags) }
    }

    /// Sets or removes (nil) the mbsync `,U=` field of a message's name. Returns the new path.
    public func setUID(path: String, uid: UInt32?) throws -> String {
        try rename(path: path, moveToCur: false, sync: true) { $0.withUID(uid) }
    }

    /// Removes a message file and makes the removal durable (with `sync: false`, the caller does).
    public func remove(path: String, sync: Bool = true) throws {
        let (subdir, _) = try locate(path)
        guard Glibc.unlink(path) == 0 else { throw MaildirError("cannot remove", path, code: errno) }
        if sync { try fsyncDirectory(directory(subdir)) }
    }

    /// Splits `path` into its subdirectory and parsed name; refuses paths outside this folder's
    /// `new/` and `cur/`.
    func locate(_ messagePath: String) throws -> (MaildirSubdir, MaildirFilename) {
        for subdir in MaildirSubdir.allCases {
            let prefix = directory(subdir) + "/"
            if messagePath.utf8.starts(with: prefix.utf8) {
                let name = String(decoding: messagePath.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
                return (subdir, try MaildirFilename(parsing: name, separator: separator))
            }
        }
        throw MaildirError("cannot use", messagePath, detail: "not a message of folder \(path)")
    }

    private func rename(
        path old: String, moveToCur: Bool, sync: Bool,
        _ change: (MaildirFilename) -> MaildirFilename
    ) throws -> String {
        let (subdir, name) = try locate(old)
        let target: MaildirSubdir = moveToCur ? .cur : subdir
        var newName = change(name)
        // new/ holds names without info unless they carry flags; cur/ names always have info.
        newName.hasInfo = target == .cur || !newName.flags.isEmpty
        let newPath = directory(target) + "/" + newName.rendered
        if newPath == old { return old }
        if let e = renameNoReplace(old, newPath) { throw MaildirError("cannot rename \(old) to", newPath, code: e) }
        guard sync else { return newPath }
        try fsyncDirectory(directory(target))
        if target != subdir { try fsyncDirectory(directory(subdir)) }
        return newPath
    }
}

func isDirectory(_ path: String) -> Bool {
    var st = stat()
    return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
}
