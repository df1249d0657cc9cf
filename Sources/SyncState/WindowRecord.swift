#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// `<key>.window`: the folder's date window (`max-age`) as its last finished run applied it, one line:
/// the first day, what it keeps whatever the age, and whether it lets local copies go:
///
///     2025-11-27 keep=flagged,unread expire-local
///
/// No file: no window. A run whose line differs takes the full path once (the expiry pass of
/// `expire-local`), and one whose window grew (an earlier first day, a kept kind added, or no window any
/// more) lists the server whole, so the messages now inside are fetched (`FolderWindow`). Written after
/// the folder's commit, atomically; a run stopped before writing it only does that pass again.
extension FolderStateStore {
    /// The recorded line; nil when there is none.
    public func windowLine() -> String? {
        guard case .success(let bytes) = readWholeFile(windowPath) else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init)
    }

    /// Records `line` (nil: removes the record), when it differs from the recorded one.
    public func recordWindowLine(_ line: String?) throws(StateError) {
        guard line != windowLine() else { return }
        guard let line else {
            if unlink(windowPath) != 0 && errno != ENOENT { throw StateError(file: windowPath, cannot: "remove", code: errno) }
            return
        }
        if case .failure(let code) = replaceFileAtomically(windowPath, Array((line + "\n").utf8)) {
            throw StateError(file: windowPath, cannot: "write", code: code.code)
        }
    }
}
