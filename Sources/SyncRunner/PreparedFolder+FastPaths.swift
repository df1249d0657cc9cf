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

/// `PreparedFolder`'s fast paths: an unchanged folder, judged from the state header, the directories'
/// times and a QRESYNC SELECT (nothing read); and server-only changes (only their records read).
extension PreparedFolder {
    enum QuickCheck {
        /// Neither side changed since the last commit: nothing to read.
        case unchanged
        /// Only the server changed, and the QRESYNC SELECT (`selected`) says exactly what.
        case serverOnly(FolderState, ServerListing)
        /// The full path runs; with the committed header when the check read it (the full path then
        /// need not read it again).
        case full(header: FolderState?)
    }

    /// Uses the committed header alone: when no interrupted run's entries wait and the Maildir folder's
    /// directories are exactly as at the last commit, a QRESYNC SELECT tells whether the server changed and
    /// what. Any doubt gives `.full`, and the full path runs.
    func quickCheck(on server: any ServerStore) throws -> QuickCheck {
        guard !dryRun, !sync.listKeywordsWhole, !(sync.window?.moved ?? false), server.knowsVanishedSince(in: mailbox),
            let header = try store.loadCommittedHeader()
        else {
            return .full(header: nil)
        }
        guard let stamp = header.localStamp, header.uidValidity != 0, header.highestModSeq > 0,
            let modSeq = ModSequence(header.highestModSeq), folder.stamp()?.stamp == stamp
        else { return .full(header: header) }
        let s = try server.open(mailbox, since: ListingMark(uidValidity: header.uidValidity, modSeq: modSeq))
        guard s.uidValidity == header.uidValidity else { return .full(header: header) }
        guard s.vanished.isEmpty, s.changed.isEmpty, s.uidNext == header.uidNext,
            s.highestModSeq?.value == header.highestModSeq
        else { return .serverOnly(header, s) }
        state = header
        selected = s
        return .unchanged
    }

    /// Server-only changes: loads just the records of the changed and vanished UIDs and scans just their
    /// files, so work and memory follow the size of the change, not of the folder. Returns false (the
    /// full path should run) when the change is large, or when its deletions might trip the mass-deletion
    /// guard, which needs the whole folder to judge.
    func listServerChanges(header: FolderState, selected s: ServerListing, on server: any ServerStore) throws -> Bool {
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
        // A changed UID the last commit had seen but that has no record: a record was lost (see
        // `pairsAccountForTheServer`); the full path looks at the whole folder.
        let recorded = Set(partial.records.map(\.uid))
        guard !changedUIDs.contains(where: { $0 < header.uidNext && !recorded.contains($0) }) else { return false }
        let gone = partial.records.filter { $0.uid != 0 && !$0.unique.isEmpty && vanished.contains($0.uid) }.count
        // EXISTS counts a window's outside messages too: the full path judges the guard against the pairs.
        if gone > 0 && sync.window != nil { return false }
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
            hold(scan.refusedUniques)
            if !scan.warnings.isEmpty { times.passedOver = true }
            entries = scan.entries
        }
        for entry in entries ?? [] where localByUnique[entry.unique] == nil { localByUnique[entry.unique] = LocalFile(entry) }
        remote = try listRemote(state: state, incremental: true, on: server)
        try judgeWindow(on: server)
        try fetchNewKeys(on: server)
        try prefetchNewBodies(on: server)
        verbose("  only the server changed: \(uids.count) UID(s) read from the state")
        return true
    }
}
