#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// One message file found by a scan. Bodies are never read.
public struct MaildirEntry: Sendable, Hashable {
    /// The parsed file name (unique part, UID, flags).
    public let name: MaildirFilename
    /// The file name exactly as on disk.
    public let filename: String
    /// The full path.
    public let path: String
    public let subdir: MaildirSubdir
    /// Size in bytes.
    public let size: Int64
    /// Modification time: seconds since the epoch and nanoseconds.
    public let mtimeSeconds: Int64
    public let mtimeNanoseconds: Int32

    public var unique: String { name.unique }
    public var uid: UInt32? { name.uid }
    public var flags: MaildirFlags { name.flags }
}

/// The result of scanning one folder.
public struct MaildirScan: Sendable {
    /// Messages of `new/` then `cur/`, each in directory order.
    public var entries: [MaildirEntry]
    /// One line per skipped file (bad name, symlink, not a regular file), naming it.
    public var warnings: [String]
    /// The likely unique names of files skipped for a name `MaildirFilename` refuses
    /// (`MaildirFilename.likelyUnique`): their messages are still here, so a caller must not read their
    /// absence from `entries` as a deletion.
    public var refusedUniques: Set<String> = []
}

/// The folders found under an account root.
public struct MaildirFolderListing: Sendable, Equatable {
    /// Paths relative to the root (`""` is the root itself, INBOX in maildir++), sorted bytewise.
    public var folders: [String]
    public var warnings: [String]
}

/// Lists folders and message files with readdir + fstatat only (no Foundation, no body reads), so a
/// folder of 100k messages costs one getdents stream and one fstatat per file.
///
/// Symbolic links are never followed, neither to folders nor to messages: a link could lead out of the
/// account root. They are reported as warnings.
public enum MaildirScanner {
    /// Scans `cur/` and `new/` of a folder, ignoring dotfiles and `tmp/`. Names that cannot be parsed
    /// are reported as warnings, not errors. Throws if `new/` or `cur/` cannot be read.
    /// With `only`, just the messages with those unique names are returned (and stat'ed), and other names
    /// are not reported. With `keep`, every name is parsed (and reported if it cannot be) but only those
    /// `keep` accepts are stat'ed and returned: a caller that knows most files already (their names
    /// say all it needs) holds only the others.
    public static func scan(
        _ folder: MaildirFolder, only: Set<String>? = nil,
        keep: ((_ unique: UnsafeBufferPointer<UInt8>, _ flags: MaildirFlags) -> Bool)? = nil
    ) throws(MaildirError) -> MaildirScan {
        var result = MaildirScan(entries: [], warnings: [])
        // A wanted unique name's first comma field: a name whose first field is none of these is not wanted,
        // which skips parsing the other names of a large folder (a unique name is the first field plus
        // other comma fields; only the `,U=` field is left out of it).
        let separator = folder.separator.asciiValue ?? UInt8(ascii: ":")
        func firstField(_ name: Substring) -> Substring {
            name[..<(name.utf8.firstIndex { $0 == UInt8(ascii: ",") || $0 == separator } ?? name.endIndex)]
        }
        let wantedFirstFields = only.map { Set($0.map { firstField(Substring($0)) }) }
        // `keep` judges most names of a large folder by their bytes (`MaildirFilename.plainParts`), before
        // any string is made; the others once parsed.
        let plainSeparator = keep == nil ? nil : MaildirFilename.validSeparator(folder.separator)
        for subdir in [MaildirSubdir.new, .cur] {
            let reader = try DirectoryReader.opening(folder.directory(subdir))
            try reader.eachName { bytes, type in
                if bytes.first == UInt8(ascii: ".") { return }
                var kept = false
                if let keep, let plainSeparator, let plain = MaildirFilename.plainParts(bytes, separator: plainSeparator) {
                    guard keep(plain.unique, plain.flags) else { return }
                    kept = true
                }
                let entry = RawDirectoryEntry(bytes: bytes, type: type)
                var where_: String { reader.path + "/" + entry.displayName }
                // A filtered scan skips other names before any stat (their warnings are a full scan's job).
                if let wantedFirstFields, !(entry.name.map { wantedFirstFields.contains(firstField(Substring($0))) } ?? false) { return }
                let parsed = entry.name.map { n in
                    Result { () throws(MaildirFilenameError) in try MaildirFilename(parsing: n, separator: folder.separator) }
                }
                if let only, !((try? parsed?.get()).map { only.contains($0.unique) } ?? false) {
                    if case .failure? = parsed, let n = entry.name,
                        let u = MaildirFilename.likelyUnique(of: n, separator: folder.separator),
                        only.contains(u)
                    {
                        result.refusedUniques.insert(u)
                    }
                    return
                }
                guard let filename = entry.name else {
                    result.warnings.append("\(quotedForMessage(where_)): file name is not valid UTF-8; skipped")
                    return
                }
                let name: MaildirFilename
                switch parsed {
                case .success(let n)?: name = n
                case .failure(let error)?:
                    result.warnings.append("\(reader.path): \(error.description); skipped")
                    if let u = MaildirFilename.likelyUnique(of: filename, separator: folder.separator) { result.refusedUniques.insert(u) }
                    return
                case nil: return
                }
                if !kept, let keep {
                    var unique = name.unique
                    guard unique.withUTF8({ keep($0, name.flags) }) else { return }
                }
                guard let st = reader.stat(filename) else {
                    if errno != ENOENT {  // vanished since readdir: another client moved it; not news
                        result.warnings.append("\(quotedForMessage(where_)): \(errnoDescription(errno)); skipped")
                    }
                    return
                }
                guard (st.st_mode & S_IFMT) == S_IFREG else {
                    let what = (st.st_mode & S_IFMT) == S_IFLNK ? "symbolic link" : "not a regular file"
                    result.warnings.append("\(quotedForMessage(where_)): \(what); skipped")
                    return
                }
                result.entries.append(
                    MaildirEntry(
                        name: name, filename: filename, path: reader.path + "/" + filename, subdir: subdir,
                        size: Int64(st.st_size), mtimeSeconds: Int64(st.st_mtim.tv_sec),
                        mtimeNanoseconds: Int32(truncatingIfNeeded: st.st_mtim.tv_nsec)))
            }
        }
        return result
    }

