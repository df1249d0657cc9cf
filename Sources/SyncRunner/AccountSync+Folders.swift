import ClientSettings
import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import MoCore
import SyncState

/// `AccountSync`'s folder steps: every pair prepared (listed), those that stand alone finished at once,
/// the others finished after move detection over one connection or a few; then the run's record.
extension AccountSync {
    /// What `prepareFolders` leaves for the rest of the run.
    struct PreparedFolders {
        /// The folders listed (unchanged ones included), in the order they are reported.
        var order: [FolderSync] = []
        /// The listings, by their `FolderSync`.
        var listings: [ObjectIdentifier: PreparedFolder] = [:]
        /// Listed folders not finished yet: they may hold halves of moves between folders.
        var pending: [PreparedFolder] = []
        /// Summaries of the folders finished already: unchanged, or standing alone.
        var finishedEarly: [ObjectIdentifier: FolderSummary] = [:]
        /// Summaries of the folders whose listing failed (the run went on without them).
        var failed: [FolderSummary] = []
        /// The transfers `pending` will make, and the connections opening for them.
        var work = ConnectionPlan.Work()
        var opener: ConnectionOpener?
    }

    /// Lists every folder over `imap`. Listing is one cheap exchange per folder (with QRESYNC): done on this
    /// connection. A folder that can take no part in a move between folders (`standsAlone`: flag changes
    /// only, or nothing) is finished at once, in the same selection. Moves need every other listing; then
    /// folders with work are finished, over more connections only when there are enough messages to
    /// transfer to repay their logins (`ConnectionPlan`). Those are opened in the background as soon as the
    /// listings so far call for them (a login costs about as much as listing several folders).
    ///
    /// A malformed response in one folder's listing fails that folder alone: `imap` is replaced by a new
    /// connection (at most `maxReconnections` a run) and the others go on.
    func prepareFolders(_ folders: [FolderSync], imap: inout IMAPConnection, settings: IMAPSettings) throws -> PreparedFolders {
        var out = PreparedFolders()
        let configured = connectionsAllowed
        var reconnections = 0
        for sync in folders {
            let listing = PreparedFolder(sync)
            options.verbose("\(listing.summary.folder): listing")
            var preparation = PreparedFolder.Preparation.unchanged
            do {
                let connection = imap
                if let failed = try attempt(listing, { preparation = try listing.prepare(on: connection) }) {
                    out.failed.append(failed)
                    continue
                }
            } catch let error as IMAPError where error.isParse && reconnections < Self.maxReconnections {
                // Malformed bytes in one folder's listing or bodies: that folder fails alone (its journal makes
                // the interruption safe), the closed connection is replaced, and the other folders go on.
                out.failed.append(listing.summary.failed(error))
                reconnections += 1
                imap = try IMAPConnection.openForSync(settings, trace: options.trace)
                continue
            }
            out.order.append(sync)
            guard case .listed = preparation else {
                // Unchanged on both sides: nothing to finish.
                options.verbose("\(listing.summary.folder): syncing")
                out.finishedEarly[ObjectIdentifier(sync)] = listing.summary
                continue
            }
            out.listings[ObjectIdentifier(sync)] = listing
            if listing.standsAlone {
                // Finished while its mailbox is still selected: a second SELECT of a folder changed lately
                // costs the server a re-read of it (see `PreparedFolder.prefetchNewBodies`).
                if let r = try finishFolder(listing, on: imap) { out.finishedEarly[ObjectIdentifier(sync)] = r }
                continue
            }
            out.pending.append(listing)
            out.work.add(transfers: listing.pendingTransfers)
            if out.opener == nil && ConnectionPlan.extra(configured: configured, work: out.work) > 0 {
                let trace = options.trace
                out.opener = ConnectionOpener(count: configured - 1) { try IMAPConnection.openForSync(settings, trace: trace) }
            }
        }
        return out
    }

    /// The `connections` setting (a dry run: 1).
    var connectionsAllowed: Int { options.dryRun ? 1 : account.sync.connections }

    /// Finishes the folders `prepareFolders` left pending (after `MoveDetector`): those with work over
    /// `imap` and the connections opened meanwhile (as many as `ConnectionPlan` wants; the others are
    /// logged out), the folder still selected first (its finish needs no second SELECT); then the idle
    /// ones over `imap`. Returns their summaries by `FolderSync`.
    func finishFolders(_ prepared: PreparedFolders, on imap: IMAPConnection) throws -> [ObjectIdentifier: FolderSummary] {
        var results: [ObjectIdentifier: FolderSummary] = [:]
        let idle = prepared.pending.filter(\.looksIdle)
        let idleIDs = Set(idle.map(ObjectIdentifier.init))
        let withWork = prepared.pending.filter { !idleIDs.contains(ObjectIdentifier($0)) }
        let busy = withWork.filter { $0.mailbox == imap.selectedMailbox } + withWork.filter { $0.mailbox != imap.selectedMailbox }
        var pool = [imap]
        let wanted = 1 + ConnectionPlan.extra(configured: connectionsAllowed, work: prepared.work)
        for c in prepared.opener?.take() ?? [] {
            if pool.count < wanted { pool.append(c) } else { c.logout() }
        }
        defer { for c in pool.dropFirst() { c.logout() } }
        let finish = { (listing: PreparedFolder, connection: IMAPConnection) in try self.finishFolder(listing, on: connection) }
        for (listing, result) in zip(busy, try ParallelFolders(connections: pool).run(busy, finish)) {
            if let r = result ?? nil { results[ObjectIdentifier(listing.sync)] = r }
        }
        for listing in idle {
            if let r = try finishFolder(listing, on: imap) { results[ObjectIdentifier(listing.sync)] = r }
        }
        return results
    }

    /// Finishes one folder; a failure confined to it becomes its summary (`attempt`).
    func finishFolder(_ listing: PreparedFolder, on imap: IMAPConnection) throws -> FolderSummary? {
        options.verbose("\(listing.summary.folder): syncing")
        var result: FolderSummary?
        if let failed = try attempt(listing, { result = try listing.finish(on: imap) }) { return failed }
        return result
    }

    /// The run's summaries: the pairing's, the failed listings', then every listed folder's in order; and
    /// `unsynced-keywords` rewritten from the folders finished (not on a dry run).
    func record(
        _ paired: PairedFolders, _ prepared: PreparedFolders,
        finished: [ObjectIdentifier: FolderSummary]
    ) -> [FolderSummary] {
        if !options.dryRun { recordUnsyncedKeywords(paired.folders, listed: prepared.listings, finished: finished) }
        return paired.summaries + prepared.failed + prepared.order.compactMap { finished[ObjectIdentifier($0)] }
    }
}
