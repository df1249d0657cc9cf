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

/// `PreparedFolder`'s full path and the server's listing: the state loaded and replayed, the folder scanned
/// (settling unchanged pairs by their names), the listing (QRESYNC: only the changes), the new messages'
/// keys.
extension PreparedFolder {
    /// The full path: load all records (replaying the journal), select, scan the folder, list the server
    /// (with QRESYNC only the changes), settle interrupted intents, and fetch the new messages' keys (and
    /// bodies, when few). `header`: the committed header if `quickCheck` read it already.
    func listWhole(header: FolderState?, on server: any ServerStore) throws {
        // With a committed state and no journal, SELECT goes out first, and the state is loaded and the
        // folder scanned while the server prepares its answer (tens of milliseconds for a large mailbox
        // changed lately). The scan then settles by the files' names alone, and what the server changed
        // is taken back out of what it settled once the answer is in (`unsettleServerChanges`).
        let early = try beginSelectEarly(header: header, on: server)
        // One folder's whole table at a time (`WholeLoads`), from the load to `keepOnlyUnsettled`, when the
        // SELECT went out first; otherwise the listing waits for the server inside, and a turn would make
        // two connections' listings wait for each other.
        if early != nil {
            try sync.wholeLoads.one { try listWholeLoaded(early: early, on: server) }
        } else {
            try listWholeLoaded(early: nil, on: server)
        }
        try fetchNewKeys(on: server)
        try prefetchNewBodies(on: server)
    }

    /// `listWhole` from the load of every record to `keepOnlyUnsettled`, which lets the settled ones go.
    private func listWholeLoaded(early: PendingListing?, on server: any ServerStore) throws {
        let wireName = String(decoding: mailbox.wire, as: UTF8.self)
        let replay: Replay, qresync: Bool
        do {
            replay = try store.load(mailbox: wireName)
            state = replay.state
            table = replay.table

            let savedModSeq = ModSequence(state.highestModSeq)
            let canResync = state.uidValidity != 0 && state.highestModSeq > 0 && savedModSeq != nil
            if early == nil {
                selected = try server.open(
                    mailbox,
                    since: canResync ? ListingMark(uidValidity: state.uidValidity, modSeq: savedModSeq!) : nil)
            }
            if !folder.exists && !dryRun { try folder.create() }
            translation = try loadKeywords()
            noteScanTimes(folder.stamp()?.stamp, committed: replay.state.localStamp)
            qresync =
                canResync && server.reportsChangesSince(in: mailbox) && (early != nil || !selected.changesUnknown)
                && !sync.listKeywordsWhole && !(sync.window?.widened ?? false)
            try scanFolder(
                settling: qresync && (early != nil || selected.uidValidity == state.uidValidity),
                changedUIDs: (early == nil ? serverChangedUIDs : []).union(extra.localChangedUIDs { table.record(unique: $0)?.uid }))
        } catch {
            // The answer must be read before anything else goes over the connection (a folder's error
            // ends only its own sync; the run goes on with the next folder).
            if let early { _ = try? early.finish() }
            throw error
        }
        if let early { selected = try early.finish() }

        let validityChanged = state.uidValidity != 0 && selected.uidValidity != state.uidValidity
        if validityChanged {
            // UIDs no longer name the same messages: drop every pair and re-pair by Message-ID and size.
            summary.notes.append(
                "UIDVALIDITY changed (\(state.uidValidity) → \(selected.uidValidity)); "
                    + "messages re-paired by Message-ID and size, nothing transferred twice")
            let settledAny = table.settledCount > 0
            table = RecordTable([])
            state = FolderState(mailbox: wireName)
            if settledAny { localByUnique = [:]; try scanFolder(settling: false, changedUIDs: []) }
        } else if early != nil && qresync {
            try unsettleServerChanges()
        }
        var incremental = qresync && !validityChanged
        if incremental && !pairsAccountForTheServer() { try prepareWholeListing(); incremental = false }

        remote = try listRemote(state: state, incremental: incremental, on: server)
        remoteListedWhole = !incremental

        if !dryRun { try CrashSettling.settle(replay, in: self, on: server) }
        try judgeWindow(on: server)
        keepOnlyUnsettled()
    }

