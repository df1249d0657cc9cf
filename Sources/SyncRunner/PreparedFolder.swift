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

/// One folder's run, in three phases, each a value set by one step:
/// - the listing, set by `prepare` (its paths, and `CrashSettling`): the state (replayed), the table of
///   pairs the plan starts from, the local files and the server's listing (only what changed where the
///   fast paths allowed), the selection, the keyword table, the directories' times. `MoveDetector` and the
///   plan's execution keep it current as files and pairs change.
/// - `prefetch`, set by `prepare` while the mailbox is selected: the new messages' keys and bodies.
/// - `run`, what `finish` learns on the way: tainted and cleaned files, its own changes' mod-sequences,
///   the letters the server will not store.
/// It owns the folder's `summary` (the notes so far, also when a step fails). Between `prepare` and
/// `finish` the account's `MoveDetector` may move messages between prepared folders. `finish`
/// (`PreparedFolder+Finish.swift`) plans and executes, over the connection it is handed, and commits.
///
/// The methods live by concept: `+Listing` (the full path, the scan, the server's listing),
/// `+FastPaths` (an unchanged folder, server-only changes), `+Stamps` (directory times and own changes),
/// `+Moves` (what `MoveDetector` reads and changes), `+Finish`, `+Execution`, `+Bodies`, `+Keywords`;
/// crash settling is `CrashSettling`.
final class PreparedFolder {
    /// The pair this run is of: its settings, fixed for the run, are read through it.
    let sync: FolderSync
    var mailbox: MailboxName { sync.mailbox }
    var folder: MaildirFolder { sync.folder }
    var store: FolderStateStore { sync.store }
    var policy: SyncPolicy { sync.policy }
    var dryRun: Bool { sync.dryRun }
    var verbose: (String) -> Void { sync.verbose }
    var planned: (String) -> Void { sync.planned }

    init(_ sync: FolderSync) {
        self.sync = sync
        self.summary = FolderSummary(folder: sync.displayName)
    }

    /// What the run did and noted in this folder; a step's failure reports it with the notes so far.
    var summary: FolderSummary

    /// First half: load state, select, list both sides, settle interrupted intents. Leaves the mailbox
    /// selected. Nothing is planned yet, so an account-level pass can first find messages moved between
    /// folders (see `MoveDetector`). `server`: the store the listing goes over (the account's first connection).
    ///
    /// | what the state header, the directories and a QRESYNC SELECT show | path                                   | result       |
    /// |-------------------------------------------------------------------|----------------------------------------|--------------|
    /// | nothing changed since the last commit                             | nothing read (`quickCheck`)            | `.unchanged` |
    /// | only the server changed, a small change                           | its records only (`listServerChanges`) | `.listed`    |
    /// | anything else                                                     | the full path (`listWhole`)            | `.listed`    |
    /// | (a dry run's mailbox it would create)                             | the folder only (`listLocalOnly`)      | `.listed`    |
    func prepare(on server: any ServerStore) throws -> Preparation {
        defer { CrashPoint.pause("listed:" + summary.folder) }
        guard sync.onServer else {
            try listLocalOnly()
            return .listed
        }
        var header: FolderState?
        switch try quickCheck(on: server) {
        case .unchanged:
            verbose("  unchanged since the last run: nothing read")
            return .unchanged
        case .serverOnly(let h, let s):
            if try listServerChanges(header: h, selected: s, on: server) { return .listed }
            header = h
        case .full(let h):
            header = h
        }
        try listWhole(header: header, on: server)
        return .listed
    }

    /// What `prepare` found.
    enum Preparation {
        /// Neither side changed since the last commit: nothing to finish (the summary says nothing).
        case unchanged
        /// Both sides listed, intents of an interrupted run settled: `finish` plans and performs.
        case listed
    }

    // MARK: - The listing: set by `prepare`, kept current by `MoveDetector` and the plan's execution

    /// The folder's state as loaded (and replayed); the table of pairs the plan starts from.
    var state = FolderState(mailbox: "")
    var table = RecordTable([])
    /// The local files (only the unsettled ones after a focused scan).
    var localByUnique: [String: LocalFile] = [:]
    /// The server's messages in Maildir letters (only what changed, where QRESYNC allowed), and whether
    /// they were listed whole (not just the changes since the saved mod-sequence); the selection.
    var remote: [UInt32: MaildirFlags] = [:]
    var remoteListedWhole = false
    var selected = ServerListing(mailbox: MailboxName(""))
    /// The folder's keyword table, and its lock (`MaildirKeywords.lock`), held from loading the table to
    /// the end of `finish`, so no other writer gives a letter another meaning meanwhile.
    var translation = FlagTranslation(keywords: MaildirKeywords())
    var keywordsLock: FileLock?
    /// The keywords beyond the letters, on each side (PreparedFolder+ExtraKeywords.swift).
    var extra = ExtraKeywordSides()
    /// Files `mo-index move` re-mapped into this folder (`RemappedFiles`).
    var remappedByIndex = Set<String>()
    /// The UIDs whose records this run loaded, when it loaded only some (server-only changes); nil when
    /// it loaded all. The table then holds only those (the journal holds the run's changes to them).
    var loadedUIDs: Set<UInt32>?
    /// Whether a focused full run let the settled records go (`keepOnlyUnsettled`). Unlike `loadedUIDs`,
    /// the deletion guard is still judged by the plan (with `settledCount` pairs beside it).
    var focused = false
    var settledCount = 0
    /// Pairs left alone this run, neither side changed, rather than read as a deletion: a file here under a
    /// name the Maildir code refuses (`MaildirScan.refusedUniques`, with a note), a local deletion waiting
    /// on a stranded placeholder, a local move waiting on its claim (`MoveDetector+Claims`).
    var held = Set<String>()
    /// Files moved here whose message the server no longer had to move (another device moved or deleted it
    /// between this run's listing and its MOVE: no COPYUID): not uploaded this run, whose listing of this
    /// folder came before that other move. The next run pairs each with the moved message by its key, or
    /// uploads it when there is none.
    var uploadsDeferred = Set<String>()
    /// The folder's window as judged for this run's plan (`judgeWindow`); nil: none, or nothing to judge.
    var window: SyncWindow?
    /// What the run knows of the directories' times, for the stamp its commit may write (PreparedFolder+Stamps.swift).
    var times = DirectoryTimes()

