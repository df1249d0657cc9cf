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

    /// Whether the account is synced in Gmail mode (docs/gmail.md): `<state>/<account>/gmail-mode` exists,
    /// written by its first Gmail-mode run. Its folders are then the views INBOX, Sent, Drafts, Archive.
    public static func isGmailMode(_ directory: String) -> Bool { access(directory + "/gmail-mode", F_OK) == 0 }

    /// Marks the account as synced in Gmail mode, durably (before its first folder's state is written).
    public static func markGmailMode(_ directory: String) throws(GenericError) {
        guard !isGmailMode(directory) else { return }
        _ = makeDirectories(directory)
        if case .failure(let code) = replaceFileAtomically(directory + "/gmail-mode", Array("Gmail mode: docs/gmail.md\n".utf8)) {
            throw GenericError(.localIO, "\(directory)/gmail-mode: \(code)")
        }
    }

    /// Writes the SPECIAL-USE roles file, atomically and only when its content changes. Best effort: the
    /// file serves scripts, triage shorthands and the action journal, so a failure to write it never fails
    /// a sync. The format, one role a line (the mailbox decoded, as the user knows it):
    ///
    ///     sent Sent Items
    ///     trash Deleted
    public static func writeRoles(_ roles: [(role: String, mailbox: String)], in directory: String) {
        let path = directory + "/roles"
        let bytes = Array(roles.map { "\($0.role) \($0.mailbox)\n" }.joined().utf8)
        if case .success(let old) = readWholeFile(path), old == bytes { return }
        _ = makeDirectories(directory)
        _ = replaceFileAtomically(path, bytes)
    }

    /// The roles file read back: role → mailbox (decoded); empty when there is none (not synced yet).
    public static func readRoles(in directory: String) -> [String: String] {
        guard case .success(let bytes) = readWholeFile(directory + "/roles") else { return [:] }
        var roles: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            if parts.count == 2 && roles[String(parts[0])] == nil { roles[String(parts[0])] = String(parts[1]) }
        }
        return roles
    }
}
