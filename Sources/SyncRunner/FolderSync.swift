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

/// Syncs one mailbox with one Maildir folder: load state (replaying the journal), list both sides, plan,
/// then perform the plan with the journal written ahead of every act that creates something.
///
/// Journal discipline: a fetch is announced (`F uid unique`, fsynced; one fsync per batch of bodies, see
/// `deliver`) before its file is linked into the folder, and an upload (`A unique …`, fsynced) before APPEND; after a crash the next run settles these
/// intents by looking (is the file there? did a message with that key appear on the server?) instead of
/// acting twice. Flag changes and deletions are journaled after the act: they are idempotent and a rerun
/// recomputes them from the 3-way merge, so a lost entry costs nothing.
final class FolderSync {
    let mailbox: MailboxName
    let folder: MaildirFolder
    let store: FolderStateStore
    let policy: SyncPolicy
    let dryRun: Bool
    let verbose: (String) -> Void
    /// A dry run's planned actions.
    let planned: (String) -> Void
    var summary: FolderSummary

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
    /// Renames or removals in cur/ or new/ not yet fsynced.
    var localDirectoriesChanged = false
    var cleaned = 0

    /// Fetches at most this many messages per UID FETCH command (bounds a command's reply, not memory:
    /// bodies stream to disk).
    static let fetchChunk = 500

    init(mailbox: MailboxName, folder: MaildirFolder, store: FolderStateStore,
         policy: SyncPolicy, dryRun: Bool, displayName: String, verbose: @escaping (String) -> Void,
         planned: @escaping (String) -> Void = { _ in }) {
        self.mailbox = mailbox
        self.folder = folder
        self.store = store
        self.policy = policy
        self.dryRun = dryRun
        self.verbose = verbose
        self.planned = planned
        self.summary = FolderSummary(folder: displayName)
    }

    /// The folder's state as loaded (and replayed); its listing of the server, in Maildir letters.
    var state = FolderState(mailbox: "")
    var remote: [UInt32: MaildirFlags] = [:]
    /// Whether `remote` was listed whole (not just the changes since the saved mod-sequence).
    var remoteListedWhole = false
    /// Keyword letters the server will not store here (`FlagTranslation.unstorableLetters`), set by `finish`.
    var unstorable: MaildirFlags = []
    /// The highest UID of `remote` when it was released after planning.
    var releasedMaxUID: UInt32 = 0
    var prepared = false
    /// `prepare` found both sides unchanged since the last commit without reading the records.
    var skipped = false