    // MARK: - The other phases

    /// What `prepare` fetched ahead while the mailbox was selected (PreparedFolder+Bodies.swift).
    var prefetch = Prefetch()
    /// What `finish` learned on the way.
    var run = RunNotes()

    /// Fetches at most this many messages per UID FETCH command (bounds a command's reply, not memory:
    /// bodies stream to disk).
    static let fetchChunk = 500

    /// Selects the mailbox again when another was selected since `prepare` (account-level passes, another
    /// folder's finish, a worker's connection); the listing from `prepare` stays the basis of the plan. Called
    /// only before a command that needs the selection, so a finish that sends nothing costs no SELECT.
    func ensureSelected(on server: any ServerStore) throws {
        guard server.openFolder != mailbox else { return }
        let again = try server.open(mailbox, since: nil)
        guard again.uidValidity == selected.uidValidity else {
            throw IMAPError.epochMoved(server: server.endpoint, mailbox)
        }
    }

    /// The UIDNEXT and mod-sequence the state holds once this run is committed: the mod-sequence of the
    /// SELECT, advanced past this run's own changes where the server showed them to be only its own.
    var serverMarks: (uidNext: UInt32, modSeq: UInt64) {
        var modSeq = ModSeqAdvance(base: selected.highestModSeq?.value ?? 0)
        for v in run.ownChanges.modSeqs { modSeq.noteOwn(v) }
        for v in run.ownChanges.completions { modSeq.noteCompletion(v, foreignSeen: run.ownChanges.foreignSeen) }
        return (
            selected.uidNext ?? (max(remote.keys.max() ?? 0, run.releasedMaxUID) + 1),
            selected.noModSeq ? 0 : modSeq.advanced
        )
    }

    func noteOwn(_ c: OwnChanges) {
        run.ownChanges.modSeqs += c.modSeqs
        run.ownChanges.completions += c.completions
        run.ownChanges.foreignSeen = run.ownChanges.foreignSeen || c.foreignSeen
    }

    /// Whether the last commit already says all there is: no uncommitted or queued entry (from an
    /// interrupted run, or this run's moves), and the same server marks and directory stamp.
    func stateIsCurrent(stamp: LocalStamp?) -> Bool {
        let marks = serverMarks
        return store.isCommitted && store.stateFileExists
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
        if uid != 0 { run.forgotten[uid] = unique }
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

/// What `prepare` fetches ahead while it has the mailbox selected. A SELECT is what costs on the server
/// (Dovecot re-reads a Maildir folder changed within the last second on every SELECT of it), and one header
/// or body FETCH in the same selection costs almost nothing; pairing, `MoveDetector` and a small `finish`
/// then need no second SELECT. Only for a modest number of new messages, in a folder synced before.
struct Prefetch {
    /// Keys (Message-ID, size) of the server's new messages, and the UIDs they were asked for (a UID
    /// without a key was asked and had none).
    var keys: [UInt32: MessageKey] = [:]
    var keysFetched = Set<UInt32>()
    /// Bodies of new server messages: sealed tmp/ files, never announced nor linked until a fetch action
    /// takes them (PreparedFolder+Bodies.swift).
    var bodies: [UInt32: (pending: PendingDelivery, bytes: Int)] = [:]
}

/// What `finish` learns on the way, read by its later steps and by the commit.
struct RunNotes {
    /// Local files carrying another syncer's download headers (X-TUID...): cleaned when adopted.
    var tainted = Set<String>()
    var cleaned = 0
    /// Files re-mapped by `mo-index move` that this run met (their entries are dropped after the commit).
    var metRemapped = Set<String>()
    /// Keyword letters the server will not store here (`FlagTranslation.unstorableLetters`).
    var unstorable: MaildirFlags = []
    /// The highest UID of `remote` when it was released after planning.
    var releasedMaxUID: UInt32 = 0
    /// What the server said of the mod-sequences of this run's STOREs, expunges and moves in this mailbox.
    var ownChanges = OwnChanges()
    /// New messages the fetch left for a later run (the daily download allowance, or the server's
    /// OVERQUOTA), and whether it was the server that refused.
    var deferred = 0
    var overQuota = false
    /// The pairs the run forgot (a side deleted), by UID, with their unique names.
    var forgotten: [UInt32: String] = [:]
    /// The server changed or removed the message of a held pair (`PreparedFolder.held`).
    var heldChanged = false
}