    /// A dry run's folder whose mailbox it would create: the state (none yet) and the folder read, the
    /// server's side empty, so the plan is a new mailbox's (every file uploaded). Nothing is selected.
    func listLocalOnly() throws {
        let replay = try store.load(mailbox: String(decoding: mailbox.wire, as: UTF8.self))
        state = replay.state
        table = replay.table
        translation = try loadKeywords()
        try scanFolder(settling: false, changedUIDs: [])
        remote = [:]
        remoteListedWhole = true
    }

    /// Sends the QRESYNC SELECT before the state is loaded, when the committed header alone holds what it
    /// needs (no interrupted run's entries may change the mod-sequence); nil otherwise (then `prepare`
    /// selects after loading).
    /// `header`: the committed header if `quickCheck` read it already.
    func beginSelectEarly(header known: FolderState?, on server: any ServerStore) throws -> PendingListing? {
        guard server.knowsVanishedSince(in: mailbox), let header = try known ?? store.loadCommittedHeader(),
            header.uidValidity != 0, header.highestModSeq > 0, let modSeq = ModSequence(header.highestModSeq)
        else { return nil }
        return try server.beginOpen(mailbox, since: ListingMark(uidValidity: header.uidValidity, modSeq: modSeq))
    }

    /// Scans the folder into `localByUnique`. With `settling`, a file exactly as recorded whose message is
    /// not in `changedUIDs` settles its pair by its name alone (`RecordTable.settle`): the plan, the
    /// listing and memory then hold only what changed on either side.
    func scanFolder(settling: Bool, changedUIDs: Set<UInt32>) throws {
        guard folder.exists else { return }
        var duplicates: [String] = []
        let scan = try MaildirScanner.scan(
            folder,
            keep: !settling
                ? nil
                : { [self] unique, flags in
                    // A second file of a name kept is kept too (`settle`), for the duplicate note below.
                    switch table.settle(uniqueBytes: unique, flags: flags.intersection(syncableFlags), changedUIDs: changedUIDs) {
                    case .settled: return false
                    case .duplicate: duplicates.append(String(decoding: unique, as: UTF8.self)); return false
                    case .unsettled: return true
                    }
                })
        summary.notes += scan.warnings
        hold(scan.refusedUniques)
        // A window's outside records have no file: settled unless the server changed their message. (Only
        // a folder with a window, or one whose last run had one, holds them.)
        if settling && sync.window != nil { table.settleServerOnly(marked: SyncRecord.outsideMark, except: changedUIDs) }
        if !scan.warnings.isEmpty || !duplicates.isEmpty { times.passedOver = true }
        for unique in duplicates { summary.notes.append("a second file with the unique name \(unique); left alone") }
        for entry in scan.entries {
            if entry.size == 0 && table.record(unique: entry.unique) == nil {
                // No message (servers refuse an empty one): left alone, and looked at again next run, as a
                // writer that bypasses tmp/ may still be filling it in place. A paired one is a message.
                summary.notes.append("\(quotedForMessage(entry.path)): empty file; not uploaded")
                times.passedOver = true
                continue
            }
            if localByUnique[entry.unique] == nil {
                localByUnique[entry.unique] = LocalFile(entry)
            } else {
                summary.notes.append("\(entry.path): a second file with the unique name \(entry.unique); left alone")
                times.passedOver = true
            }
        }
    }

    /// After a scan that settled before the server's answer: the pairs whose messages the server changed
    /// or expunged are unsettled again, and their files found (by name, else by a filtered scan).
    func unsettleServerChanges() throws {
        var back: [(unique: String, flags: MaildirFlags)] = []
        for uid in serverChangedUIDs {
            if let r = table.unsettle(uid: uid), !r.unique.isEmpty { back.append((r.unique, r.flags)) }
        }
        try findFiles(back)
    }