    /// First half: load state, select, list both sides, settle interrupted intents. Leaves the mailbox
    /// selected. Nothing is planned yet, so an account-level pass can first find messages moved between
    /// folders (see `MoveDetector`). `imap`: the connection the listing goes over (the account's first).
    func prepare(on imap: IMAPConnection) throws {
        var header: FolderState?
        switch try quickCheck(on: imap) {
        case .unchanged:
            verbose("  unchanged since the last run: nothing read")
            skipped = true
            prepared = true
            return
        case .serverOnly(let h, let s):
            if try prepareServerChanges(header: h, selected: s, on: imap) {
                prepared = true
                return
            }
            header = h
        case .full(let h):
            header = h
        }
        let wireName = String(decoding: mailbox.wire, as: UTF8.self)
        // With a committed state and no journal, SELECT goes out first, and the state is loaded and the
        // folder scanned while the server prepares its answer (tens of milliseconds for a large mailbox
        // changed lately). The scan then settles by the files' names alone, and what the server changed
        // is taken back out of what it settled once the answer is in (`unsettleServerChanges`).
        let early = try beginSelectEarly(header: header, on: imap)
        let replay: Replay, qresync: Bool
        do {
            replay = try store.load(mailbox: wireName)
            state = replay.state
            table = replay.table

            let savedModSeq = ModSequence(state.highestModSeq)
            let canResync = state.uidValidity != 0 && state.highestModSeq > 0 && savedModSeq != nil
            if early == nil {
                selected = try imap.select(mailbox, qresync: canResync
                    ? QResyncParameters(uidValidity: state.uidValidity, modSeq: savedModSeq!) : nil)
            }
            if !folder.exists && !dryRun { try folder.create() }
            translation = try loadKeywords()
            noteScanTimes(folder.stamp()?.stamp, committed: replay.state.localStamp)
            qresync = canResync && imap.enabled.contains(.qresync)
            try scanFolder(settling: qresync && (early != nil || selected.uidValidity == state.uidValidity),
                           changedUIDs: early == nil ? serverChangedUIDs : [])
        } catch {
            // The answer must be read before anything else goes over the connection (a folder's error
            // ends only its own sync; the run goes on with the next folder).
            if let early { _ = try? imap.finishSelect(early) }
            throw error
        }
        if let early { selected = try imap.finishSelect(early) }

        let validityChanged = state.uidValidity != 0 && selected.uidValidity != state.uidValidity
        if validityChanged {
            // UIDs no longer name the same messages: drop every pair and re-pair by Message-ID and size.
            summary.notes.append("UIDVALIDITY changed (\(state.uidValidity) → \(selected.uidValidity)); "
                                 + "messages re-paired by Message-ID and size, nothing transferred twice")
            let settledAny = table.settledCount > 0
            table = RecordTable([])
            state = FolderState(mailbox: wireName)
            if settledAny { localByUnique = [:]; try scanFolder(settling: false, changedUIDs: []) }
        } else if early != nil && qresync {
            try unsettleServerChanges()
        }
        let incremental = qresync && !validityChanged

        remote = try listRemote(state: state, incremental: incremental, on: imap)
        remoteListedWhole = !incremental

        if !dryRun { try settle(replay, remote: &remote, on: imap) }
        keepOnlyUnsettled(journaled: store.hasJournal)
        try fetchNewKeys(on: imap)
        try prefetchNewBodies(on: imap)
        prepared = true
    }

    /// Sends the QRESYNC SELECT before the state is loaded, when the committed file alone holds what it
    /// needs (no journal may change the mod-sequence); nil otherwise (then `prepare` selects after loading).
    /// `header`: the committed header if `quickCheck` read it already.
    func beginSelectEarly(header known: FolderState?, on imap: IMAPConnection) throws -> PendingSelect? {
        guard !store.hasJournal, imap.enabled.contains(.qresync), let header = try known ?? store.loadHeader(),
              header.uidValidity != 0, header.highestModSeq > 0, let modSeq = ModSequence(header.highestModSeq) else { return nil }
        return try imap.beginSelect(mailbox, qresync: QResyncParameters(uidValidity: header.uidValidity, modSeq: modSeq))
    }

    /// Selects the mailbox again when another was selected since `prepare` (account-level passes, another
    /// folder's finish, a worker's connection); the listing from `prepare` stays the basis of the plan. Called
    /// only before a command that needs the selection, so a finish that sends nothing costs no SELECT.
    func ensureSelected(on imap: IMAPConnection) throws {
        guard imap.selectedMailbox != mailbox else { return }
        let again = try imap.select(mailbox)
        guard again.uidValidity == selected.uidValidity else {
            throw IMAPError(server: "\(imap.settings.host):\(imap.settings.port)",
                            .unexpected("UIDVALIDITY of \(mailbox) changed during the run; it will be handled next run"))
        }
    }

    /// Scans the folder into `localByUnique`. With `settling`, a file exactly as recorded whose message is
    /// not in `changedUIDs` settles its pair by its name alone (`RecordTable.settle`): the plan, the
    /// listing and memory then hold only what changed on either side.
    func scanFolder(settling: Bool, changedUIDs: Set<UInt32>) throws {
        guard folder.exists else { return }
        var duplicates: [String] = [], kept = Set<String>()
        let scan = try MaildirScanner.scan(folder, keep: !settling ? nil : { [self] name in
            // A second file of a name already kept is kept too, for the duplicate note below.
            if kept.contains(name.unique) { return true }
            switch table.settle(unique: name.unique, flags: name.flags.intersection(syncableFlags), changedUIDs: changedUIDs) {
            case .settled: return false
            case .duplicate: duplicates.append(name.unique); return false
            case .unsettled: kept.insert(name.unique); return true
            }
        })
        summary.notes += scan.warnings
        if !scan.warnings.isEmpty || !duplicates.isEmpty { passedOver = true }
        for unique in duplicates { summary.notes.append("a second file with the unique name \(unique); left alone") }
        for entry in scan.entries {
            if entry.size == 0 && table.record(unique: entry.unique) == nil {
                // No message (servers refuse an empty one): left alone, and looked at again next run, as a
                // writer that bypasses tmp/ may still be filling it in place. A paired one is a message.
                summary.notes.append("\(quotedForMessage(entry.path)): empty file; not uploaded")
                passedOver = true
                continue
            }
            if localByUnique[entry.unique] == nil {
                localByUnique[entry.unique] = LocalFile(entry)
            } else {
                summary.notes.append("\(entry.path): a second file with the unique name \(entry.unique); left alone")
                passedOver = true
            }
        }
    }

