#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// Files `mo-index move` moved into this folder with their keyword letters already re-mapped to its
/// `dovecot-keywords` table. mo-sync, meeting such a file as a local move, must not re-map it again: the
/// letters alone cannot say which table they follow (read through either, they may give the pair's old
/// keywords when the tags changed before the move), and a second re-map would swap tags.
///
/// Format: `mo-remapped` in the folder, one unique name per line. Written under the folder's keyword lock
/// (`MaildirKeywords.lock`), atomically; mo-sync drops the names it met once its run is committed. A name
/// whose move failed is dropped at once; one left by a crash between the two steps stays (harmless unless
/// that very file is later moved here by another tool before a sync).
public enum RemappedFiles {
    public static let fileName = "mo-remapped"

    /// The names listed; an absent or unreadable file lists none.
    public static func load(folder: String) -> Set<String> {
        guard case .success(let bytes) = readWholeFile(folder + "/" + fileName) else { return [] }
        return Set(String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init))
    }

    /// Adds `uniques` (the caller holds the keyword lock).
    public static func add(_ uniques: [String], folder: String) throws(MaildirError) {
        let listed = load(folder: folder)
        guard !Set(uniques).isSubset(of: listed) else { return }
        try write(listed.union(uniques), folder: folder)
    }

    /// Drops `uniques` (mo-sync, under the keyword lock it holds for the folder's run).
    public static func remove(_ uniques: Set<String>, folder: String) throws(MaildirError) {
        let listed = load(folder: folder)
        guard !listed.isDisjoint(with: uniques) else { return }
        try write(listed.subtracting(uniques), folder: folder)
    }

    private static func write(_ names: Set<String>, folder: String) throws(MaildirError) {
        let path = folder + "/" + fileName
        if names.isEmpty {
            if unlink(path) != 0 && errno != ENOENT { throw MaildirError("cannot remove", path, code: errno) }
            return
        }
        if case .failure(let e) = replaceFileAtomically(path, Array(names.sorted().map { $0 + "\n" }.joined().utf8)) {
            throw MaildirError("cannot write", path, code: e.code)
        }
    }
}
