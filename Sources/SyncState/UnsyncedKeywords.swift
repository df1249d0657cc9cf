#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A keyword (tag) that stays on one side of a folder, and why: recorded by mo-sync, read by
/// `mo-sync status` and `mo-index tags --unsynced`.
public struct UnsyncedKeyword: Sendable, Hashable, Comparable {
    /// The mailbox as the server names it, decoded (as in the `roles` file).
    public var mailbox: String
    public var keyword: String
    /// A short phrase; one of the constants below from this version, any text from another.
    public var reason: String

    public init(mailbox: String, keyword: String, reason: String) {
        self.mailbox = mailbox
        self.keyword = keyword
        self.reason = reason
    }

    /// A local keyword the server will not store (PERMANENTFLAGS without `\*` not listing it).
    public static let refusedByServer = "the server does not accept new keywords in this folder (PERMANENTFLAGS without \\*)"
    /// Written by releases before tags beyond 26 (a server keyword that found no letter); a run that finds
    /// it lists the folder whole once, and the keyword comes into `mo-keywords`.
    public static let folderFull = "the folder already holds 26 keywords, the most a Maildir folder can"

    public static func < (a: Self, b: Self) -> Bool {
        (a.mailbox, a.keyword, a.reason) < (b.mailbox, b.keyword, b.reason)
    }
}

/// `<state>/<account>/unsynced-keywords`: one `MAILBOX<TAB>KEYWORD<TAB>REASON` line per item, sorted; no
/// items, no file. In each field the control bytes and `%` are written `%XX` (`PercentEscape`; spaces and
/// UTF-8 stay readable), so no field holds a tab or a line end; a reader unescapes, taking a field that
/// does not unescape as it is (a file written by hand).
extension AccountFiles {
    public static let unsyncedKeywordsName = "unsynced-keywords"

    /// The recorded items; an absent or unreadable file holds none, a malformed line is skipped.
    public static func unsyncedKeywords(in directory: String) -> [UnsyncedKeyword] {
        guard case .success(let bytes) = readWholeFile(directory + "/" + unsyncedKeywordsName) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, !fields[0].isEmpty, !fields[1].isEmpty else { return nil }
            let f = fields.map { PercentEscape.unescape($0) ?? String($0) }
            return UnsyncedKeyword(mailbox: f[0], keyword: f[1], reason: f[2])
        }
    }

    /// Writes the items atomically, only when the content changes (removes the file when there are none).
    /// Best effort, like `writeRoles`: the file reports, and a failure to write it never fails a sync.
    public static func writeUnsyncedKeywords(_ items: [UnsyncedKeyword], in directory: String) {
        let path = directory + "/" + unsyncedKeywordsName
        let lines = Set(items).sorted().map { "\(field($0.mailbox))\t\(field($0.keyword))\t\(field($0.reason))\n" }
        let bytes = Array(lines.joined().utf8)
        let old = readWholeFile(path)
        if bytes.isEmpty {
            if case .success = old { unlink(path) }
            return
        }
        if case .success(let oldBytes) = old, oldBytes == bytes { return }
        _ = makeDirectories(directory)
        _ = replaceFileAtomically(path, bytes)
    }

    private static func field(_ s: String) -> String {
        PercentEscape.escape(s) { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "%") }
    }
}
