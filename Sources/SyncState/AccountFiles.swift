#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// The account-level files in `<state>/<account>/` beside the folders' state files and the lock.
public enum AccountFiles {
    /// Whether the account has been synced before: its directory holds a folder's state file.
    public static func recordsSyncs(_ directory: String) -> Bool {
        (try? directoryNames(directory).get())?.contains { $0.hasSuffix(".state") } ?? false
    }

    /// Writes the SPECIAL-USE roles file (`roles`: one `ROLE MAILBOX` line per role), atomically and only
    /// when its content changes. Best effort: the file serves scripts and triage shorthands, so a failure
    /// to write it never fails a sync.
    public static func writeRoles(_ lines: String, in directory: String) {
        let path = directory + "/roles"
        let bytes = Array(lines.utf8)
        if case .success(let old) = readWholeFile(path), old == bytes { return }
        _ = makeDirectories(directory)
        _ = replaceFileAtomically(path, bytes)
    }
}
