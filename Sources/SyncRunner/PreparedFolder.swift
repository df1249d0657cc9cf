#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import IMAPCodec
import MailMessage
import Maildir
import MoCore
import SyncEngine
import SyncState

/// A folder as `FolderSync.prepare` listed it: the state (replayed), the table of pairs the plan starts
/// from, the local files and the server's listing (only what changed where the fast paths allowed), the
/// selection, and what the run noted on the way (stamps, keys, prefetched bodies). Between `prepare` and
/// `finish` the account's `MoveDetector` may move messages between prepared folders. `finish`
/// (`PreparedFolder+Finish.swift`) plans and executes, over the connection it is handed, and commits.
///
/// The methods live by concept: `+Listing` (the full path, the scan, the server's listing),
/// `+FastPaths` (an unchanged folder, server-only changes), `+Stamps` (directory times and own changes),
/// `+Moves` (what `MoveDetector` reads and changes), `+Finish`, `+Execution`, `+Bodies`, `+Keywords`;
/// crash settling is `CrashSettling`.
final class PreparedFolder {
    /// The pair this listing is of: its settings are read through it, and `summary` below writes through.
    let sync: FolderSync
    var mailbox: MailboxName { sync.mailbox }
    var folder: MaildirFolder { sync.folder }
    var store: FolderStateStore { sync.store }
    var policy: SyncPolicy { sync.policy }
    var dryRun: Bool { sync.dryRun }
    var verbose: (String) -> Void { sync.verbose }
    var planned: (String) -> Void { sync.planned }

    init(_ sync: FolderSync) { self.sync = sync }

    var summary: FolderSummary {
        get { sync.summary }
        _modify { yield &sync.summary }
    }

    var table = RecordTable([])
    var localByUnique: [String: LocalFile] = [:]
    var translation = FlagTranslation(keywords: MaildirKeywords())
    /// The folder's keyword lock (`MaildirKeywords.lock`), held from loading the table to the end of
    /// `finish`, so no other writer gives a letter another meaning meanwhile.
    var keywordsLock: FileLock?
    /// Files `mo-index move` re-mapped into this folder (`RemappedFiles`), and those this run met.
    var remappedByIndex = Set<String>()
    var metRemapped = Set<String>()
    var selected = SelectedMailbox(mailbox: MailboxName(""))
    /// Local files carrying another syncer's download headers (X-TUID...): cleaned when adopted.
    var tainted = Set<String>()
    var cleaned = 0

    /// Fetches at most this many messages per UID FETCH command (bounds a command's reply, not memory:
    /// bodies stream to disk).
    static let fetchChunk = 500

    /// The folder's state as loaded (and replayed); its listing of the server, in Maildir letters.
    var state = FolderState(mailbox: "")
    var remote: [UInt32: MaildirFlags] = [:]
    /// Whether `remote` was listed whole (not just the changes since the saved mod-sequence).
    var remoteListedWhole = false
    /// Keyword letters the server will not store here (`FlagTranslation.unstorableLetters`), set by `finish`.
    var unstorable: MaildirFlags = []
    /// The highest UID of `remote` when it was released after planning.
    var releasedMaxUID: UInt32 = 0

    /// The UIDs whose records this run loaded, when it loaded only some (server-only changes); nil when
    /// it loaded all. The commit carries the other records over from the committed file.
    var loadedUIDs: Set<UInt32>?
    /// The UIDs of the unsettled records a focused full run kept (`keepOnlyUnsettled`); the commit carries
    /// the settled ones over from the committed file. Unlike `loadedUIDs`, the deletion guard is still
    /// judged by the plan (with `settledCount` pairs beside it).
    var focusUIDs: Set<UInt32>?
    var settledCount = 0
    /// Keys (Message-ID, size) of the server's new messages, fetched while `prepare` has the mailbox
    /// selected: pairing and `MoveDetector` then need no second SELECT of it. A SELECT is what costs on the
    /// server (Dovecot re-reads a Maildir folder changed within the last second on every SELECT of it),
    /// and one header FETCH in the same selection costs almost nothing. Only for a modest number of new
    /// messages, in a folder synced before: a first sync's are paired by `finish` as needed.
    var newKeys: [UInt32: MessageKey] = [:]
    var newKeysFetched = Set<UInt32>()
    /// Bodies of new server messages fetched in `prepare` (sealed tmp/ files; see PreparedFolder+Bodies.swift).
    var prefetched: [UInt32: (pending: PendingDelivery, bytes: Int)] = [:]

    /// What the run knows of the directories' times, for the stamp its commit may write (PreparedFolder+Stamps.swift).
    var times = DirectoryTimes()

    /// Selects the mailbox again when another was selected since `prepare` (account-level passes, another
    /// folder's finish, a worker's connection); the listing from `prepare` stays the basis of the plan. Called
    /// only before a command that needs the selection, so a finish that sends nothing costs no SELECT.
    func ensureSelected(on imap: IMAPConnection) throws {
        guard imap.selectedMailbox != mailbox else { return }
        let again = try imap.select(mailbox)
        guard again.uidValidity == selected.uidValidity else {
            throw IMAPError(
                server: "\(imap.settings.host):\(imap.settings.port)",
                .unexpected("UIDVALIDITY of \(mailbox) changed during the run; it will be handled next run"))
        }
    }

    /// The UIDNEXT and mod-sequence the state holds once this run is committed: the mod-sequence of the
    /// SELECT, advanced past this run's own changes where the server showed them to be only its own.
    var serverMarks: (uidNext: UInt32, modSeq: UInt64) {
        var modSeq = ModSeqAdvance(base: selected.highestModSeq?.value ?? 0)
        for v in ownChanges.modSeqs { modSeq.noteOwn(v) }
        for v in ownChanges.completions { modSeq.noteCompletion(v, foreignSeen: ownChanges.foreignSeen) }
        return (
            selected.uidNext ?? (max(remote.keys.max() ?? 0, releasedMaxUID) + 1),
            selected.noModSeq ? 0 : modSeq.advanced
        )
    }

    /// What the server said of the mod-sequences of this run's STOREs, expunges and moves in this mailbox.
    var ownChanges = OwnChanges()

    func noteOwn(_ c: OwnChanges) {
        ownChanges.modSeqs += c.modSeqs
        ownChanges.completions += c.completions
        ownChanges.foreignSeen = ownChanges.foreignSeen || c.foreignSeen
    }

    /// Whether the committed state file already says all there is: no journal or queued entry to fold in
    /// (from an interrupted run, or this run's moves), and the same server marks and directory stamp.
    func stateIsCurrent(stamp: LocalStamp?) -> Bool {
        let marks = serverMarks
        return !store.hasJournal && !store.hasPendingEntries && store.stateFileExists
            && state.uidValidity == selected.uidValidity && state.uidNext == marks.uidNext
            && state.highestModSeq == marks.modSeq && state.localStamp == stamp
    }

    // MARK: - Records

    func record(_ r: SyncRecord) {
        table.upsert(r)
        store.append(.record(r))
    }

    func forget(uid: UInt32, unique: String) {
        table.remove(uid: uid, unique: unique)
        store.append(.drop(uid: uid, unique: unique))
    }

    /// A local message file as the run knows it (kept current across renames).
    struct LocalFile {
        var unique: String
        var path: String
        var flags: MaildirFlags
        var mtimeSeconds: Int64
        init(_ e: MaildirEntry) {
            unique = e.unique
            path = e.path
            flags = e.flags
            mtimeSeconds = e.mtimeSeconds
        }
    }
}
