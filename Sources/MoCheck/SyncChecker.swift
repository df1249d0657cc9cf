#if canImport(Glibc)
    import Glibc
#endif
import ClientSettings
import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import MoCore
import OAuth2
import SyncState

/// Compares a server account with its Maildir tree, folder by folder: the multiset of (SHA-256 of the
/// message bytes with CRLF → LF, flags) must be equal on both sides, and no message may appear more
/// often on one side than the other.
///
/// It is written independently of the sync code (its own flag naming, its own listing) so that a bug in
/// the sync is not mirrored here. Flags are compared by name: `\Seen` ↔ S, `\Answered` ↔ R,
/// `\Flagged` ↔ F, `\Deleted` ↔ T, `\Draft` ↔ D, `$Forwarded` ↔ P, keywords ↔ lowercase letters through
/// the folder's `dovecot-keywords`, and the keywords beyond the letters from its `mo-keywords`.
///
/// A folder with a date window (`max-age`) may hold fewer messages than the server: a server message that
/// arrived (INTERNALDATE) before the window's first day and that no flag keeps (flagged, unread) may be
/// absent from the Maildir. Such messages are counted in `outside`, not reported; the window's first day
/// is computed here from the configuration, not taken from the sync's state.
public enum SyncChecker {
    public struct Report: Sendable {
        public var folders: [String: Int] = [:]  // folder → messages checked
        /// folder → server messages outside its window that the Maildir does not hold
        public var outside: [String: Int] = [:]
        /// folder → placeholders (`max-size`) that stand for their server messages
        public var placeholders: [String: Int] = [:]
        public var problems: [String] = []
        public var ok: Bool { problems.isEmpty }
    }

    /// Throws the config error for a send-only account (nothing to check).
    public static func check(account: Account, config: Config) throws -> Report {
        let synced = try config.syncPair(of: account)
        if let jmap = synced.jmap {
            let tokens = AccountSettings.tokenBroker(for: account, stateDirectory: config.stateDirectory)
            return try checkJMAP(
                jmap, account: account, maildir: synced.maildir,
                authorization: AccountSettings.jmapAuthorization(jmap, account: account.name, tokens: tokens),
                vocabulary: TagVocabulary(extra: config.keywords.map { ($0.keyword, $0.tag) }))
        }
        let pair = try config.imapServer(of: account, for: "mo-sync-check")
        let imap = try IMAPConnection.open(
            AccountSettings.imap(
                pair.imap, account: account.name,
                tokens: AccountSettings.tokenBroker(for: account, stateDirectory: config.stateDirectory)))
        defer { imap.logout() }
        if AccountFiles.isGmailMode(config.stateDirectory + "/" + account.name) {
            return try checkGmail(
                imap, account: account, maildir: pair.maildir,
                vocabulary: TagVocabulary(extra: config.keywords.map { ($0.keyword, $0.tag) }))
        }
        var report = Report()
        let mapper = FolderNameMapper(layout: account.layout)
        var seenPaths = Set<String>()
        for box in try imap.list() where box.isSelectable {
            let delimiter = box.delimiter.map { Character(Unicode.Scalar($0)) }
            let name = box.mailbox.decoded ?? String(decoding: box.mailbox.wire, as: UTF8.self)
            guard account.folders.includes(name, delimiter: delimiter) else { continue }
            guard
                let path = try? mapper.localPath(
                    forMailbox: String(decoding: box.mailbox.wire, as: UTF8.self),
                    delimiter: delimiter
                ).path,
                let absolute = FolderNameMapper.absolutePath(root: pair.maildir, relative: path)
            else {
                report.problems.append("\(name): no local path")
                continue
            }
            seenPaths.insert(path)
            let window = Window(account.sync, folder: path.isEmpty ? "INBOX" : path)
            let listed = try serverBodies(imap, box.mailbox, dates: window != nil)
            let flagNames = listed.map { " [" + $0.flags.compactMap(flagName).sorted().joined(separator: " ") + "]" }
            let remote = zip(listed, flagNames).map { $0.hash + $1 }
            let local = try localMessages(absolute)
            report.folders[name] = remote.count
            report.placeholders[name] = local.count { $0.hasPrefix("placeholder:") }
            var mayBeAbsent: [String: Int] = [:]
            if let window {
                for (item, m) in zip(remote, listed) where window.leavesOut(m.date, m.flags) { mayBeAbsent[item, default: 0] += 1 }
            }
            // A placeholder (max-size) stands for its message: its header section, with the same flags.
            let placeholders = zip(remote, zip(listed, flagNames)).map { (item: $0, stand: "placeholder:" + $1.0.headerHash + $1.1) }
            report.outside[name] = compare(
                folder: name, remote: remote, local: local, mayBeAbsent: mayBeAbsent, standIns: placeholders, into: &report.problems)
        }
        if access(pair.maildir, F_OK) == 0 {
            for path in try MaildirScanner.listFolders(root: pair.maildir, layout: account.layout).folders
            where !seenPaths.contains(path) {
                let count = (try? localMessages(FolderNameMapper.absolutePath(root: pair.maildir, relative: path) ?? "").count) ?? 0
                if count > 0 { report.problems.append("\(path): \(count) local message(s) in a folder the server lacks") }
            }
        }
        return report
    }

