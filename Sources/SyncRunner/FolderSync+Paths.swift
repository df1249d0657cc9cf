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

/// `FolderSync`'s ways to its listings: the fast paths (an unchanged folder, server-only changes),
/// the directory stamps, the server's listing and the keys of new messages, crash recovery.
extension FolderSync {
    // MARK: - The unchanged-folder fast path

    /// The stamp a commit may write (`MaildirFolder.settledStamp`: the directories as this run left them,
    /// their times set back where the run's own change was the last): nil when another program changed
    /// them during the run (that change was not scanned, so the next run must scan), or when the run
    /// passed over a file (`passedOver`).
    func commitStamp() -> LocalStamp? {
        guard !foreignChange, !passedOver, let lastSeen = expectedTimes, let atScan = scanTimes else { return nil }
        return folder.settledStamp(lastSeen: lastSeen, atScan: atScan, committed: committedStamp)
    }

    /// Notes the directories' times before the scan (or the trusted stamp that replaces a scan).
    func noteScanTimes(_ times: LocalStamp?, committed: LocalStamp?) {
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

    enum QuickCheck {
        /// Neither side changed since the last commit: nothing to read.
        case unchanged
        /// Only the server changed, and the QRESYNC SELECT (`selected`) says exactly what.
        case serverOnly(FolderState, SelectedMailbox)
        /// The full path runs; with the committed header when the check read it (the full path then
        /// need not read it again).
        case full(header: FolderState?)
    }

    /// Uses the state header alone: when no journal waits and the Maildir folder's directories are exactly
    /// as at the last commit, a QRESYNC SELECT tells whether the server changed and what. Any doubt gives
    /// `.full`, and the full path runs.
    func quickCheck(on imap: IMAPConnection) throws -> QuickCheck {
        guard !dryRun, imap.enabled.contains(.qresync), !store.hasJournal,
              let header = try store.loadHeader() else { return .full(header: nil) }
        guard let stamp = header.localStamp, header.uidValidity != 0, header.highestModSeq > 0,
              let modSeq = ModSequence(header.highestModSeq), folder.stamp()?.stamp == stamp else { return .full(header: header) }
        let s = try imap.select(mailbox, qresync: QResyncParameters(uidValidity: header.uidValidity, modSeq: modSeq))
        guard s.uidValidity == header.uidValidity else { return .full(header: header) }
        guard s.vanished.isEmpty, s.changed.isEmpty, s.uidNext == header.uidNext,
              s.highestModSeq?.value == header.highestModSeq else { return .serverOnly(header, s) }
        state = header
        selected = s
        return .unchanged
    }

    /// After a focused scan, lets go of the settled records: they are exactly as the committed file has
    /// them, so the commit copies their lines (as for server-only changes), and memory follows the change
    /// rather than the folder while the other folders are prepared. Only where the file alone is the base
    /// (no journal was replayed over it) and no unsettled record is a tombstone (uid 0: a merged commit
    /// finds old lines by UID).
    func keepOnlyUnsettled(journaled: Bool) {
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
    func prepareServerChanges(header: FolderState, selected s: SelectedMailbox, on imap: IMAPConnection) throws -> Bool {
        let changedUIDs = s.changed.map(\.uid).filter { $0 != 0 }
        // Only UIDs below the server's UIDNEXT can be in the state: a VANISHED naming more is cut, never listed.
        // Not the saved UIDNEXT: it is the last SELECT's, and the state also pairs what that run APPENDed or
        // moved in with UID MOVE after it (UIDs at or above it). Cut at it, their expunge was dropped while
        // the mod-sequence passed it, and the Maildir kept the message for good.
        let limit = max(header.uidNext, s.uidNext ?? 0)
        let vanishedKnown = limit > 1 ? s.vanished.clamped(to: 1...limit - 1) : UIDSet([])
        guard vanishedKnown.count + changedUIDs.count <= max(1_000, Int(s.exists) / 4) else { return false }
        var uids = Set(changedUIDs)
        let vanished = Set(vanishedKnown.elements)
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
        translation = try loadKeywords()
        noteScanTimes(header.localStamp, committed: header.localStamp)
        let known = state.records.filter { !$0.unique.isEmpty }
        var entries = MaildirScanner.locate(folder, known.map { ($0.unique, $0.flags) })
        if entries == nil {
            let scan = try MaildirScanner.scan(folder, only: Set(known.map(\.unique)))
            summary.notes += scan.warnings
            if !scan.warnings.isEmpty { passedOver = true }
            entries = scan.entries
        }
        for entry in entries ?? [] where localByUnique[entry.unique] == nil { localByUnique[entry.unique] = LocalFile(entry) }
        remote = try listRemote(state: state, incremental: true, on: imap)
        try fetchNewKeys(on: imap)
        try prefetchNewBodies(on: imap)
        verbose("  only the server changed: \(uids.count) UID(s) read from the state")
        return true
    }

    // MARK: - Listing

    /// The UIDs the QRESYNC SELECT reported changed or vanished; vanished ones only where the state has them,
    /// so a hostile `VANISHED (EARLIER) 1:4000000000` costs what we know.
    var serverChangedUIDs: Set<UInt32> {
        let table = self.table
        let gone = selected.vanished.elements(among: table.unorderedRecords.lazy.map(\.uid), knownCount: table.count,
                                              isKnown: { table.record(uid: $0) != nil })
        return Set(selected.changed.map(\.uid)).union(gone)
    }

    func fetchNewKeys(on imap: IMAPConnection) throws {
        // A first sync has nothing local to pair them with (the other paths may hold only some records).
        guard table.count > 0 || settledCount > 0 || loadedUIDs != nil else { return }
        let fresh = unpairedRemote
        guard !fresh.isEmpty, fresh.count <= 1_000 else { return }
        newKeys = try MessageKeys.remote(imap, uids: fresh, wantHashesForSizes: [])
        newKeysFetched = Set(fresh)
    }

    /// Keys of server messages: from those fetched in `prepare` where they cover `uids` (ID-less ones of a
    /// wanted size still need their bytes), else asked of the server (the mailbox must be selected).
    func remoteKeys(_ uids: [UInt32], wantHashesForSizes sizes: Set<Int>, on imap: IMAPConnection) throws -> [UInt32: MessageKey] {
        let cached = uids.allSatisfy { newKeysFetched.contains($0) }
        if cached && (sizes.isEmpty || uids.allSatisfy { newKeys[$0] != nil }) {
            var keys: [UInt32: MessageKey] = [:]
            for uid in uids { keys[uid] = newKeys[uid] }
            return keys
        }
        try ensureSelected(on: imap)
        return try MessageKeys.remote(imap, uids: uids, wantHashesForSizes: sizes)
    }

    /// The server's messages with their flags in Maildir letters. With QRESYNC, only what changed since the
    /// saved mod-sequence travels; the rest is taken from the saved pairs.
    func listRemote(state: FolderState, incremental: Bool, on imap: IMAPConnection) throws -> [UInt32: MaildirFlags] {
        var remote: [UInt32: MaildirFlags] = [:]
        if incremental && imap.enabled.contains(.qresync) {
            remote.reserveCapacity(table.count - table.settledCount)
            for r in table.unsettledRecords where r.uid != 0 { remote[r.uid] = r.flags }
            for uid in selected.vanished.elements(among: remote.keys) { remote[uid] = nil }
            var skipped = SkippedFlagNotes()
            for m in selected.changed where m.uid != 0 {
                if let f = m.flags { remote[m.uid] = translation.letters(f) }
                skipped.note(m, in: &summary)
            }
            skipped.finish(&summary)
            return remote
        }
        guard selected.exists > 0 else { return [:] }
        // Streamed into the dictionary: a listing of a large folder is never held as messages.
        remote.reserveCapacity(min(Int(selected.exists), 1 << 20))   // EXISTS is the server's word: capped
        var collector = MessageInfoCollector()
        var skipped = SkippedFlagNotes()
        try imap.fetch(UIDSet(1...UIDSet.star), items: [.uid, .flags]) { [self] event in
            if let m = collector.feed(event), m.uid != 0 {
                remote[m.uid] = translation.letters(m.flags ?? [])
                skipped.note(m, in: &summary)
            }
        }
        skipped.finish(&summary)
        return remote
    }

    // MARK: - Crash recovery

    /// Settles intents a previous run announced but did not confirm.
    func settle(_ replay: Replay, remote: inout [UInt32: MaildirFlags], on imap: IMAPConnection) throws {
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
