#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// Finds folders and message files with readdir and (only where d_type is unknown) lstat. Unlike
/// `Maildir.MaildirScanner` it accepts folders with only `cur/` or only `new/` (read-only archives and
/// test corpora have no `new/`), and scans one subdirectory at a time.
/// Symbolic links are never followed, except under notmuch's mail root (`IndexRoot.allFiles`), where
/// notmuch follows them (to files and to directories; the depth limit stops a loop).
enum FolderWalker {
    struct Listing {
        /// Folders relative to the root ("" for the root itself), sorted.
        var folders: [String] = []
        /// Every directory visited that is not a cur/new/tmp: where new folders appear.
        var hierarchy: [String] = []
        var warnings: [String] = []
    }

    static let maxDepth = 64

    /// `ignore`: notmuch's new.ignore, for an all-files root.
    static func listFolders(_ root: IndexRoot, ignore: IgnoreList? = nil) -> Listing {
        var listing = Listing()
        switch root.layout {
        case _ where root.allFiles:
            var visited = Set<[UInt64]>()
            walkAll(root.path, relative: "", depth: 0, ignore: ignore, visited: &visited, into: &listing)
        case .verbatim:
            walk(root.path, relative: "", depth: 0, into: &listing)
        case .maildirPlusPlus:
            listing.hierarchy.append("")
            if isFolder(root.path) { listing.folders.append("") }
            for (name, type) in entries(root.path, warnings: &listing.warnings) where name.hasPrefix(".") && name != "." && name != ".." {
                if isDirectory(root.path + "/" + name, type), isFolder(root.path + "/" + name) {
                    listing.folders.append(name)
                    listing.hierarchy.append(name)
                }
            }
        }
        listing.folders.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return listing
    }

    private static func walk(_ dir: String, relative: String, depth: Int, into listing: inout Listing) {
        listing.hierarchy.append(relative)
        if isFolder(dir) { listing.folders.append(relative) }
        guard depth < maxDepth else {
            listing.warnings.append("\(quotedForMessage(dir)): nested deeper than \(maxDepth) levels; not descended")
            return
        }
        for (name, type) in entries(dir, warnings: &listing.warnings) {
            if name.hasPrefix(".") || name == "cur" || name == "new" || name == "tmp" { continue }
            let path = dir + "/" + name
            guard isDirectory(path, type) else { continue }
            walk(path, relative: relative.isEmpty ? name : relative + "/" + name, depth: depth + 1, into: &listing)
        }
    }

    /// An all-files root (`IndexRoot.allFiles`): every directory is a folder whose own files are messages,
    /// as notmuch walks it: a Maildir's `cur/` and `new/` included, its `tmp/` passed over, the root's own
    /// `.notmuch` passed over (a `.notmuch` deeper is mail), other dot-directories and linked ones walked.
    private static func walkAll(
        _ dir: String, relative: String, depth: Int, ignore: IgnoreList?, visited: inout Set<[UInt64]>, into listing: inout Listing
    ) {
        // A directory reached twice (through links) is walked once.
        var st = stat()
        guard stat(dir, &st) == 0, visited.insert([UInt64(st.st_dev), UInt64(st.st_ino)]).inserted else { return }
        listing.hierarchy.append(relative)
        listing.folders.append(relative)
        guard depth < maxDepth else {
            listing.warnings.append("\(quotedForMessage(dir)): nested deeper than \(maxDepth) levels; not descended")
            return
        }
        let isMaildir = isFolder(dir)
        for (name, type) in entries(dir, warnings: &listing.warnings) {
            if (relative.isEmpty && name == ".notmuch") || (isMaildir && name == "tmp") { continue }
            if let ignore, ignore.ignores(name, in: relative) { continue }
            let path = dir + "/" + name
            guard isDirectory(path, type) || (type == UInt8(DT_LNK) && DirectoryState.mtime(path, followingLinks: true) != nil) else {
                continue
            }
            walkAll(
                path, relative: relative.isEmpty ? name : relative + "/" + name, depth: depth + 1, ignore: ignore, visited: &visited,
                into: &listing)
        }
    }

    /// A directory with `cur/` or `new/`.
    static func isFolder(_ path: String) -> Bool {
        DirectoryState.mtime(path + "/cur") != nil || DirectoryState.mtime(path + "/new") != nil
    }

    private static func isDirectory(_ path: String, _ type: UInt8) -> Bool {
        if type == UInt8(DT_DIR) { return true }
        if type != UInt8(DT_UNKNOWN) { return false }
        return DirectoryState.mtime(path) != nil
    }

    /// Regular files of a directory (dotfiles skipped), or nil if it cannot be read (e.g. gone).
    /// `allFiles` (notmuch's mail root): dotfiles too, and links to regular files; a broken link goes to
    /// `brokenLinks`.
    /// `ignore` (with `relative`, the directory's path in the root): notmuch's new.ignore.
    static func files(
        _ dir: String, allFiles: Bool = false, ignore: IgnoreList? = nil, relative: String = "", warnings: inout [String],
        brokenLinks: inout [String]
    ) -> [String]? {
        guard DirectoryState.mtime(dir, followingLinks: allFiles) != nil else { return nil }
        var out: [String] = []
        for (name, type) in entries(dir, warnings: &warnings) where allFiles || !name.hasPrefix(".") {
            if let ignore, ignore.ignores(name, in: relative) { continue }
            if type == UInt8(DT_REG) { out.append(name); continue }
            if allFiles && type == UInt8(DT_LNK) {
                var st = stat()
                if stat(dir + "/" + name, &st) != 0 {
                    brokenLinks.append(dir + "/" + name)
                } else if (st.st_mode & S_IFMT) == S_IFREG {
                    out.append(name)
                }
                continue
            }
            if type == UInt8(DT_UNKNOWN) {
                var st = stat()
                if lstat(dir + "/" + name, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG { out.append(name) }
            }
        }
        return out
    }

    /// (name, d_type) of every entry but . and ..; names that are not UTF-8 are skipped with a warning.
    static func entries(_ dir: String, warnings: inout [String]) -> [(String, UInt8)] {
        guard let d = opendir(dir) else {
            warnings.append("\(quotedForMessage(dir)): \(errnoDescription(errno))")
            return []
        }
        defer { closedir(d) }
        var out: [(String, UInt8)] = []
        while let ent = readdir(d) {
            let type = ent.pointee.d_type
            let name: String? = withUnsafePointer(to: &ent.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: 256) { p in
                    if p[0] == UInt8(ascii: ".") && (p[1] == 0 || (p[1] == UInt8(ascii: ".") && p[2] == 0)) { return "." }
                    return String(validatingCString: p)
                }
            }
            guard let name else {
                warnings.append("\(quotedForMessage(dir)): a file name that is not UTF-8; skipped")
                continue
            }
            if name != "." { out.append((name, type)) }
        }
        return out
    }
}