    /// Finds the files of pairs taken back into the plan (by name, else by a filtered scan).
    func findFiles(_ back: [(unique: String, flags: MaildirFlags)]) throws {
        guard !back.isEmpty else { return }
        var entries = MaildirScanner.locate(folder, back)
        if entries == nil {
            let scan = try MaildirScanner.scan(folder, only: Set(back.map(\.unique)))
            hold(scan.refusedUniques)
            entries = scan.entries
        }
        for entry in entries ?? [] where localByUnique[entry.unique] == nil { localByUnique[entry.unique] = LocalFile(entry) }
    }

    /// Keeps the pairs of files skipped for their names (`held`): their messages are still here.
    func hold(_ refused: Set<String>) {
        for unique in refused where table.record(unique: unique) != nil && localByUnique[unique] == nil {
            held.insert(unique)
            times.passedOver = true
        }
    }

    /// After a focused scan, lets go of the settled records: they are exactly as committed, the commit
    /// only appends the run's own entries (as for server-only changes), and memory follows the change
    /// rather than the folder while the other folders are prepared.
    func keepOnlyUnsettled() {
        // The guard counts pairs: a window's settled outside records are no messages of the Maildir.
        settledCount = table.settledCount - (sync.window == nil ? 0 : table.settledServerOnlyCount(marked: SyncRecord.outsideMark))
        guard table.settledCount > 0, loadedUIDs == nil else { return }
        focused = true
        table = RecordTable(Array(table.unsettledRecords))
    }

    /// The UIDs the QRESYNC SELECT reported changed or vanished; vanished ones only where the state has them,
    /// so a hostile `VANISHED (EARLIER) 1:4000000000` costs what we know.
    var serverChangedUIDs: Set<UInt32> {
        let table = self.table
        let gone = selected.vanished.elements(
            among: table.unorderedRecords.lazy.map(\.uid), knownCount: table.count,
            isKnown: { table.record(uid: $0) != nil })
        return Set(selected.changed.map(\.uid)).union(gone)
    }

    func fetchNewKeys(on server: any ServerStore) throws {
        // A first sync has nothing local to pair them with (the other paths may hold only some records).
        // Where ids span folders a new id is often a move, found without keys, and no body is prefetched.
        guard !server.idsSpanFolders, table.count > 0 || settledCount > 0 || loadedUIDs != nil else { return }
        // Not those a window leaves on the server.
        let fresh = unpairedRemote.filter { window?.admits(uid: $0, flags: remote[$0] ?? []) ?? true }
        // Their keys serve the prefetch of their bodies: none while the day's download allowance is spent.
        guard !fresh.isEmpty, fresh.count <= 1_000, sync.allowance?.hasRoom ?? true else { return }
        do {
            prefetch.keys = try server.keys(of: fresh, hashingSizes: [])
        } catch let error as IMAPError where error.isOverQuota {
            sync.allowance?.spendAll()  // the server's allowance is spent: no prefetch; `fetch` defers them
            return
        }
        prefetch.keysFetched = Set(fresh)
    }

    /// Keys of server messages: from those fetched in `prepare` where they cover `uids` (ID-less ones of a
    /// wanted size still need their bytes), else asked of the server (the mailbox must be selected).
    func remoteKeys(_ uids: [UInt32], wantHashesForSizes sizes: Set<Int>, on server: any ServerStore) throws -> [UInt32: MessageKey] {
        let cached = uids.allSatisfy { prefetch.keysFetched.contains($0) }
        if cached && (sizes.isEmpty || uids.allSatisfy { prefetch.keys[$0] != nil }) {
            var keys: [UInt32: MessageKey] = [:]
            for uid in uids { keys[uid] = prefetch.keys[uid] }
            return keys
        }
        try ensureSelected(on: server)
        return try server.keys(of: uids, hashingSizes: sizes)
    }