    /// Finds the files of known messages by the names this program gives them — `unique:2,FLAGS` in cur/,
    /// or a bare `unique` in new/ for a message without flags — with one lstat each and no directory
    /// listing. Nil as soon as one is not where its name says (another program named it, or it has other
    /// letters): the caller then scans. For a folder whose directories have not changed since its files
    /// last matched their records, so only a few of a large folder's files are wanted.
    public static func locate(_ folder: MaildirFolder, _ wanted: [(unique: String, flags: MaildirFlags)]) -> [MaildirEntry]? {
        var found: [MaildirEntry] = []
        found.reserveCapacity(wanted.count)
        for (unique, flags) in wanted {
            var guesses: [(MaildirSubdir, MaildirFilename)] = []
            if let n = try? MaildirFilename(unique: unique, flags: flags, hasInfo: true, separator: folder.separator) {
                guesses.append((.cur, n))
            }
            if flags.isEmpty, let n = try? MaildirFilename(unique: unique, separator: folder.separator) { guesses.append((.new, n)) }
            var hit: MaildirEntry?
            for (subdir, name) in guesses {
                let filename = name.rendered, path = folder.directory(subdir) + "/" + filename
                var st = Glibc.stat()
                guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
                hit = MaildirEntry(
                    name: name, filename: filename, path: path, subdir: subdir, size: Int64(st.st_size),
                    mtimeSeconds: Int64(st.st_mtim.tv_sec), mtimeNanoseconds: Int32(truncatingIfNeeded: st.st_mtim.tv_nsec))
                break
            }
            guard let hit else { return nil }
            found.append(hit)
        }
        return found
    }