    /// After a scan that settled before the server's answer: the pairs whose messages the server changed
    /// or expunged are unsettled again, and their files found (by name, else by a filtered scan).
    func unsettleServerChanges() throws {
        var back: [(unique: String, flags: MaildirFlags)] = []
        for uid in serverChangedUIDs { if let r = table.unsettle(uid: uid) { back.append((r.unique, r.flags)) } }
        guard !back.isEmpty else { return }
        let entries = try MaildirScanner.locate(folder, back)
            ?? MaildirScanner.scan(folder, only: Set(back.map(\.unique))).entries
        for entry in entries where localByUnique[entry.unique] == nil { localByUnique[entry.unique] = LocalFile(entry) }
    }

    /// Second half: plan against the prepared listings and perform the plan, then commit the state.
    /// `imap`: the connection it works on (in a parallel run, its worker's; see `ParallelFolders`).
    func finish(on imap: IMAPConnection) throws -> FolderSummary {
        precondition(prepared, "finish() before prepare()")
        defer { keywordsLock = nil }
        if skipped { return summary }
        defer { discardPrefetched() }
        unstorable = FlagTranslation.unstorableLetters(translation.keywords, permanentFlags: selected.permanentFlags)

        // Both sides equal the saved pairs: nothing to plan. (The common case of a timer-driven run, so
        // it skips the planner's work on large folders.)
        if looksIdle && !translation.changed && stateIsCurrent(stamp: commitStamp()) { return summary }

        // With only some records loaded, the deletion guard was judged against the whole folder already.
        var planPolicy = policy
        if loadedUIDs != nil { planPolicy.force = true }

        // Keys are needed only where both sides hold messages no pair explains.
        let unpairedLocal = self.unpairedLocal
        let unpairedRemote = self.unpairedRemote
        var localKeys: [String: MessageKey] = [:], remoteKeys: [UInt32: MessageKey] = [:]
        if !unpairedLocal.isEmpty && !unpairedRemote.isEmpty {
            let computed = try MessageKeys.localWithTaint(unpairedLocal.compactMap { localByUnique[$0] })
            localKeys = computed.keys
            tainted = computed.tainted
            remoteKeys = try self.remoteKeys(unpairedRemote,
                                                wantHashesForSizes: Set(localKeys.values.filter(\.isContentHash).map(\.wireSize)),
                                                on: imap)
        }

        var plan: FolderPlan? = SyncPlanner.plan(
            records: Array(table.unsettledRecords),   // the planner orders them itself
            local: localByUnique.values.map { LocalMessage(unique: $0.unique, flags: $0.flags) },
            remote: remote.map { RemoteMessage(uid: $0.key, flags: $0.value) },
            policy: planPolicy, localKeys: localKeys, remoteKeys: remoteKeys, settled: settledCount,
            unstorable: unstorable)

        // The listing is not needed past the plan (only its highest UID, for a server without UIDNEXT).
        releasedMaxUID = remote.keys.max() ?? 0
        remote = [:]
        let acted = !plan!.actions.isEmpty
        if let stop = plan!.stoppedBy {
            summary.stopped = stop.description
            try saveKeywords()   // records of this run's journal may use letters the listing assigned
            try store.flush()
            return summary
        }
        if dryRun {
            for action in plan!.actions { planned("\(summary.folder): \(action)") }
            count(plan!)
            return summary
        }

        if acted {
            store.append(.status(uidValidity: selected.uidValidity, uidNext: state.uidNext, highestModSeq: state.highestModSeq))
        }
        // Letters the listing assigned are saved before any file carries them: a crash in between must not
        // leave a file whose letter the table does not name.
        try saveKeywords()
        try execute(&plan, on: imap)

        if cleaned > 0 {
            summary.notes.append("removed the X-TUID/X-OfflineIMAP header another syncer had added from \(cleaned) adopted message(s)")
        }
        try saveKeywords()
        if !translation.unmapped.isEmpty {
            summary.notes.append("keywords beyond the 26 a Maildir folder can hold stay on the server: "
                                 + translation.unmapped.sorted().joined(separator: " "))
        }
        // A run that changed nothing writes nothing (no write, no fsync).
        let stamp = commitStamp()
        if !acted && stateIsCurrent(stamp: stamp) { return summary }
        let marks = serverMarks
        state.localStamp = stamp
        state.uidValidity = selected.uidValidity
        state.uidNext = marks.uidNext
        // Only now may the mod-sequence advance: everything up to it is reflected in the records.
        state.highestModSeq = marks.modSeq
        CrashPoint.step("commit: before")
        try store.commit(state, table: table, replacing: loadedUIDs ?? focusUIDs)
        CrashPoint.step("commit: after")
        if !metRemapped.isEmpty { try? RemappedFiles.remove(metRemapped, folder: folder.path) }
        return summary
    }

