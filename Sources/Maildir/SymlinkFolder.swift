#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A Maildir whose messages are symbolic links to files of other folders, for a mail client to open as a
/// folder: `mo-index query --links`' results, and Gmail mode's label folders. Only symbolic links are ever
/// removed from it, so one pointed at a real Maildir by mistake cannot lose mail. Links are absolute, and
/// named as their target is (its flags show in the client).
public enum SymlinkFolder {
    /// A link of the folder, as `read` finds it.
    public struct Link: Sendable, Equatable {
        public let path: String
        public let name: String
        /// Where it points, as stored.
        public let target: String
    }

    /// Makes `cur/`, `new/` and `tmp/`.
    public static func prepare(_ dir: String) throws(MaildirError) {
        for sub in ["", "/cur", "/new", "/tmp"] where !MaildirRoot.exists(dir + sub) {
            try MaildirRoot.create(dir + sub)
        }
    }

    /// The links in `cur/` and `new/`, and the regular files beside them (a message a client saved there);
    /// nil when either cannot be read (missing, no permission): not the same as a folder with no links.
    public static func read(_ dir: String) -> (links: [Link], files: [String])? {
        var links: [Link] = [], files: [String] = []
        for sub in ["cur", "new"] {
            guard let d = opendir(dir + "/" + sub) else { return nil }
            defer { closedir(d) }
            while let e = readdir(d) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasPrefix(".") { continue }
                let path = dir + "/" + sub + "/" + name
                var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
                let n = readlink(path, &buffer, buffer.count - 1)
                if n >= 0 {
                    links.append(Link(path: path, name: name, target: String(decoding: buffer[..<n], as: UTF8.self)))
                } else {
                    files.append(path)
                }
            }
        }
        return (links, files)
    }

    /// Adds a link in `cur/` named `name`, to `target`.
    public static func link(_ dir: String, name: String, to target: String) throws(MaildirError) {
        let path = dir + "/cur/" + name
        if symlink(target, path) != 0 { throw MaildirError("cannot create the link", path, code: errno) }
    }

    /// Removes a link; a path that is not one is left alone.
    public static func unlink(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK else { return }
        _ = Glibc.unlink(path)
    }
}
