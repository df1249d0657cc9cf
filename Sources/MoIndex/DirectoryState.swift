#if canImport(Glibc)
    import Glibc
#endif
import Maildir

/// The directories an index was built from, with their mtimes: what makes a no-op update cost one
/// `stat` per directory. Stored in the `mo-index-dirs` metadata (see `IndexSchema`).
struct DirectoryState: Equatable {
    enum Kind: Character {
        /// A folder's cur/ or new/: a changed mtime means files came, went or were renamed.
        case messages = "f"
        /// A root, a folder directory, or a level above folders: a changed mtime may mean a new folder.
        case hierarchy = "h"
    }

    struct Entry: Equatable {
        var mtime: Int64
        var kind: Kind
        var root: String
        /// Relative to the root ("" for the root itself).
        var relative: String
    }

    /// Keyed by root name + "\u{0}" + relative path.
    var entries: [String: Entry] = [:]

    static func key(_ root: String, _ relative: String) -> String { root + "\u{0}" + relative }

    mutating func set(_ entry: Entry) { entries[Self.key(entry.root, entry.relative)] = entry }

    func encoded() -> String {
        entries.values.sorted { ($0.root, $0.relative) < ($1.root, $1.relative) }
            .map { "\($0.mtime)\t\($0.kind.rawValue)\t\($0.root)\t\($0.relative)" }
            .joined(separator: "\n")
    }

    init() {}

    init(decoding text: String) {
        for line in text.split(separator: "\n") {
            let p = line.split(separator: "\t", maxSplits: 3, omittingEmptySubsequences: false)
            guard p.count == 4, let mtime = Int64(p[0]), let c = p[1].first, let kind = Kind(rawValue: c) else { continue }
            set(Entry(mtime: mtime, kind: kind, root: String(p[2]), relative: String(p[3])))
        }
    }

    /// mtime in nanoseconds of a directory (not following a final symlink), nil if it is gone.
    /// A directory's mtime; through a final symbolic link only with `followingLinks` (notmuch's mail root,
    /// `IndexRoot.allFiles`: a Maildir root never follows one, so a link to `.` cannot loop its walk).
    static func mtime(_ path: String, followingLinks: Bool = false) -> Int64? {
        directoryModificationTime(path, followingLinks: followingLinks)
    }

    static func join(_ base: String, _ relative: String) -> String {
        relative.isEmpty ? base : base + "/" + relative
    }

    /// The folder a recorded `cur`/`new` directory belongs to: the inverse of `join(folder, "cur")`, so the
    /// root's own `/cur` (`join("", "cur")`) belongs to the root folder "", not to "/".
    static func folder(ofMessageDirectory relative: String) -> String {
        guard let slash = relative.lastIndex(of: "/") else { return "" }
        return String(relative[..<slash])
    }
}
