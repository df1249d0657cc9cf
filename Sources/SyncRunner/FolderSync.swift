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
    /// The connection this folder works on; a parallel run hands each phase the connection of its worker.
    var imap: IMAPConnection
    let mailbox: MailboxName
    let folder: MaildirFolder
    let store: FolderStateStore
    let policy: SyncPolicy
    let dryRun: Bool
    let verbose: (String) -> Void
    var summary: FolderSummary

    private(set) var table = RecordTable([])
    private(set) var localByUnique: [String: LocalFile] = [:]
    private var translation = FlagTranslation(keywords: MaildirKeywords())
    private var selected = SelectedMailbox(mailbox: MailboxName(""))
    /// Local files carrying another syncer's download headers (X-TUID...): cleaned when adopted.
    private var tainted = Set<String>()
    /// Renames or removals in cur/ or new/ not yet fsynced.
    private var localDirectoriesChanged = false
    private var cleaned = 0

    /// Fetches at most this many messages per UID FETCH command (bounds a command's reply, not memory:
    /// bodies stream to disk).
    static let fetchChunk = 500

    init(imap: IMAPConnection, mailbox: MailboxName, folder: MaildirFolder, store: FolderStateStore,
         policy: SyncPolicy, dryRun: Bool, displayName: String, verbose: @escaping (String) -> Void) {
        self.imap = imap
        self.mailbox = mailbox
        self.folder = folder
        self.store = store
        self.policy = policy
        self.dryRun = dryRun
        self.verbose = verbose
        self.summary = FolderSummary(folder: displayName)
    }

    /// The folder's state as loaded (and replayed); its listing of the server, in Maildir letters.
    private(set) var state = FolderState(mailbox: "")
    private(set) var remote: [UInt32: MaildirFlags] = [:]
    /// The highest UID of `remote` when it was released after planning.
    private var releasedMaxUID: UInt32 = 0
    private var prepared = false
    /// `prepare` found both sides unchanged since the last commit without reading the records.
    private(set) var skipped = false

    /// First half: load state, select, list both sides, settle interrupted intents. Leaves the mailbox
    /// selected. Nothing is planned yet, so an account-level pass can first find messages moved between
    /// folders (see `MoveDetector`).
    func prepare() throws {
        switch try quickCheck() {
        case .unchanged:
            verbose("  unchanged since the last run: nothing read")
            skipped = true
            prepared = true
            return
        case .serverOnly(let header, let s):
            if try prepareServerChanges(header: header, selected: s) {
                prepared = true
                return
            }
        case .full:
            break
        }
        let wireName = String(decoding: mailbox.wire, as: UTF8.self)
        // With a committed state and no journal, SELECT goes out first, and the state is loaded and the
        // folder scanned while the server prepares its answer (tens of milliseconds for a large mailbox
        // changed lately). The scan then settles by the files' names alone, and what the server changed
        // is taken back out of what it settled once the answer is in (`unsettleServerChanges`).
        let early = try beginSelectEarly()
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
            translation = FlagTranslation(keywords: try MaildirKeywords.load(folder: folder.path))
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

        remote = try listRemote(state: state, incremental: incremental)

        if !dryRun { try settle(replay, remote: &remote) }
        keepOnlyUnsettled(journaled: store.hasJournal)
        try fetchNewKeys()
        prepared = true
    }

    /// Sends the QRESYNC SELECT before the state is loaded, when the committed file alone holds what it
    /// needs (no journal may change the mod-sequence); nil otherwise (then `prepare` selects after loading).
    private func beginSelectEarly() throws -> PendingSelect? {
        guard !store.hasJournal, imap.enabled.contains(.qresync), let header = try store.loadHeader(),
              header.uidValidity != 0, header.highestModSeq > 0, let modSeq = ModSequence(header.highestModSeq) else { return nil }
        return try imap.beginSelect(mailbox, qresync: QResyncParameters(uidValidity: header.uidValidity, modSeq: modSeq))
    }

    /// The UIDs the QRESYNC SELECT reported changed or vanished.
    private var serverChangedUIDs: Set<UInt32> { Set(selected.changed.map(\.uid)).union(selected.vanished.elements) }

    /// Scans the folder into `localByUnique`. With `settling`, a file exactly as recorded whose message is
    /// not in `changedUIDs` settles its pair by its name alone (`RecordTable.settle`): the plan, the
    /// listing and memory then hold only what changed on either side.
    private func scanFolder(settling: Bool, changedUIDs: Set<UInt32>) throws {
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
        for unique in duplicates { summary.notes.append("a second file with the unique name \(unique); left alone") }
        for entry in scan.entries {
            if localByUnique[entry.unique] == nil {
                localByUnique[entry.unique] = LocalFile(entry)
            } else {
                summary.notes.append("\(entry.path): a second file with the unique name \(entry.unique); left alone")
            }
        }
    }

    /// After a scan that settled before the server's answer: the pairs whose messages the server changed
    /// or expunged are unsettled again, and their files found (by name, else by a filtered scan).
    private func unsettleServerChanges() throws {
        var back: [(unique: String, flags: MaildirFlags)] = []
        for uid in serverChangedUIDs { if let r = table.unsettle(uid: uid) { back.append((r.unique, r.flags)) } }
        guard !back.isEmpty else { return }
        let entries = try MaildirScanner.locate(folder, back)
            ?? MaildirScanner.scan(folder, only: Set(back.map(\.unique))).entries
        for entry in entries where localByUnique[entry.unique] == nil { localByUnique[entry.unique] = LocalFile(entry) }
    }

    /// Second half: plan against the prepared listings and perform the plan, then commit the state.
    func finish() throws -> FolderSummary {
        precondition(prepared, "finish() before prepare()")
        if skipped { return summary }
        if imap.selectedMailbox != mailbox {
            // Another folder was selected in between (account-level passes): select again, plainly; the
            // listing from `prepare` stays the basis of the plan.
            let again = try imap.select(mailbox)
            guard again.uidValidity == selected.uidValidity else {
                throw IMAPError(server: "\(imap.settings.host):\(imap.settings.port)",
                                .unexpected("UIDVALIDITY of \(mailbox) changed during the run; it will be handled next run"))
            }
        }

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
                                                wantHashesForSizes: Set(localKeys.values.filter(\.isContentHash).map(\.wireSize)))
        }

        var plan: FolderPlan? = SyncPlanner.plan(
            records: Array(table.unsettledRecords),   // the planner orders them itself
            local: localByUnique.values.map { LocalMessage(unique: $0.unique, flags: $0.flags) },
            remote: remote.map { RemoteMessage(uid: $0.key, flags: $0.value) },
            policy: planPolicy, localKeys: localKeys, remoteKeys: remoteKeys, settled: settledCount)

        // The listing is not needed past the plan (only its highest UID, for a server without UIDNEXT).
        releasedMaxUID = remote.keys.max() ?? 0
        remote = [:]
        let acted = !plan!.actions.isEmpty
        if let stop = plan!.stoppedBy {
            summary.stopped = stop.description
            try store.flush()
            return summary
        }
        if dryRun {
            for action in plan!.actions { verbose("  \(action)") }
            count(plan!)
            return summary
        }

        if acted {
            store.append(.status(uidValidity: selected.uidValidity, uidNext: state.uidNext, highestModSeq: state.highestModSeq))
        }
        try execute(&plan)

        if cleaned > 0 {
            summary.notes.append("removed the X-TUID/X-OfflineIMAP header another syncer had added from \(cleaned) adopted message(s)")
        }
        if translation.changed { try translation.keywords.save(folder: folder.path) }
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
        return summary
    }

    /// The UIDNEXT and mod-sequence the state holds once this run is committed: the mod-sequence of the
    /// SELECT, advanced past this run's own changes where the server showed them to be only its own.
    private var serverMarks: (uidNext: UInt32, modSeq: UInt64) {
        var modSeq = ModSeqAdvance(base: selected.highestModSeq?.value ?? 0)
        for v in ownChanges.modSeqs { modSeq.noteOwn(v) }
        for v in ownChanges.completions { modSeq.noteCompletion(v, foreignSeen: ownChanges.foreignSeen) }
        return (selected.uidNext ?? (max(remote.keys.max() ?? 0, releasedMaxUID) + 1),
                selected.noModSeq ? 0 : modSeq.advanced)
    }

    /// What the server said of the mod-sequences of this run's STOREs, expunges and moves in this mailbox.
    private var ownChanges = OwnChanges()

    func noteOwn(_ c: OwnChanges) {
        ownChanges.modSeqs += c.modSeqs
        ownChanges.completions += c.completions
        ownChanges.foreignSeen = ownChanges.foreignSeen || c.foreignSeen
    }

    /// Whether the committed state file already says all there is: no journal or queued entry to fold in
    /// (from an interrupted run, or this run's moves), and the same server marks and directory stamp.
    private func stateIsCurrent(stamp: LocalStamp?) -> Bool {
        let marks = serverMarks
        return !store.hasJournal && !store.hasPendingEntries && store.stateFileExists
            && state.uidValidity == selected.uidValidity && state.uidNext == marks.uidNext
            && state.highestModSeq == marks.modSeq && state.localStamp == stamp
    }

    // MARK: - The unchanged-folder fast path

    /// The stamp a commit may write (`MaildirFolder.settledStamp`: the directories as this run left them,
    /// their times set back where the run's own change was the last): nil when another program changed
    /// them during the run (that change was not scanned, so the next run must scan).
    func commitStamp() -> LocalStamp? {
        guard !foreignChange, let lastSeen = expectedTimes, let atScan = scanTimes else { return nil }
        return folder.settledStamp(lastSeen: lastSeen, atScan: atScan, committed: committedStamp)
    }

    /// The directories' times as this run last saw them: taken before the scan (or equal to the stamp
    /// the partial path trusted), and again after each of its own changes. A different time before an
    /// own change, or at the commit, means another program (a mail client) changed the folder meanwhile.
    private var expectedTimes: LocalStamp?
    /// The times before the scan, and the stamp of the last commit (see `DirectoryStamp.verdict`).
    private var scanTimes: LocalStamp?
    private var committedStamp: LocalStamp?
    private var foreignChange = false

    /// Notes the directories' times before the scan (or the trusted stamp that replaces a scan).
    private func noteScanTimes(_ times: LocalStamp?, committed: LocalStamp?) {
        expectedTimes = times
        scanTimes = times
        committedStamp = committed
    }

    /// Runs this run's own changes to cur/ or new/ and notes the times they leave: a look before and a look
    /// after, so a foreign change is noticed unless it falls between the look before and the last change
    /// of `body`. Nested calls run inside the outer one's looks: the plan's renames and removals are one
    /// batch (two looks, not two per file; the window is the batch's few milliseconds).
    func ownChange<R>(_ body: () throws -> R) rethrows -> R {
        if inOwnChange { return try body() }
        if expectedTimes != nil, folder.stamp()?.stamp != expectedTimes { foreignChange = true }
        inOwnChange = true
        defer { inOwnChange = false; expectedTimes = folder.stamp()?.stamp }
        return try body()
    }
    private var inOwnChange = false

    enum QuickCheck {
        /// Neither side changed since the last commit: nothing to read.
        case unchanged
        /// Only the server changed, and the QRESYNC SELECT (`selected`) says exactly what.
        case serverOnly(FolderState, SelectedMailbox)
        case full
    }

    /// Uses the state header alone: when no journal waits and the Maildir folder's directories are exactly
    /// as at the last commit, a QRESYNC SELECT tells whether the server changed and what. Any doubt gives
    /// `.full`, and the full path runs.
    func quickCheck() throws -> QuickCheck {
        guard !dryRun, imap.enabled.contains(.qresync), !store.hasJournal,
              let header = try store.loadHeader(), let stamp = header.localStamp,
              header.uidValidity != 0, header.highestModSeq > 0,
              let modSeq = ModSequence(header.highestModSeq), folder.stamp()?.stamp == stamp else { return .full }
        let s = try imap.select(mailbox, qresync: QResyncParameters(uidValidity: header.uidValidity, modSeq: modSeq))
        guard s.uidValidity == header.uidValidity else { return .full }
        guard s.vanished.isEmpty, s.changed.isEmpty, s.uidNext == header.uidNext,
              s.highestModSeq?.value == header.highestModSeq else { return .serverOnly(header, s) }
        state = header
        selected = s
        return .unchanged
    }

    /// The UIDs whose records this run loaded, when it loaded only some (server-only changes); nil when
    /// it loaded all. The commit carries the other records over from the committed file.
    private(set) var loadedUIDs: Set<UInt32>?

    /// The UIDs of the unsettled records a focused full run kept (`keepOnlyUnsettled`); the commit carries
    /// the settled ones over from the committed file. Unlike `loadedUIDs`, the deletion guard is still
    /// judged by the plan (with `settledCount` pairs beside it).
    private var focusUIDs: Set<UInt32>?
    private var settledCount = 0

    /// After a focused scan, lets go of the settled records: they are exactly as the committed file has
    /// them, so the commit copies their lines (as for server-only changes), and memory follows the change
    /// rather than the folder while the other folders are prepared. Only where the file alone is the base
    /// (no journal was replayed over it) and no unsettled record is a tombstone (uid 0: a merged commit
    /// finds old lines by UID).
    private func keepOnlyUnsettled(journaled: Bool) {
        settledCount = table.settledCount
        guard settledCount > 0, !journaled, loadedUIDs == nil else { return }
        let focus = Array(table.unsettledRecords)
        guard !focus.contains(where: { $0.uid == 0 }) else { return }
        focusUIDs = Set(focus.map(\.uid))
        table = RecordTable(focus)
    }

    /// Server-only changes: loads just the records of the changed and vanished UIDs and scans just their
    /// files, so work and memory follow the size of the change, not of the folder. Returns false (the
    /// full path should run) when the change is large, or when its deletions might trip the mass-deletion
    /// guard, which needs the whole folder to judge.
    func prepareServerChanges(header: FolderState, selected s: SelectedMailbox) throws -> Bool {
        let changedUIDs = s.changed.map(\.uid).filter { $0 != 0 }
        guard s.vanished.count + changedUIDs.count <= max(1_000, Int(s.exists) / 4) else { return false }
        var uids = Set(changedUIDs)
        let vanished = Set(s.vanished.elements)
        uids.formUnion(vanished)
        let partial = try store.load(keepingUIDs: uids)
        let gone = partial.records.filter { $0.uid != 0 && !$0.unique.isEmpty && vanished.contains($0.uid) }.count
        if !policy.force && gone > policy.deleteGuardFloor && gone * 100 > policy.maxDeletePercent * (Int(s.exists) + gone) {
            return false
        }
        state = partial
        table = RecordTable(state.records)
        selected = s
        loadedUIDs = uids
        translation = FlagTranslation(keywords: try MaildirKeywords.load(folder: folder.path))
        noteScanTimes(header.localStamp, committed: header.localStamp)
        let known = state.records.filter { !$0.unique.isEmpty }
        var entries = MaildirScanner.locate(folder, known.map { ($0.unique, $0.flags) })
        if entries == nil {
            let scan = try MaildirScanner.scan(folder, only: Set(known.map(\.unique)))
            summary.notes += scan.warnings
            entries = scan.entries
        }
        for entry in entries ?? [] where localByUnique[entry.unique] == nil { localByUnique[entry.unique] = LocalFile(entry) }
        remote = try listRemote(state: state, incremental: true)
        try fetchNewKeys()
        verbose("  only the server changed: \(uids.count) UID(s) read from the state")
        return true
    }

    // MARK: - Listing

    /// Keys (Message-ID, size) of the server's new messages, fetched while `prepare` has the mailbox
    /// selected: pairing and `MoveDetector` then need no second SELECT of it. A SELECT is what costs on the
    /// server (Dovecot re-reads a Maildir folder changed within the last second on every SELECT of it),
    /// and one header FETCH in the same selection costs almost nothing. Only for a modest number of new
    /// messages, in a folder synced before: a first sync's are paired by `finish` as needed.
    private var newKeys: [UInt32: MessageKey] = [:]
    private var newKeysFetched = Set<UInt32>()

    private func fetchNewKeys() throws {
        guard table.count > 0 else { return }   // a first sync: nothing local to pair them with
        let fresh = unpairedRemote
        guard !fresh.isEmpty, fresh.count <= 1_000 else { return }
        newKeys = try MessageKeys.remote(imap, uids: fresh, wantHashesForSizes: [])
        newKeysFetched = Set(fresh)
    }

    /// Keys of server messages: from those fetched in `prepare` where they cover `uids` (ID-less ones of a
    /// wanted size still need their bytes), else asked of the server (the mailbox must be selected).
    func remoteKeys(_ uids: [UInt32], wantHashesForSizes sizes: Set<Int>) throws -> [UInt32: MessageKey] {
        let cached = uids.allSatisfy { newKeysFetched.contains($0) }
        if cached && (sizes.isEmpty || uids.allSatisfy { newKeys[$0] != nil }) {
            var keys: [UInt32: MessageKey] = [:]
            for uid in uids { keys[uid] = newKeys[uid] }
            return keys
        }
        if imap.selectedMailbox != mailbox { _ = try imap.select(mailbox) }
        return try MessageKeys.remote(imap, uids: uids, wantHashesForSizes: sizes)
    }

    /// The server's messages with their flags in Maildir letters. With QRESYNC, only what changed since the
    /// saved mod-sequence travels; the rest is taken from the saved pairs.
    func listRemote(state: FolderState, incremental: Bool) throws -> [UInt32: MaildirFlags] {
        var remote: [UInt32: MaildirFlags] = [:]
        if incremental && imap.enabled.contains(.qresync) {
            remote.reserveCapacity(table.count - table.settledCount)
            for r in table.unsettledRecords where r.uid != 0 { remote[r.uid] = r.flags }
            for uid in selected.vanished.elements { remote[uid] = nil }
            for m in selected.changed where m.uid != 0 {
                if let f = m.flags { remote[m.uid] = translation.letters(f) }
            }
            return remote
        }
        guard selected.exists > 0 else { return [:] }
        // Streamed into the dictionary: a listing of a large folder is never held as messages.
        remote.reserveCapacity(Int(selected.exists))
        var collector = MessageInfoCollector()
        try imap.fetch(UIDSet(1...UIDSet.star), items: [.uid, .flags]) { [self] event in
            if let m = collector.feed(event), m.uid != 0 { remote[m.uid] = translation.letters(m.flags ?? []) }
        }
        return remote
    }

    // MARK: - Crash recovery

    /// Settles intents a previous run announced but did not confirm.
    func settle(_ replay: Replay, remote: inout [UInt32: MaildirFlags]) throws {
        for (uid, unique) in replay.pendingFetches {
            if let entry = localByUnique[unique], table.record(uid: uid) == nil {
                // The file arrived before the crash: pair it rather than fetch it again.
                record(SyncRecord(uid: uid, unique: unique, flags: entry.flags.intersection(syncableFlags)))
                summary.notes.append("recovered UID \(uid) fetched by an interrupted run")
            }
        }
        let appends = replay.pendingAppends.filter { localByUnique[$0.unique] != nil && table.record(unique: $0.unique) == nil }
        guard !appends.isEmpty else { return }
        // An interrupted APPEND may or may not have reached the server: look for its key among the
        // messages that arrived since.
        let floor = appends.map(\.uidNext).min() ?? 0
        let candidates = remote.keys.filter { $0 >= floor && table.record(uid: $0) == nil }
        let keys = try MessageKeys.remote(imap, uids: candidates,
                                          wantHashesForSizes: Set(appends.compactMap { $0.key }.filter(\.isContentHash).map(\.wireSize)))
        var byKey: [MessageKey: [UInt32]] = [:]
        for (uid, key) in keys { byKey[key, default: []].append(uid) }
        for a in appends {
            guard let key = a.key, var uids = byKey[key], !uids.isEmpty else { continue }
            uids.sort()
            let uid = uids.removeFirst()
            byKey[key] = uids
            record(SyncRecord(uid: uid, unique: a.unique, flags: remote[uid] ?? []))
            summary.notes.append("recovered \(a.unique) uploaded by an interrupted run")
        }
    }

    // MARK: - Execution

    /// Performs the plan; takes it (`plan` is nil afterwards) so that the actions of a large folder are not
    /// held while its bodies are fetched.
    func execute(_ plan: inout FolderPlan?) throws {
        var fetches: [(uid: UInt32, flags: MaildirFlags)] = []
        var appends: [(unique: String, flags: MaildirFlags)] = []
        var stores: [StoreKey: [UInt32]] = [:]
        var remoteDeletes: [UInt32] = []
        var afterStores: [SyncAction] = []

        try ownChange {
            let actions = plan?.actions ?? []
            plan = nil
            fetches.reserveCapacity(actions.count)
            for action in actions {
                switch action {
                case .fetch(let uid, let flags): fetches.append((uid, flags))
                case .append(let unique, let flags): appends.append((unique, flags))
                case .setRemoteFlags(let uid, let add, let remove):
                    stores[StoreKey(add: add, remove: remove), default: []].append(uid)
                    summary.flagsUp += 1
                case .deleteRemote(let uid):
                    remoteDeletes.append(uid)
                    summary.deletedRemote += 1
                case .setLocalFlags(let unique, let flags):
                    try setLocalFlags(unique: unique, flags: flags)
                    CrashPoint.step("flags: local rename")
                    summary.flagsDown += 1
                case .deleteLocal(let unique):
                    if let entry = localByUnique[unique] {
                        try ownChange { try folder.remove(path: entry.path, sync: false) }
                        localDirectoriesChanged = true
                        localByUnique[unique] = nil
                        CrashPoint.step("delete: local file removed")
                    }
                    summary.deletedLocal += 1
                case .adopt(let uid, let unique, let localFlags, let remoteFlags):
                    if tainted.contains(unique), let entry = localByUnique[unique] {
                        try removeForeignHeaders(entry.path)
                    }
                    if let entry = localByUnique[unique], entry.flags != localFlags {
                        try setLocalFlags(unique: unique, flags: localFlags)
                    }
                    let remoteNow = localByUnique[unique].map { _ in remoteFlags } ?? remoteFlags
                    record(SyncRecord(uid: uid, unique: unique, flags: remoteNow))
                    summary.adopted += 1
                case .updateRecord:
                    // Applied after the server acts below, so a record never claims what the server lacks.
                    afterStores.append(action)
                }
            }
        }

        // Local renames and removals become durable together, before any entry that relies on them is
        // journaled (a lost rename under a journaled record would later look like a local change).
        if localDirectoriesChanged {
            try folder.syncDirectory(.cur)
            try folder.syncDirectory(.new)
            localDirectoriesChanged = false
        }
        try storeFlags(stores)
        CrashPoint.step("flags: stored on the server")
        if !remoteDeletes.isEmpty { noteOwn(try imap.delete(UIDSet(uids: remoteDeletes))) }
        CrashPoint.step("delete: expunged on the server")
        for case .updateRecord(let uid, let unique, let newRecord) in afterStores {
            if let newRecord { record(newRecord) } else { forget(uid: uid, unique: unique) }
        }
        try store.flush()
        CrashPoint.step("records journaled")

        try fetch(fetches)
        try upload(appends)
        try store.flush()
    }

    struct StoreKey: Hashable { var add: MaildirFlags; var remove: MaildirFlags }

    /// One STORE per distinct change, all pipelined.
    func storeFlags(_ stores: [StoreKey: [UInt32]]) throws {
        var commands: [(uids: UIDSet, action: StoreAction)] = []
        for (key, uids) in stores.sorted(by: { $0.value.min()! < $1.value.min()! }) {
            let set = UIDSet(uids: uids)
            let add = translation.imapFlags(key.add), remove = translation.imapFlags(key.remove)
            if !add.isEmpty { commands.append((set, StoreAction(.add, add, silent: true))) }
            if !remove.isEmpty { commands.append((set, StoreAction(.remove, remove, silent: true))) }
        }
        noteOwn(try imap.storeSilently(commands))
    }

    func setLocalFlags(unique: String, flags: MaildirFlags) throws {
        guard let entry = localByUnique[unique] else { return }
        let path = try ownChange { try folder.setFlags(path: entry.path, flags: flags, moveToCur: !flags.isEmpty, sync: false) }
        localDirectoriesChanged = true
        localByUnique[unique]?.path = path
        localByUnique[unique]?.flags = flags
    }

    /// Downloads new messages, streaming each body (CRLF → LF) into tmp/ and linking it into place.
    func fetch(_ wanted: [(uid: UInt32, flags: MaildirFlags)]) throws {
        guard !wanted.isEmpty else { return }
        // Sorted by UID: the FETCH commands take ranges of it, and a response finds its flags by binary search.
        let inOrder = zip(wanted, wanted.dropFirst()).allSatisfy { $0.uid < $1.uid }
        let wanted = inOrder ? wanted : wanted.sorted { $0.uid < $1.uid }   // the plan's are in order: no copy
        var arrived = [Bool](repeating: false, count: wanted.count)
        func flagsOnce(_ uid: UInt32) -> MaildirFlags? {
            var lo = 0, hi = wanted.count
            while lo < hi { let mid = (lo + hi) / 2; if wanted[mid].uid < uid { lo = mid + 1 } else { hi = mid } }
            guard lo < wanted.count, wanted[lo].uid == uid, !arrived[lo] else { return nil }
            arrived[lo] = true
            return wanted[lo].flags
        }
        table.reserveCapacity(more: wanted.count)
        var batch = FetchBatch()
        var index = 0
        while index < wanted.count {
            let chunk = wanted[index..<min(wanted.count, index + Self.fetchChunk)].map(\.uid)
            index += chunk.count
            var uid: UInt32 = 0
            var pending: PendingDelivery?
            var written = 0
            var converter = CRLFToLF()
            var converted: [UInt8] = []
            converted.reserveCapacity(256 * 1024)
            do {
            try imap.fetch(UIDSet(uids: chunk), items: [.uid, .body()]) { [self] event in
                switch event {
                case .fetchStart:
                    uid = 0
                case .fetchAttribute(.uid(let u)):
                    uid = u
                case .bodyStart(let start) where start.section.isEmpty && !start.isNil:
                    pending?.abort()
                    pending = try folder.beginDelivery()
                    converter = CRLFToLF()
                    written = 0
                case .bodyBytes(let bytes):
                    guard let p = pending else { return }
                    converted.removeAll(keepingCapacity: true)
                    converter.convert(bytes, into: &converted)
                    try p.write(converted)
                    written += converted.count
                case .bodyEnd:
                    guard let p = pending else { return }
                    converted.removeAll(keepingCapacity: true)
                    converter.finish(into: &converted)
                    if !converted.isEmpty { try p.write(converted) }
                    written += converted.count
                    p.startWriteback()
                case .fetchEnd:
                    defer { pending = nil }
                    guard let p = pending else { return }
                    guard uid != 0, let flags = flagsOnce(uid) else { p.abort(); return }
                    batch.add(p, uid: uid, flags: flags, bytes: written)
                    if batch.isFull { try deliver(&batch) }
                default:
                    break
                }
            }
            } catch {
                // Keep what arrived whole before the failure (a cut connection): a rerun need not fetch it.
                pending?.abort()
                try? deliver(&batch)
                throw error
            }
            pending?.abort()
            try deliver(&batch)
        }
        let missing = arrived.lazy.filter { !$0 }.count
        if missing > 0 {
            summary.notes.append("\(missing) message(s) vanished from the server before they could be fetched")
        }
    }

    /// Fetched bodies waiting in tmp/ to be made durable and linked together.
    struct FetchBatch {
        var items: [(pending: PendingDelivery, uid: UInt32, flags: MaildirFlags)] = []
        var bytes = 0
        /// Bounds the open files (32 per connection, 16 connections at most) and the work a crash can make
        /// a rerun redo.
        var isFull: Bool { items.count >= 32 || bytes >= 8 << 20 }
        mutating func add(_ p: PendingDelivery, uid: UInt32, flags: MaildirFlags, bytes n: Int) {
            items.append((p, uid, flags)); bytes += n
        }
    }

    /// Delivers a batch with the journal discipline of one message, but a sync per step rather than per
    /// message: every body fsynced (their writeback was started as each ended, so the syncs overlap);
    /// every intent journaled with one fsync; every file linked; each target directory fsynced once;
    /// then the pairs recorded. A crash anywhere leaves each message either absent or announced.
    func deliver(_ batch: inout FetchBatch) throws {
        defer { batch = FetchBatch() }
        guard !batch.items.isEmpty else { return }
        for item in batch.items { try item.pending.seal() }
        for item in batch.items { store.append(.fetchIntent(uid: item.uid, unique: item.pending.unique)) }
        try store.flush()
        CrashPoint.step("fetch: intent journaled")
        try ownChange {
            var subdirs = Set<MaildirSubdir>()
            for item in batch.items {
                // new/ holds messages no client has seen yet; any flag needs the info part of cur/.
                let subdir: MaildirSubdir = item.flags.isEmpty ? .new : .cur
                _ = try item.pending.link(to: subdir, flags: item.flags)
                subdirs.insert(subdir)
                CrashPoint.step("fetch: message delivered")
            }
            do {
                for subdir in subdirs.sorted(by: { $0.rawValue < $1.rawValue }) { try folder.syncDirectory(subdir) }
            } catch {
                for item in batch.items { item.pending.unlinkFinal() }
                throw error
            }
        }
        for item in batch.items {
            let p = item.pending
            p.finish()
            let path = p.finalPath ?? ""
            let unique = (try? MaildirFilename(parsing: String(path.split(separator: "/").last ?? "")))?.unique ?? p.unique
            record(SyncRecord(uid: item.uid, unique: unique, flags: item.flags))
            CrashPoint.step("fetch: pair recorded")
            summary.new += 1
            verbose("  fetched UID \(item.uid)")
        }
    }

    /// Uploads new local messages (LF → CRLF, streamed from the file: `WireFile`), finding each on the
    /// server by APPENDUID, or without UIDPLUS by its key among the messages that arrived since.
    func upload(_ wanted: [(unique: String, flags: MaildirFlags)]) throws {
        guard !wanted.isEmpty else { return }
        let floor = selected.uidNext ?? 1
        var unresolved: [(unique: String, key: MessageKey, flags: MaildirFlags)] = []
        for (unique, flags) in wanted {
            guard let entry = localByUnique[unique] else { continue }
            let file: WireFile
            do {
                file = try WireFile(path: entry.path)
            } catch {
                summary.notes.append("\(error); not uploaded")
                continue
            }
            let key = file.key
            store.append(.appendIntent(unique: unique, uidNext: floor, key: key))
            try store.flush()
            CrashPoint.step("append: intent journaled")
            let date = InternalDate(epochSeconds: entry.mtimeSeconds)
            let result = try imap.append(to: mailbox, flags: translation.imapFlags(flags), date: date,
                                         size: file.wireSize) { try file.write(to: $0) }
            CrashPoint.step("append: server accepted")
            if let result, result.uidValidity == selected.uidValidity {
                record(SyncRecord(uid: result.uid, unique: unique, flags: flags))
            } else {
                unresolved.append((unique, key, flags))
            }
            summary.uploaded += 1
            verbose("  uploaded \(unique)")
        }
        guard !unresolved.isEmpty else { return }
        let arrived = try imap.fetchInfo(UIDSet(floor...UIDSet.star), items: [.uid]).messages.map(\.uid)
            .filter { table.record(uid: $0) == nil }
        let keys = try MessageKeys.remote(imap, uids: arrived,
                                          wantHashesForSizes: Set(unresolved.filter { $0.key.isContentHash }.map(\.key.wireSize)))
        var byKey: [MessageKey: [UInt32]] = [:]
        for (uid, key) in keys { byKey[key, default: []].append(uid) }
        for u in unresolved {
            guard var uids = byKey[u.key], !uids.isEmpty else {
                summary.notes.append("uploaded \(u.unique) but could not find it on the server; the next run will pair it")
                continue
            }
            uids.sort()
            record(SyncRecord(uid: uids.removeFirst(), unique: u.unique, flags: u.flags))
            byKey[u.key] = uids
        }
    }

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
    /// or upload (some may pair by key instead). Decides whether more connections pay (`ConnectionPlan`).
    var pendingTransfers: Int { skipped ? 0 : unpairedLocal.count + unpairedRemote.count }

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
    /// bytes. Same name, same flags: the clean copy is written in tmp/ (fsync) and renamed over the old one,
    /// so a crash leaves either the old file or the new one, and nothing in cur/ that is not a message.
    func removeForeignHeaders(_ path: String) throws {
        guard case .success(let bytes) = readWholeFile(path) else { return }
        let clean = MessageKeys.withoutForeignHeaders(bytes)
        guard clean.count != bytes.count else { return }
        let tmp = folder.directory("tmp") + "/" + MaildirUniqueName.generate() + ".clean"
        let fd = openRetrying(tmp, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw MaildirError("cannot create", tmp, code: -fd) }
        let failed = clean.withUnsafeBytes { writeAll(fd, $0) } ?? fsyncRetrying(fd)
        Glibc.close(fd)
        if let e = failed { Glibc.unlink(tmp); throw MaildirError("cannot write", tmp, code: e) }
        let failure: Int32? = ownChange { Glibc.rename(tmp, path) == 0 ? nil : errno }
        if let e = failure { Glibc.unlink(tmp); throw MaildirError("cannot replace", path, code: e) }
        let dir = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        _ = fsyncDirectoryEntries(dir)
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
        for a in plan.actions {
            if case .deleteLocal = a { summary.deletedLocal += 1 }
            if case .deleteRemote = a { summary.deletedRemote += 1 }
            if case .adopt = a { summary.adopted += 1 }
        }
    }
}
