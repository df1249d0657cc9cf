#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// The file operations a sync needs beyond delivery and flag changes: moving a message between folders,
/// replacing a message's bytes, removing an emptied folder. The invariants of `MaildirFolder` hold here
/// too; where one is relaxed (`replaceContent` replaces its own file) the comment says why.
extension MaildirFolder {
    /// How a move between folders ended.
    public enum MoveOutcome: Equatable, Sendable {
        /// The message is in this folder now, at this path (same subdirectory and name as before, but
        /// for the flags when they were given).
        case moved(String)
        /// Nothing changed; the errno says why: EEXIST (a file of that name is here: never replaced),
        /// EXDEV (another file system: the caller transfers the message normally), ENOENT (gone meanwhile).
        case refused(Int32)
    }

    /// Moves the message file `path` of folder `source` into this folder, keeping its subdirectory
    /// (`new/` or `cur/`) and its name. Never overwrites: an existing file of that name refuses the move
    /// and both files stay as they were. Once moved, both directories are fsynced; a failing fsync
    /// throws (the file is already in its new place, so the caller must not treat it as unmoved).
    ///
    /// `flags`: the letters the file carries here, when they differ from the source's (keyword letters
    /// re-mapped to this folder's table, `MaildirKeywords.translate`): the same one rename then also sets
    /// them, so the file never stands in this folder with the source's letters.
    public func moveIn(
        _ path: String, from source: MaildirFolder,
        flags: MaildirFlags? = nil
    ) throws(MaildirError) -> MoveOutcome {
        guard let (subdir, name) = source.split(path) else {
            throw MaildirError("cannot use", path, detail: "not a message of folder \(source.path)")
        }
        var newName = name
        if let flags {
            guard var parsed = try? MaildirFilename(parsing: name, separator: source.separator) else {
                throw MaildirError("cannot use", path, detail: "not a Maildir file name whose flags can be set")
            }
            parsed = parsed.withFlags(flags)
            parsed.hasInfo = subdir == .cur || !flags.isEmpty
            newName = parsed.rendered
        }
        let target = directory(subdir) + "/" + newName
        if let e = renameNoReplace(path, target) { return .refused(e) }
        try fsyncDirectory(directory(subdir))
        try fsyncDirectory(source.directory(subdir))
        return .moved(target)
    }

    /// Replaces a message's bytes under the same name (e.g. without headers another syncer added): the
    /// new bytes are written to `tmp/` and fsynced, then renamed over the old file, so a crash leaves
    /// either the old file or the new one and never a partial message. This one rename does replace: the
    /// file replaced is the same message. The directory sync is best effort: a rename it would have made
    /// durable, lost in a crash, only brings the old bytes back.
    public func replaceContent(path: String, with bytes: [UInt8]) throws(MaildirError) {
        guard let (subdir, _) = split(path) else {
            throw MaildirError("cannot use", path, detail: "not a message of folder \(self.path)")
        }
        let tmp = directory("tmp") + "/" + MaildirUniqueName.generate(separator: separator) + ".clean"
        let fd = openRetrying(tmp, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw MaildirError("cannot create", tmp, code: -fd) }
        let failed = bytes.withUnsafeBytes { WriteFault.check($0.count) ?? writeAll(fd, $0) } ?? fsyncRetrying(fd)
        Glibc.close(fd)
        if let e = failed { Glibc.unlink(tmp); throw MaildirError("cannot write", tmp, code: e) }
        if Glibc.rename(tmp, path) != 0 {
            let e = errno
            Glibc.unlink(tmp)
            throw MaildirError("cannot replace", path, code: e)
        }
        _ = fsyncDirectoryEntries(directory(subdir))
    }

    /// Removes the folder if it holds no messages: `new/`, `cur/`, then `dovecot-keywords`, `mo-keywords`, `tmp/` and
    /// the folder's directory. Returns whether the folder is gone as a folder (no `cur/`, no `new/`). If
    /// `new/` or `cur/` is not empty, nothing stays removed (`new/` is made again) and the keywords file
    /// is kept, so a message that arrived meanwhile keeps a whole folder. A `tmp/` with leftovers, or a
    /// directory holding anything else (e.g. subfolders), stays as it is.
    @discardableResult
    public func removeIfEmpty() -> Bool {
        var removedNew = false
        for sub in MaildirSubdir.allCases {
            if rmdir(directory(sub)) == 0 { removedNew = removedNew || sub == .new; continue }
            if errno == ENOENT { continue }
            if removedNew { _ = try? makeDirectory(directory(.new)) }
            return false
        }
        Glibc.unlink(path + "/" + MaildirKeywords.fileName)
        Glibc.unlink(path + "/" + ExtraKeywords.fileName)  // lines of messages that are gone
        // The keyword lock file (the caller holds the lock, or nobody does: the folder is going).
        Glibc.unlink(path + "/" + MaildirKeywords.lockFileName)
        Glibc.unlink(path + "/" + RemappedFiles.fileName)
        rmdir(directory("tmp"))
        if rmdir(path) == 0 {
            _ = fsyncDirectoryEntries(parentDirectory(path))
        } else {
            _ = fsyncDirectoryEntries(path)
        }
        return true
    }

    /// The message file of unique name `unique` in `cur/` or `new/`, whatever its flags, found by listing
    /// both (for a few files, as `mo-index undo` looks them up); nil when it is in neither.
    public func path(ofUnique unique: String) -> String? {
        for subdir in [MaildirSubdir.cur, .new] {
            guard case .success(let names) = directoryNames(directory(subdir)) else { continue }
            if let n = names.first(where: { (try? MaildirFilename(parsing: $0, separator: separator))?.unique == unique }) {
                return directory(subdir) + "/" + n
            }
        }
        return nil
    }

    /// The subdirectory and the file name of a path in this folder's `new/` or `cur/` (name not parsed).
    func split(_ messagePath: String) -> (MaildirSubdir, String)? {
        for subdir in MaildirSubdir.allCases {
            let prefix = directory(subdir) + "/"
            guard messagePath.utf8.starts(with: prefix.utf8) else { continue }
            let name = String(decoding: messagePath.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
            return name.isEmpty || name.contains("/") ? nil : (subdir, name)
        }
        return nil
    }
}

/// The directory holding `path` ("/" for a top-level entry, "." for a bare name).
func parentDirectory(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}

/// The root directory of an account's Maildir tree.
public enum MaildirRoot {
    /// Whether anything exists at `path` (a root that vanished must not read as "all mail deleted").
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// Creates the root and missing parents (mode 0700).
    public static func create(_ path: String) throws(MaildirError) {
        if let e = makeDirectories(path) { throw MaildirError("cannot create", path, code: e) }
    }
}