    /// Whether the saved pairs, with the QRESYNC SELECT's changes and expunges, add up to the server's
    /// EXISTS. Not so when records were lost (a state file cut at a line end reads as a smaller one): their
    /// server messages would stay unseen and their files read as new, uploaded twice. The caller then lists
    /// the server whole, so both sides of a lost record are unpaired and pair again by key. Otherwise only
    /// a server that breaks QRESYNC gives a mismatch; listing it whole is as safe, only slower.
    func pairsAccountForTheServer() -> Bool {
        var live = 0, uids: [UInt32] = []
        uids.reserveCapacity(table.count)
        for r in table.unorderedRecords where r.uid != 0 { live += 1; uids.append(r.uid) }
        let vanished = Set(selected.vanished.elements(among: uids, knownCount: uids.count) { table.record(uid: $0) != nil })
        let arrived = Set(selected.changed.map(\.uid).filter { $0 != 0 && table.record(uid: $0) == nil })
        return live - vanished.count + arrived.count == Int(selected.exists)
    }

    /// After `pairsAccountForTheServer` said no: every record unsettled (a whole listing judges each pair)
    /// and the folder scanned whole again, with a note.
    func prepareWholeListing() throws {
        summary.notes.append(
            "the saved pairs do not account for every message on the server; listed in full, re-paired by Message-ID and size")
        guard table.settledCount > 0 else { return }
        table = RecordTable(table.records)
        localByUnique = [:]
        try scanFolder(settling: false, changedUIDs: [])
    }

    /// The server's messages with their flags in Maildir letters. With QRESYNC, only what changed since the
    /// saved mod-sequence travels; the rest is taken from the saved pairs.
    func listRemote(state: FolderState, incremental: Bool, on server: any ServerStore) throws -> [UInt32: MaildirFlags] {
        var remote: [UInt32: MaildirFlags] = [:]
        if incremental && server.reportsChangesSince(in: mailbox) {
            remote.reserveCapacity(table.count - table.settledCount)
            for r in table.unsettledRecords where r.uid != 0 { remote[r.uid] = r.flags }
            for uid in selected.vanished.elements(among: remote.keys) { remote[uid] = nil }
            var skipped = SkippedFlagNotes()
            for m in selected.changed where m.uid != 0 {
                if let f = m.flags { remote[m.uid] = serverLetters(m.uid, f) }
                skipped.note(m, in: &summary)
            }
            skipped.finish(&summary)
            return remote
        }
        guard selected.exists > 0 else { return [:] }
        // Streamed into the dictionary: a listing of a large folder is never held as messages.
        remote.reserveCapacity(min(Int(selected.exists), 1 << 20))  // EXISTS is the server's word: capped
        var skipped = SkippedFlagNotes()
        try server.listAll { [self] m in
            guard m.uid != 0 else { return }
            remote[m.uid] = serverLetters(m.uid, m.flags ?? [])
            skipped.note(m, in: &summary)
        }
        skipped.finish(&summary)
        return remote
    }
}

/// Notes for FLAGS tokens the parser skipped as not flags (a lone `\`): one line per message naming the
/// folder and UID, the tokens escaped; past a few, one count, so a server that does it everywhere does not
/// flood the output.
struct SkippedFlagNotes {
    static let shown = 5
    private var count = 0

    mutating func note(_ m: MessageInfo, in summary: inout FolderSummary) {
        guard !m.skippedFlags.isEmpty else { return }
        count += 1
        guard count <= Self.shown else { return }
        let tokens = m.skippedFlags.map { quotedForMessage(bytes: $0) }.joined(separator: " ")
        summary.notes.append("\(summary.folder): UID \(m.uid): malformed flag \(tokens) from the server; skipped")
    }

    func finish(_ summary: inout FolderSummary) {
        guard count > Self.shown else { return }
        summary.notes.append("\(summary.folder): \(count - Self.shown) more message(s) with malformed flags; skipped")
    }
}
