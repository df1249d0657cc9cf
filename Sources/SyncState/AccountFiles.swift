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
    ///
    ///     Gmail mode: docs/gmail.md
    ///     mark 600001 59 123 58 INBOX=20 Sent=4 Drafts=0 Archive=34
    ///
    /// The second line, when there, is `GmailMark`: All Mail as the last run saw it (UIDVALIDITY, UIDNEXT,
    /// HIGHESTMODSEQ, EXISTS) and each view's count, written after a run in which every view committed and
    /// mo changed nothing on the server.
    public static func isGmailMode(_ directory: String) -> Bool { access(directory + "/gmail-mode", F_OK) == 0 }

    /// Marks the account as synced in Gmail mode, durably (before its first folder's state is written), with
    /// `mark` as its second line (nil: none).
    public static func markGmailMode(_ directory: String, mark: GmailMark? = nil) throws(GenericError) {
        let text = "Gmail mode: docs/gmail.md\n" + (mark.map { $0.line + "\n" } ?? "")
        if case .success(let old) = readWholeFile(directory + "/gmail-mode"), old == Array(text.utf8) { return }
        _ = makeDirectories(directory)
        if case .failure(let code) = replaceFileAtomically(directory + "/gmail-mode", Array(text.utf8)) {
            throw GenericError(.localIO, "\(directory)/gmail-mode: \(code)")
        }
    }

    /// The mark of `gmail-mode`; nil when there is none or it does not read as written.
    public static func gmailMark(_ directory: String) -> GmailMark? {
        guard case .success(let bytes) = readWholeFile(directory + "/gmail-mode") else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst().first.flatMap { GmailMark(line: String($0)) }
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

    /// `jmap-session`: a JMAP account's session resource as last fetched, so that a run asks nothing for
    /// it (a run that finds nothing changed is then one request). The first line names the configured
    /// address and the one the session came from (after redirects); the JSON follows as the server sent it:
    ///
    ///     mo-jmap-session 1 https://example.com/.well-known/jmap https://api.example.com/jmap/session
    ///     {"apiUrl":"https://api.example.com/jmap/api/", …}
    ///
    /// Best effort: a session that does not read, or was kept for another address, is fetched again.
    public static func jmapSession(in directory: String, configured: String) -> (address: String, bytes: [UInt8])? {
        guard case .success(let bytes) = readWholeFile(directory + "/jmap-session"), let end = bytes.firstIndex(of: 0x0A) else {
            return nil
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self).split(separator: " ")
        guard head.count == 4, head[0] == "mo-jmap-session", head[1] == "1", head[2] == configured else { return nil }
        return (String(head[3]), Array(bytes[(end + 1)...]))
    }

    public static func saveJMAPSession(_ bytes: [UInt8], in directory: String, configured: String, address: String) {
        guard !configured.contains(" "), !address.contains(" ") else { return }
        _ = makeDirectories(directory)
        _ = replaceFileAtomically(directory + "/jmap-session", Array("mo-jmap-session 1 \(configured) \(address)\n".utf8) + bytes)
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

/// All Mail as a Gmail-mode run that changed nothing on the server saw it, with each view's count: when All
/// Mail shows the same UIDVALIDITY, UIDNEXT, HIGHESTMODSEQ and EXISTS again, nothing arrived, changed or
/// left since (an expunge lowers EXISTS, an arrival moves UIDNEXT, a flag or label change HIGHESTMODSEQ),
/// and a run need not search it.
public struct GmailMark: Sendable, Equatable {
    public var uidValidity: UInt32
    public var uidNext: UInt32
    public var highestModSeq: UInt64
    public var exists: UInt32
    /// View name → its messages.
    public var counts: [String: UInt32]

    public init(uidValidity: UInt32, uidNext: UInt32, highestModSeq: UInt64, exists: UInt32, counts: [String: UInt32]) {
        self.uidValidity = uidValidity
        self.uidNext = uidNext
        self.highestModSeq = highestModSeq
        self.exists = exists
        self.counts = counts
    }

    var line: String {
        "mark \(uidValidity) \(uidNext) \(highestModSeq) \(exists)"
            + counts.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
    }

    /// Strict: five fields and `NAME=COUNT` pairs, else nil.
    init?(line: String) {
        let f = line.split(separator: " ")
        guard f.count >= 5, f[0] == "mark", let v = UInt32(f[1]), let n = UInt32(f[2]), let m = UInt64(f[3]), let e = UInt32(f[4]) else {
            return nil
        }
        var counts: [String: UInt32] = [:]
        for pair in f.dropFirst(5) {
            let kv = pair.split(separator: "=", maxSplits: 1)
            guard kv.count == 2, let c = UInt32(kv[1]), counts[String(kv[0])] == nil else { return nil }
            counts[String(kv[0])] = c
        }
        self.init(uidValidity: v, uidNext: n, highestModSeq: m, exists: e, counts: counts)
    }
}
