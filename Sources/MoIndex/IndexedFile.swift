import Maildir
import MoCore

/// A root of Maildir folders being indexed: the single `--maildir` tree (name "") or one configured
/// account (its name).
///
/// `allFiles`: every regular file of every directory is a message, as notmuch indexes its mail root
/// (notmuch's command line with a notmuch configuration): a Maildir's `cur/` and `new/` are directories
/// like the others (`tmp/` and dot-directories are passed over).
public struct IndexRoot: Sendable, Equatable {
    public var name: String
    public var path: String
    public var layout: MaildirLayout
    public var allFiles: Bool

    public init(name: String, path: String, layout: MaildirLayout, allFiles: Bool = false) {
        self.name = name
        self.path = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        self.layout = layout
        self.allFiles = allFiles
    }

    /// How roots are written to the `mo-index-roots` metadata (an all-files root's layout as `all-files`).
    static func encode(_ roots: [IndexRoot]) -> String {
        roots.map { "\($0.name)\t\($0.allFiles ? allFilesLayout : $0.layout.rawValue)\t\($0.path)" }.joined(separator: "\n")
    }

    static let allFilesLayout = "all-files"

    static func decode(_ text: String) -> [IndexRoot] {
        text.split(separator: "\n").compactMap { line in
            let p = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard p.count == 3 else { return nil }
            if p[1] == allFilesLayout { return IndexRoot(name: String(p[0]), path: String(p[2]), layout: .verbatim, allFiles: true) }
            guard let layout = MaildirLayout(rawValue: String(p[1])) else { return nil }
            return IndexRoot(name: String(p[0]), path: String(p[2]), layout: layout)
        }
    }

    /// The file on disk for an index path (the inverse of `indexPath`).
    /// A root that is itself a Maildir folder ("") stores its files as `/cur/…` (`DirectoryState.join`
    /// of "" and `cur`): the path on disk has one slash there, as every other tool prints it.
    public static func absolutePath(_ indexPath: String, roots: [IndexRoot]) -> String {
        func joined(_ base: String, _ rest: Substring) -> String {
            (base.hasSuffix("/") ? base : base + "/") + rest.drop { $0 == "/" }
        }
        for root in roots where !root.name.isEmpty && (indexPath == root.name || indexPath.hasPrefix(root.name + "/")) {
            return indexPath == root.name ? root.path : joined(root.path, indexPath.dropFirst(root.name.count))
        }
        if let root = roots.first(where: { $0.name.isEmpty }) { return joined(root.path, indexPath[...]) }
        return indexPath
    }

    /// The directories holding a folder's messages: its `cur/` and `new/`, or in an all-files root the
    /// folder's own directory.
    func messageDirectories(of folder: String) -> [String] {
        allFiles ? [folder] : [DirectoryState.join(folder, "cur"), DirectoryState.join(folder, "new")]
    }

    /// `relative` (inside this root) as an index path: prefixed with the root's name unless it is "".
    func indexPath(_ relative: String) -> String {
        name.isEmpty ? relative : (relative.isEmpty ? name : name + "/" + relative)
    }
}

/// A file as the index names it: "<root name>/<dir>/<file>" (no root name for the "" root), where
/// <dir> is a folder's `cur` or `new` (or, in an all-files root, any directory). Pure string functions;
/// no file system access.
public struct IndexedFile: Sendable, Hashable {
    /// The index path, e.g. "work/Lists/dev/cur/1700000000.M1.host:2,S".
    public let path: String

    public init(_ path: String) { self.path = path }

    /// The last component.
    public var name: Substring {
        guard let slash = path.lastIndex(of: "/") else { return path[...] }
        return path[path.index(after: slash)...]
    }

    /// Everything before the last "/": the cur/new directory.
    public var directory: Substring {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return path[..<slash]
    }

    /// In a Maildir folder's `cur/` or `new/`; else a file of an all-files root's other directories,
    /// whose name carries no flags.
    public var isInMaildir: Bool {
        let dir = directory
        let last = dir.lastIndex(of: "/").map { dir[dir.index(after: $0)...] } ?? dir
        return last == "cur" || last == "new"
    }

    /// The folder: the directory without its final cur/new ("" for a root that is a Maildir); the
    /// directory itself for a file outside a Maildir (notmuch's `folder:`).
    public var folder: Substring {
        let dir = directory
        guard isInMaildir else { return dir }
        guard let slash = dir.lastIndex(of: "/") else { return "" }
        return dir[..<slash]
    }

    /// The Maildir unique part, for matching renames; the whole name if it does not parse.
    public var unique: String {
        (try? MaildirFilename(parsing: String(name)))?.unique ?? String(name)
    }

    /// The Maildir flags in the name (none if it does not parse, or outside a Maildir).
    public var flags: MaildirFlags {
        guard isInMaildir else { return [] }
        return (try? MaildirFilename(parsing: String(name)))?.flags ?? []
    }
}
