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

/// `PreparedFolder`'s second half: the plan against the listings, its execution
/// (`PreparedFolder+Execution.swift`), and the commit of the state.
extension PreparedFolder {
    /// Second half: plan against the prepared listings and perform the plan, then commit the state.
    /// `server`: the store it works on (in a parallel run, its worker's connection; see `ParallelFolders`).
    func finish(on server: any ServerStore) throws -> FolderSummary {
        defer { keywordsLock = nil }
        defer { discardPrefetched() }
        run.unstorable = FlagTranslation.unstorableLetters(translation.keywords, permanentFlags: selected.permanentFlags)
            .union(server.neverStored)

        // Both sides equal the saved pairs: nothing to plan. (The common case of a timer-driven run, so
        // it skips the planner's work on large folders.)
        let extraSides = extraServerSides()
        if looksIdle && !translation.changed && !extraKeywordsPending(extraSides) && stateIsCurrent(stamp: commitStamp()) {
            try recordWindow()
            return summary
        }

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
            run.tainted = computed.tainted
            remoteKeys = try self.remoteKeys(
                unpairedRemote,
                wantHashesForSizes: Set(localKeys.values.filter(\.isContentHash).map(\.wireSize)),
                on: server)
        }

        // A held pair (its file's name refused) is out of the plan on both sides; if the server changed its
        // message, the saved marks must not pass that change (`heldChanged`).
        let heldUIDs = held.isEmpty ? [] : Set(held.compactMap { table.record(unique: $0)?.uid })
        run.heldChanged = heldUIDs.contains { uid in remote[uid] == nil || remote[uid] != table.record(uid: uid)?.flags }
        let plan = SyncPlanner.plan(
            records: held.isEmpty ? Array(table.unsettledRecords) : table.unsettledRecords.filter { !held.contains($0.unique) },
            local: localByUnique.values.map { LocalMessage(unique: $0.unique, flags: $0.flags) },
            remote: remote.compactMap { heldUIDs.contains($0.key) ? nil : RemoteMessage(uid: $0.key, flags: $0.value) },
            policy: planPolicy, localKeys: localKeys, remoteKeys: remoteKeys, settled: settledCount,
            unstorable: run.unstorable, window: window)

        // The listing is not needed past the plan (only its highest UID, for a server without UIDNEXT).
        run.releasedMaxUID = remote.keys.max() ?? 0
        remote = [:]
        let acted = !plan.actions.isEmpty
        if let stop = plan.stoppedBy {
            summary.stopped = stop.description
            guard !dryRun else { return summary }  // a dry run writes nothing, not even the keyword table
            try saveKeywords()  // records of this run's journal may use letters the listing assigned
            try store.flush()
            return summary
        }
        if dryRun {
            for action in plan.actions { planned("\(summary.folder): \(action)") }
            _ = try mergeExtraKeywords(extraSides, on: server)  // shown, not done
            count(plan)
            return summary
        }

        if acted {
            store.append(.status(uidValidity: selected.uidValidity, uidNext: state.uidNext, highestModSeq: state.highestModSeq))
        }
        // Letters the listing assigned are saved before any file carries them: a crash in between must not
        // leave a file whose letter the table does not name.
        try saveKeywords()
        try execute(plan, on: server)
        let merged = try mergeExtraKeywords(extraSides, on: server)
        if run.deferred > 0 { return try stopForTheDay() }

        if run.cleaned > 0 {
            summary.notes.append("removed the X-TUID/X-OfflineIMAP header another syncer had added from \(run.cleaned) adopted message(s)")
        }
        try saveKeywords()
        if !translation.unmapped.isEmpty {
            // Bounded: a server may send thousands of keywords on one message (mo-sync status lists them all).
            summary.notes.append(
                "\(translation.unmapped.count) keyword(s) beyond the 26 a Maildir folder can hold stay on the server: "
                    + boundedList(translation.unmapped, separator: " "))
        }
        // A run that changed nothing writes nothing (no write, no fsync).
        let stamp = commitStamp()
        if !acted && !merged && stateIsCurrent(stamp: stamp) {
            try recordWindow()
            return summary
        }
        let marks = serverMarks
        state.localStamp = stamp
        state.uidValidity = selected.uidValidity
        // Only now may the mod-sequence advance: everything up to it is reflected in the records. Not past a
        // change to a held pair's message (its file's name refused): it is listed again next run.
        if !run.heldChanged {
            state.uidNext = marks.uidNext
            state.highestModSeq = marks.modSeq
        }
        CrashPoint.step("commit: before")
        // In a turn (`WholeLoads`): a commit that compacts loads the folder's every record.
        let complete = loadedUIDs == nil && !focused ? table : nil
        try sync.wholeLoads.one { try store.commit(state, completeTable: complete) }
        CrashPoint.step("commit: after")
        if !run.metRemapped.isEmpty { try? RemappedFiles.remove(run.metRemapped, folder: folder.path) }
        try recordWindow()
        return summary
    }

    /// New messages left for a later run (`DownloadAllowance`, or the server's OVERQUOTA): everything else
    /// the plan did stands (journaled), but the folder is not committed, so the next run takes the full path
    /// and fetches the rest (the saved marks never pass a message not fetched). Exit status 75.
    func stopForTheDay() throws -> FolderSummary {
        try saveKeywords()
        try store.flush()
        let why =
            run.overQuota
            ? "the server refused further downloads for now (OVERQUOTA: its daily download allowance is spent)"
            : "the daily download allowance (\(SizeText.format(sync.allowance?.limit ?? 0)) in 24 hours) is spent"
        summary.stopped = "\(why); \(run.deferred) new message(s) left to download, by the next run after the allowance renews"
        summary.stoppedKind = .temporary
        return summary
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