    /// The UIDNEXT and mod-sequence the state holds once this run is committed: the mod-sequence of the
    /// SELECT, advanced past this run's own changes where the server showed them to be only its own.
    var serverMarks: (uidNext: UInt32, modSeq: UInt64) {
        var modSeq = ModSeqAdvance(base: selected.highestModSeq?.value ?? 0)
        for v in ownChanges.modSeqs { modSeq.noteOwn(v) }
        for v in ownChanges.completions { modSeq.noteCompletion(v, foreignSeen: ownChanges.foreignSeen) }
        return (selected.uidNext ?? (max(remote.keys.max() ?? 0, releasedMaxUID) + 1),
                selected.noModSeq ? 0 : modSeq.advanced)
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

    // Stored state of the paths and the execution (their methods live in FolderSync+Paths.swift and
    // FolderSync+Execution.swift).

    /// The directories' times as this run last saw them: taken before the scan (or equal to the stamp
    /// the partial path trusted), and again after each of its own changes. A different time before an
    /// own change, or at the commit, means another program (a mail client) changed the folder meanwhile.
    var expectedTimes: LocalStamp?
    /// The times before the scan, and the stamp of the last commit (see `DirectoryStamp.verdict`).
    var scanTimes: LocalStamp?
    var committedStamp: LocalStamp?
    var foreignChange = false
    var inOwnChange = false
    /// The run passed over a file of cur/ or new/ (the scan could not take it, it is empty or a second
    /// file of a unique name, or it could not be read for upload). A stamp says every file is reflected in the state, so none is committed:
    /// the next run scans again, and finds the file once it can be read (chmod does not move a
    /// directory's time, so a stamp would hide it for good).
    var passedOver = false
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
    /// Bodies of new server messages fetched in `prepare` (sealed tmp/ files; see FolderSync+Bodies.swift).
    var prefetched: [UInt32: (pending: PendingDelivery, bytes: Int)] = [:]

    // MARK: - Moves between folders (driven by MoveDetector)

    /// After `prepare`: whether both sides match the saved pairs exactly (nothing new, gone or re-flagged),
    /// so `finish` will have nothing to do. Used to spend extra connections only on folders with work.
    var looksIdle: Bool {
        let focus = table.count - table.settledCount   // 0 settled once `keepOnlyUnsettled` let them go
        guard localByUnique.count == focus, remote.count == focus else { return false }
        for r in table.unsettledRecords {
            guard !r.unique.isEmpty, r.uid != 0,
                  let l = localByUnique[r.unique], l.flags.intersection(syncableFlags) == r.flags,
                  remote[r.uid] == r.flags else { return false }
        }
        return true
    }

    /// After `prepare`: the messages no pair explains on either side, i.e. at most what `finish` will fetch
    /// or upload (some may pair by key instead), less the bodies already fetched. Decides whether more
    /// connections pay (`ConnectionPlan`).
    var pendingTransfers: Int { skipped ? 0 : unpairedLocal.count + unpairedRemote.count - prefetched.count }

    /// After `prepare`: nothing here can be half of a move between folders (no pair gone from one side,
    /// nothing unpaired on either side), so `finish` may run at once, while the mailbox is still selected.
    var standsAlone: Bool {
        skipped || (unpairedLocal.isEmpty && unpairedRemote.isEmpty && vanishedLocally.isEmpty && vanishedRemotely.isEmpty)
    }

    /// Pairs whose local file is gone while the server still has the message (candidates for a local move).
    var vanishedLocally: [SyncRecord] {
        table.unsettledRecords.filter { $0.uid != 0 && !$0.unique.isEmpty && localByUnique[$0.unique] == nil && remote[$0.uid] != nil }
    }

    /// Pairs whose server message is gone while the local file remains (candidates for a server-side move).
    var vanishedRemotely: [SyncRecord] {
        table.unsettledRecords.filter { $0.uid != 0 && !$0.unique.isEmpty && localByUnique[$0.unique] != nil && remote[$0.uid] == nil }
    }

    /// Local files no pair explains.
    var unpairedLocal: [String] { localByUnique.keys.filter { table.record(unique: $0) == nil } }
    /// Server messages no pair explains.
    var unpairedRemote: [UInt32] { remote.keys.filter { table.record(uid: $0) == nil } }

    /// A message left this folder by a move: forget its pair (it lives on in the destination's).
    func detachMoved(_ r: SyncRecord) {
        forget(uid: r.uid, unique: r.unique)
        remote[r.uid] = nil
        localByUnique[r.unique] = nil
        summary.moved += 1
    }

    /// A message arrived by a move: record the pair, with the base flags it had in the source folder.
    func attachMoved(_ r: SyncRecord, remoteFlags: MaildirFlags, localFile: LocalFile?) {
        record(r)
        remote[r.uid] = remoteFlags
        if let localFile { localByUnique[r.unique] = localFile }
    }

    func localFile(_ unique: String) -> LocalFile? { localByUnique[unique] }

    func flushJournal() throws { try store.flush() }

    /// Rewrites an adopted file without the headers another syncer added, so the Maildir holds the server's
    /// bytes. Same name, same flags (`MaildirFolder.replaceContent`: a crash leaves the old file or the new
    /// one). A file that cannot be read is left as it is: best effort, the pairing stands either way.
    func removeForeignHeaders(_ path: String) throws {
        guard let bytes = try? MessageFile.contents(of: path) else { return }
        let clean = MessageKeys.withoutForeignHeaders(bytes)
        guard clean.count != bytes.count else { return }
        try ownChange { try folder.replaceContent(path: path, with: clean) }
        cleaned += 1
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

    func count(_ plan: FolderPlan) {
        let s = plan.summary
        summary.new = s.new
        summary.uploaded = s.uploaded
        summary.flagsDown = s.flagsDown
        summary.flagsUp = s.flagsUp
        summary.deletedBoth += deletedOnBothSides(plan.actions)
        for a in plan.actions {
            if case .deleteLocal = a { summary.deletedLocal += 1 }
            if case .deleteRemote = a { summary.deletedRemote += 1 }
            if case .adopt = a { summary.adopted += 1 }
        }
    }

    /// The messages `actions` delete on both sides (a pair whose file and UID both go): one deletion each
    /// in the summary line. Read before the plan changes the records.
    func deletedOnBothSides(_ actions: [SyncAction]) -> Int {
        var here = Set<String>()
        for case .deleteLocal(let unique) in actions { here.insert(unique) }
        guard !here.isEmpty else { return 0 }
        return actions.count {
            guard case .deleteRemote(let uid) = $0, let r = table.record(uid: uid) else { return false }
            return here.contains(r.unique)
        }
    }
}