    /// (hash, flag names) of every message in a mailbox.
    static func serverMessages(_ imap: IMAPConnection, _ mailbox: MailboxName) throws -> [String] {
        try serverBodies(imap, mailbox).map { $0.hash + " [" + $0.flags.compactMap(flagName).sorted().joined(separator: " ") + "]" }
    }

    /// Every message of a mailbox: the SHA-256 of its bytes (CRLF → LF), its flags, and with `labels` its
    /// Gmail labels.
    /// `headerHash`: of the header section alone (to its blank line), for a placeholder (`max-size`).
    static func serverBodies(_ imap: IMAPConnection, _ mailbox: MailboxName, labels: Bool = false, dates: Bool = false) throws -> [(
        hash: String, flags: [Flag], labels: [[UInt8]], date: InternalDate?, headerHash: String
    )] {
        let selected = try imap.select(mailbox, readOnly: true)
        guard selected.exists > 0 else { return [] }
        var out: [(hash: String, flags: [Flag], labels: [[UInt8]], date: InternalDate?, headerHash: String)] = []
        var flags: [Flag] = [], gmailLabels: [[UInt8]] = [], date: InternalDate?
        var hasher = SHA256()
        var header = HeaderHasher()
        var lf = CRLFToLF()
        let items: [FetchItem] = [.uid, .flags, .body()] + (labels ? [.gmailLabels] : []) + (dates ? [.internalDate] : [])
        try imap.fetch(UIDSet(1...UIDSet.star), items: items) { event in
            switch event {
            case .fetchStart: flags = []; gmailLabels = []; date = nil; hasher = SHA256(); header = HeaderHasher(); lf = CRLFToLF()
            case .fetchAttribute(.internalDate(let d)): date = d
            case .fetchAttribute(.flags(let f)): flags = f
            case .fetchAttribute(.gmailLabels(let l)): gmailLabels = l
            case .bodyBytes(let bytes):
                // CRLF → LF, streaming (a CR may end one chunk and its LF start the next).
                var chunk: [UInt8] = []
                lf.convert(bytes, into: &chunk)
                hasher.update(chunk)
                header.feed(chunk)
            case .fetchEnd:
                var rest: [UInt8] = []
                lf.finish(into: &rest)
                hasher.update(rest)
                out.append((hex(hasher.finalize()), flags, gmailLabels, date, header.finish()))
            default: break
            }
        }
        return out
    }

    static func localMessages(_ folderPath: String) throws -> [String] {
        let folder = MaildirFolder(path: folderPath)
        guard folder.exists else { return [] }
        let keywords = try MaildirKeywords.load(folder: folderPath)
        let extra = try ExtraKeywords.load(folder: folderPath)
        var out: [String] = []
        for entry in try MaildirScanner.scan(folder).entries {
            guard case .success(let bytes) = readWholeFile(entry.path) else { continue }
            var names: [String] = []
            for b in entry.flags.letters.utf8 {
                switch b {
                case UInt8(ascii: "S"): names.append("\\seen")
                case UInt8(ascii: "R"): names.append("\\answered")
                case UInt8(ascii: "F"): names.append("\\flagged")
                case UInt8(ascii: "T"): names.append("\\deleted")
                case UInt8(ascii: "D"): names.append("\\draft")
                case UInt8(ascii: "P"): names.append("$forwarded")
                case UInt8(ascii: "a")...UInt8(ascii: "z"):
                    names.append(keywords.keyword(for: b)?.lowercased() ?? "?letter-\(Character(Unicode.Scalar(b)))")
                default: break  // local-only letters are not synced
                }
            }
            for k in extra.keywords(of: entry.unique) { names.append(k.lowercased()) }
            let flags = " [" + names.sorted().joined(separator: " ") + "]"
            if Placeholder.size(firstBytes: bytes.prefix(40)) != nil {
                // Its header section follows our first line.
                var h = HeaderHasher()
                h.feed(Array(bytes.drop { $0 != UInt8(ascii: "\n") }.dropFirst()))
                out.append("placeholder:" + h.finish() + flags)
            } else {
                out.append(SHA256.hex(bytes) + flags)
            }
        }
        return out
    }

