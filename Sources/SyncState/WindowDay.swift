#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// `<key>.window`: the first day of the folder's date window (`max-age`) that its last finished run
/// applied, one line (`2025-11-27`); no file: no window. A run whose first day differs takes the full
/// path once (its expiry pass, `expire-local`), and one whose first day is earlier (the window grew, or
/// went) lists the server whole, so the messages now inside are fetched. Written after the folder's
/// commit, atomically; a run stopped before writing it only does that pass again.
extension FolderStateStore {
    public var windowPath: String { String(statePath.dropLast(".state".count)) + ".window" }

    /// The recorded first day; nil when none is recorded or the file does not read as one.
    public func windowDay() -> String? {
        guard case .success(let bytes) = readWholeFile(windowPath) else { return nil }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first.map(String.init)
        return line.flatMap { $0.utf8.count == 10 ? $0 : nil }
    }

    /// Records `day` (nil: removes the record), when it differs from the recorded one.
    public func recordWindowDay(_ day: String?) throws(StateError) {
        guard day != windowDay() else { return }
        guard let day else {
            if unlink(windowPath) != 0 && errno != ENOENT { throw StateError(file: windowPath, cannot: "remove", code: errno) }
            return
        }
        if case .failure(let code) = replaceFileAtomically(windowPath, Array((day + "\n").utf8)) {
            throw StateError(file: windowPath, cannot: "write", code: code.code)
        }
    }
}