    /// Lists the folders of an account root.
    ///
    /// - maildir++: the root is INBOX (`""`) if it has `cur/` and `new/`; folders are the root's
    ///   `.Name.Sub` directories that have `cur/` and `new/`; other directories are ignored.
    /// - verbatim: folders nest as directories; a directory with `cur/` and `new/` is a folder and may
    ///   hold subfolders beside them; one without is a hierarchy level. Dot-directories and `cur`,
    ///   `new`, `tmp` are never descended into.
    public static func listFolders(root: String, layout: MaildirLayout) throws(MaildirError) -> MaildirFolderListing {
        var listing = MaildirFolderListing(folders: [], warnings: [])
        let base = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        switch layout {
        case .maildirPlusPlus:
            let reader = try DirectoryReader.opening(base)
            if isMaildir(base) { listing.folders.append("") }
            for entry in try reader.all() where entry.displayName.hasPrefix(".") {
                guard let name = followableName(entry, in: base, reader: reader, linkCounts: isMaildir, into: &listing) else { continue }
                if reader.isDirectory(entry) && isMaildir(base + "/" + name) { listing.folders.append(name) }
            }
        case .verbatim:
            try walk(base, relative: "", depth: 0, into: &listing)
        }
        listing.folders.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return listing
    }

    /// A path within PATH_MAX (4096) has at most 2048 levels (Dovecot takes hundreds); the bound only
    /// guards the recursion. Each level's directory is closed before descending, so depth costs no fds.
    private static let maxDepth = 2048

    private static func walk(
        _ dir: String, relative: String, depth: Int,
        into listing: inout MaildirFolderListing
    ) throws(MaildirError) {
        if !relative.isEmpty && isMaildir(dir) { listing.folders.append(relative) }
        guard depth < maxDepth else {
            listing.warnings.append("\(quotedForMessage(dir)): nested deeper than \(maxDepth) levels; not descended")
            return
        }
        for name in try subdirectories(dir, into: &listing) {
            do {
                try walk(
                    dir + "/" + name, relative: relative.isEmpty ? name : relative + "/" + name,
                    depth: depth + 1, into: &listing)
            } catch {
                listing.warnings.append(error.description)  // one unreadable subtree is not fatal
            }
        }
    }

    /// The real subdirectories of `dir` that may be hierarchy levels (not dot-directories, `cur`, `new`,
    /// `tmp`, or symbolic links, which are reported).
    private static func subdirectories(_ dir: String, into listing: inout MaildirFolderListing) throws(MaildirError) -> [String] {
        let reader = try DirectoryReader.opening(dir)
        var names: [String] = []
        for entry in try reader.all() {
            let display = entry.displayName
            if display.hasPrefix(".") || display == "cur" || display == "new" || display == "tmp" { continue }
            guard let name = followableName(entry, in: dir, reader: reader, linkCounts: isDirectory, into: &listing) else { continue }
            if reader.isDirectory(entry) { names.append(name) }
        }
        return names
    }

    /// The entry's name, or nil where it cannot be followed: a name that is not UTF-8 (reported), or a
    /// symbolic link (reported where `linkCounts` holds for its path: a link to what would be listed).
    private static func followableName(
        _ entry: RawDirectoryEntry, in dir: String, reader: DirectoryReader, linkCounts: (String) -> Bool,
        into listing: inout MaildirFolderListing
    ) -> String? {
        guard let name = entry.name else {
            listing.warnings.append("\(quotedForMessage(dir + "/" + entry.displayName)): folder name is not valid UTF-8; skipped")
            return nil
        }
        if reader.isSymlink(entry) {
            if linkCounts(dir + "/" + name) {
                listing.warnings.append("\(quotedForMessage(dir + "/" + name)): symbolic link not followed")
            }
            return nil
        }
        return name
    }

    /// A directory with `cur/` and `new/` (tmp/ is created on delivery if missing).
    static func isMaildir(_ path: String) -> Bool {
        var st = stat()
        for sub in ["/cur", "/new"] {
            guard lstat(path + sub, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return false }
        }
        return true
    }
}
