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
        /// The helper's connection when it listed to the end (`ListingHelper`): a finish may use it.
        var spare = SpareConnection(nil)
    }

    /// Lists every folder over `imap`, and over a second connection alongside when the listing so far says
    /// the rest will take longer than a login (`ListingPlan`: a server that re-reads folders changed lately
    /// before it answers, or a far one). Listing is one exchange per folder (with QRESYNC). A folder that can
    /// take no part in a move between folders (`standsAlone`: flag changes only, or nothing) is finished at
    /// once, in the same selection on the same connection. Moves need every other listing; then folders with
    /// work are finished, over more connections only when there are enough messages to transfer to repay
    /// their logins (`ConnectionPlan`). Those are opened in the background as soon as the listings so far
    /// call for them (a login costs about as much as listing several folders).
    ///
    /// A malformed response in one folder's listing fails that folder alone: `imap` is replaced by a new
    /// connection (at most `maxReconnections` a run) and the others go on; the helper, whose connection it
    /// was, stops and leaves the rest to `imap`.
    func prepareFolders(_ folders: [FolderSync], imap: inout IMAPConnection, settings: IMAPSettings, login: Double) throws
        -> PreparedFolders
    {
        let queue = FolderQueue(count: folders.count)
        // The large folders (`ListingPlan.large`) from index i on: stat'ed only once `ListingPlan` asks.
        lazy var largeFrom: [Int] = {
            var from = Array(repeating: 0, count: folders.count + 1)
            for i in folders.indices.reversed() {
                from[i] = from[i + 1] + (folders[i].store.bytesOnDisk >= ListingPlan.large ? 1 : 0)
            }
            return from
        }()
        let outcomes = ListingOutcomes(count: folders.count)
        var out = PreparedFolders()
        let configured = connectionsAllowed
        var reconnections = 0, listed = 0, seconds = 0.0, ownWork = ConnectionPlan.Work()
        var helper: ListingHelper?
        defer {
            queue.stop()  // a helper still listing takes no more folders, once the run has failed
            if let c = helper?.join().connection { c.logout() }
        }
        while let i = queue.take() {
            let started = monotonicSeconds()
            let outcome = try listFolder(folders[i], on: imap)
            outcomes.set(i, outcome)
            listed += 1
            seconds += monotonicSeconds() - started
            if case .broken(_, let error) = outcome {
                guard reconnections < Self.maxReconnections else { throw error }
                reconnections += 1
                imap = try IMAPConnection.openForSync(settings, trace: options.trace)
            }
            // A server that sent malformed bytes gets no second connection (its logins stay bounded). Nor
            // does a run whose finishes' connections are opening already: it holds `connections` at most.
            if helper == nil, out.opener == nil, reconnections == 0,
                ListingPlan.wantsHelper(
                    configured: configured, listed: listed, seconds: seconds,
                    largeLeft: { largeFrom[folders.count - queue.left] }, left: queue.left, login: login)
            {
                let trace = options.trace
                helper = ListingHelper(queue: queue, open: { try IMAPConnection.openForSync(settings, trace: trace) }) {
                    [self] i, connection in
                    let outcome = try listFolder(folders[i], on: connection, helper: true)
                    outcomes.set(i, outcome)
                    if case .broken = outcome { return false }
                    return true
                }
            }
            // The transfers this connection's listings found so far (the helper's are counted at the end).
            if case .pending(_, let listing) = outcome { ownWork.add(transfers: listing.pendingTransfers) }
            if out.opener == nil { out.opener = finishConnections(for: ownWork, settings: settings, helper: helper != nil) }
        }
        if let joined = helper?.join() {
            if let error = joined.error { throw error }
            out.spare = SpareConnection(joined.connection)
        }
        for outcome in outcomes.all {
            switch outcome {
            case nil: break
            case .failed(let summary), .broken(let summary, _): out.failed.append(summary)
            case .unchanged(let sync, let summary):
                out.order.append(sync)
                out.finishedEarly[ObjectIdentifier(sync)] = summary
            case .finished(let sync, let listing, let summary):
                out.order.append(sync)
                out.listings[ObjectIdentifier(sync)] = listing
                if let summary { out.finishedEarly[ObjectIdentifier(sync)] = summary }
            case .pending(let sync, let listing):
                out.order.append(sync)
                out.listings[ObjectIdentifier(sync)] = listing
                out.pending.append(listing)
                out.work.add(transfers: listing.pendingTransfers)
            }
        }
        if out.opener == nil { out.opener = finishConnections(for: out.work, settings: settings, helper: out.spare.holdsOne) }
        return out
    }

    /// The connections `ConnectionPlan` wants for the finishes of `work`, beyond the first, opening in the
    /// background; nil when it wants none. The listing `helper`'s connection, alive or kept for the
    /// finishes, counts as one of them, so the account never holds more than `connections` at once (Gmail
    /// allows 15); a helper that fails leaves the finishes one short.
    func finishConnections(for work: ConnectionPlan.Work, settings: IMAPSettings, helper: Bool) -> ConnectionOpener? {
        let extra = ConnectionPlan.extra(configured: connectionsAllowed, work: work) - (helper ? 1 : 0)
        guard extra > 0 else { return nil }
        let trace = options.trace
        return ConnectionOpener(count: extra) { try IMAPConnection.openForSync(settings, trace: trace) }
    }

    /// Lists one folder over `connection`. On the first connection it throws what ends the connection for
    /// every folder (the network, BYE), which ends the run; on the `helper`'s, that fails the folder alone
    /// (`.broken`), and the first connection lists the rest.
    func listFolder(_ sync: FolderSync, on connection: IMAPConnection, helper: Bool = false) throws -> ListingOutcome {
        let listing = PreparedFolder(sync)
        options.verbose("\(listing.summary.folder): listing")
        var preparation = PreparedFolder.Preparation.unchanged
        do {
            if let failed = try attempt(listing, { preparation = try listing.prepare(on: connection) }) { return .failed(failed) }
        } catch let error as IMAPError where error.isParse || helper {
            // Malformed bytes in one folder's listing or bodies: that folder fails alone (its journal makes
            // the interruption safe); the connection is closed, and the caller replaces it or stops.
            return .broken(listing.summary.failed(error), error)
        }
        guard case .listed = preparation else {
            options.verbose("\(listing.summary.folder): syncing")
            return .unchanged(sync, listing.summary)
        }
        guard listing.standsAlone else { return .pending(sync, listing) }
        // Finished while its mailbox is still selected: a second SELECT of a folder changed lately costs the
        // server a re-read of it (see `PreparedFolder.prefetchNewBodies`).
        do {
            return .finished(sync, listing, try finishFolder(listing, on: connection))
        } catch let error as IMAPError where helper {
            return .broken(listing.summary.failed(error), error)
        }
    }

    /// The `connections` setting (a dry run: 1).
    var connectionsAllowed: Int { options.dryRun ? 1 : max(1, account.sync.connections - options.connectionsHeld) }

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
        for c in [prepared.spare.take()].compactMap({ $0 }) + (prepared.opener?.take() ?? []) {
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
    func finishFolder(_ listing: PreparedFolder, on server: any ServerStore) throws -> FolderSummary? {
        options.verbose("\(listing.summary.folder): syncing")
        var result: FolderSummary?
        if let failed = try attempt(listing, { result = try listing.finish(on: server) }) { return failed }
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