    static func flagName(_ f: Flag) -> String? {
        switch f {
        case .recent, .wildcard: nil
        default: f.description.lowercased()
        }
    }

    /// Reports what differs; `mayBeAbsent`: server items a window lets the Maildir lack, up to that many
    /// each. Returns how many of those the Maildir lacks.
    @discardableResult
    /// `standIns`: for server items, a local item that may stand for it (a placeholder).
    static func compare(
        folder: String, remote: [String], local: [String], mayBeAbsent: [String: Int] = [:],
        standIns: [(item: String, stand: String)] = [], into problems: inout [String]
    ) -> Int {
        var counts: [String: Int] = [:]
        for r in remote { counts[r, default: 0] += 1 }
        for l in local { counts[l, default: 0] -= 1 }
        for s in standIns where counts[s.item, default: 0] > 0 && counts[s.stand, default: 0] < 0 {
            counts[s.item, default: 0] -= 1
            counts[s.stand, default: 0] += 1
        }
        var absent = 0
        for (item, allowed) in mayBeAbsent {
            guard let n = counts[item], n > 0 else { continue }
            let taken = min(n, allowed)
            counts[item] = n - taken
            absent += taken
        }
        for (item, n) in counts.sorted(by: { $0.key < $1.key }) where n != 0 {
            let short = String(item.prefix(12)) + "…" + String(item.drop { $0 != " " })
            problems.append(n > 0 ? "\(folder): \(n)× only on the server: \(short)" : "\(folder): \(-n)× only in the Maildir: \(short)")
        }
        return absent
    }

    /// The SHA-256 of a message's header section (LF line ends, through its blank line), fed as it streams.
    struct HeaderHasher {
        private var hasher = SHA256()
        private var last: UInt8 = 0
        private var done = false

        mutating func feed(_ bytes: [UInt8]) {
            guard !done else { return }
            var end = bytes.count
            for (i, b) in bytes.enumerated() {
                if b == UInt8(ascii: "\n") && last == UInt8(ascii: "\n") { end = i + 1; done = true; break }
                last = b
            }
            hasher.update(Array(bytes[..<end]))
        }

        mutating func finish() -> String { SyncChecker.hex(hasher.finalize()) }
    }

    /// A folder's date window as the configuration gives it (the checker's own reading of `max-age`).
    struct Window {
        let firstDay: (year: Int, month: Int, day: Int)
        let keepFlagged: Bool, keepUnread: Bool

        init?(_ sync: SyncConfig, folder: String) {
            switch sync.maxAge(forFolder: folder) {
            case nil: return nil
            case .since(let y, let m, let d)?: firstDay = (y, m, d)
            case .days(let n)?:
                let d = InternalDate(epochSeconds: Int64(time(nil)) - Int64(n) * 86_400)
                firstDay = (d.year, d.month, d.day)
            }
            keepFlagged = sync.maxAgeKeepsFlagged
            keepUnread = sync.maxAgeKeepsUnread
        }

        /// Whether a message that arrived on `date` with `flags` may be missing from the Maildir. A day
        /// earlier than the first day, by the date alone (as IMAP's SEARCH BEFORE compares).
        func leavesOut(_ date: InternalDate?, _ flags: [Flag]) -> Bool {
            guard let date, (date.year, date.month, date.day) < firstDay else { return false }
            if keepFlagged && flags.contains(.flagged) { return false }
            if keepUnread && !flags.contains(.seen) { return false }
            return true
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
