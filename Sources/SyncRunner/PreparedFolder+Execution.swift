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

/// `PreparedFolder`'s execution of a plan: flag changes and deletions on both sides, fetches delivered in
/// batches, uploads.
extension PreparedFolder {
    // MARK: - Execution

    /// Performs the plan it consumes: its actions are sorted out and let go before the bodies are fetched,
    /// so a large folder's are not held meanwhile.
    func execute(_ plan: consuming FolderPlan, on server: any ServerStore) throws {
        var fetches: [(uid: UInt32, flags: MaildirFlags)] = []
        var appends: [(unique: String, flags: MaildirFlags)] = []
        var stores: [StoreKey: [UInt32]] = [:]
        var remoteDeletes: [UInt32] = []
        var afterStores: [SyncAction] = []
        var expiries: [SyncRecord] = []
        // Renames or removals in cur/ or new/ not yet fsynced.
        var directoriesChanged = false

        // The plan's renames and removals are one own change (`ownChange`): two looks at the directories'
        // times, not two per file; inside it the files are renamed and removed without looks of their own.
        do {  // the actions go out of scope here, before any body is fetched
            let actions = plan.actions
            _ = consume plan
            try ownChange {
                summary.deletedBoth += deletedOnBothSides(actions)
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
                        if try renameLocally(unique: unique, flags: flags) { directoriesChanged = true }
                        CrashPoint.step("flags: local rename")
                        summary.flagsDown += 1
                    case .deleteLocal(let unique):
                        if let entry = localByUnique[unique] {
                            try folder.remove(path: entry.path, sync: false)
                            directoriesChanged = true
                            localByUnique[unique] = nil
                            CrashPoint.step("delete: local file removed")
                        }
                        summary.deletedLocal += 1
                    case .expireLocal(let uid, let unique, let flags):
                        expiries.append(SyncRecord(uid: uid, unique: unique, flags: flags.union(SyncRecord.outsideMark)))
                    case .adopt(let uid, let unique, let localFlags, let remoteFlags):
                        if run.tainted.contains(unique), let entry = localByUnique[unique] {
                            try removeForeignHeaders(entry.path)  // inside this own change
                        }
                        if let entry = localByUnique[unique], entry.flags != localFlags {
                            if try renameLocally(unique: unique, flags: localFlags) { directoriesChanged = true }
                        }
                        let remoteNow = localByUnique[unique].map { _ in remoteFlags } ?? remoteFlags
                        record(SyncRecord(uid: uid, unique: unique, flags: remoteNow))
                        summary.adopted += 1
                    case .updateRecord(let uid, _, let r):
                        // Applied after the server acts below, so a record never claims what the server lacks.
                        afterStores.append(action)
                        if let r, r.isOutside, r.unique.isEmpty, table.record(uid: uid) == nil { summary.outside += 1 }
                    }
                }
                if try letGo(expiries) { directoriesChanged = true }
            }
        }

        // Local renames and removals become durable together, before any entry that relies on them is
        // journaled (a lost rename under a journaled record would later look like a local change).
        if directoriesChanged {
            try folder.syncDirectory(.cur)
            try folder.syncDirectory(.new)
        }
        if !stores.isEmpty || !remoteDeletes.isEmpty { try ensureSelected(on: server) }
        try storeFlags(stores, on: server)
        CrashPoint.step("flags: stored on the server")
        if !remoteDeletes.isEmpty { noteOwn(try server.delete(UIDSet(uids: remoteDeletes))) }
        CrashPoint.step("delete: expunged on the server")
        // Placeholders flagged on either side are filled before their records say flagged: a run stopped
        // in between sees the flag as a change again, and fills then.
        let unfilled = try fillFlaggedPlaceholders(afterStores, on: server)
        for case .updateRecord(let uid, let unique, let newRecord) in afterStores where !unfilled.contains(uid) {
            if let newRecord { record(newRecord) } else { forget(uid: uid, unique: unique) }
        }
        try store.flush()
        CrashPoint.step("records journaled")

        try fetch(fetches, on: server)
        try upload(appends, on: server)
        try store.flush()
    }

    /// `expireLocal`: the pairs journaled as outside (one fsync), and only then their files removed, so a
    /// run stopped in between finds an outside record beside its file (a pair again, `SyncPlanner`), never a
    /// pair without its file (a local deletion). Inside the plan's own change; returns whether a file went.
    func letGo(_ expiries: [SyncRecord]) throws -> Bool {
        guard !expiries.isEmpty else { return false }
        for r in expiries { record(r) }
        try store.flush()
        CrashPoint.step("expire: outside journaled")
        var removed = false
        for r in expiries {
            if let entry = localByUnique[r.unique] {
                try folder.remove(path: entry.path, sync: false)
                localByUnique[r.unique] = nil
                removed = true
            }
            summary.expired += 1
        }
        CrashPoint.step("expire: local files removed")
        return removed
    }

    struct StoreKey: Hashable { var add: MaildirFlags; var remove: MaildirFlags }

    /// One STORE per distinct change, all pipelined.
    func storeFlags(_ stores: [StoreKey: [UInt32]], on server: any ServerStore) throws {
        var commands: [(uids: UIDSet, action: StoreAction)] = []
        for (key, uids) in stores.sorted(by: { $0.value.min()! < $1.value.min()! }) {
            let set = UIDSet(uids: uids)
            let add = translation.imapFlags(key.add), remove = translation.imapFlags(key.remove)
            if !add.isEmpty { commands.append((set, StoreAction(.add, add, silent: true))) }
            if !remove.isEmpty { commands.append((set, StoreAction(.remove, remove, silent: true))) }
        }
        noteOwn(try server.setFlags(commands))
    }

    /// Renames a local file to `flags` as an own change of its own (`ownChange`), for a rename outside the
    /// plan's batch; not fsynced (the caller syncs the directories).
    func setLocalFlags(unique: String, flags: MaildirFlags) throws {
        guard localByUnique[unique] != nil else { return }
        try ownChange { _ = try renameLocally(unique: unique, flags: flags) }
    }

    /// Renames a local file to `flags`, not fsynced, with no look at the directories' times: only inside an
    /// own change (`ownChange`). Returns whether there was a file to rename.
    func renameLocally(unique: String, flags: MaildirFlags) throws -> Bool {
        guard let entry = localByUnique[unique] else { return false }
        let path = try folder.setFlags(path: entry.path, flags: flags, moveToCur: !flags.isEmpty, sync: false)
        localByUnique[unique]?.path = path
        localByUnique[unique]?.flags = flags
        return true
    }

    /// Uploads new local messages (LF → CRLF, streamed from the file: `WireFile`), finding each on the
    /// server by APPENDUID, or without UIDPLUS by its key among the messages that arrived since.
    func upload(_ wanted: [(unique: String, flags: MaildirFlags)], on server: any ServerStore) throws {
        guard !wanted.isEmpty else { return }
        let floor = selected.uidNext ?? 1
        var unresolved: [(unique: String, key: MessageKey, flags: MaildirFlags)] = []
        var deferred = 0
        defer {
            if deferred > 0 {
                summary.notes.append(
                    "\(deferred) message(s) moved here wait a run (another device moved, deleted or is moving them): "
                        + "not uploaded; the next run pairs them with the moved copy, or uploads them if there is none")
            }
        }
        for (unique, flags) in wanted {
            guard let entry = localByUnique[unique] else { continue }
            if uploadsDeferred.contains(unique) {
                deferred += 1
                times.passedOver = true
                continue
            }
            let file: WireFile
            do {
                file = try WireFile(path: entry.path)
            } catch {
                summary.notes.append(escapedForMessage("\(error)") + "; not uploaded")  // a path from outside
                times.passedOver = true
                continue
            }
            if file.placeholderSize != nil {
                summary.notes.append(
                    quotedForMessage(entry.path)
                        + ": a placeholder (max-size) whose message this folder lacks on the server (moved or copied here?); not uploaded, "
                        + "and local deletions in the account wait: move it back and run mo-sync fetch on it, or delete it")
                times.passedOver = true
                continue
            }
            let key = file.key
            store.append(.appendIntent(unique: unique, uidNext: floor, key: key))
            try store.flush()
            CrashPoint.step("append: intent journaled")
            let date = InternalDate(epochSeconds: entry.mtimeSeconds)
            let result = try server.upload(
                to: mailbox, flags: translation.imapFlags(flags), date: date,
                size: file.wireSize
            ) { try file.stream($0) }
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
        try ensureSelected(on: server)
        let arrived = try server.ids(from: floor).filter { table.record(uid: $0) == nil }
        let keys = try server.keys(
            of: arrived,
            hashingSizes: Set(unresolved.filter { $0.key.isContentHash }.map(\.key.wireSize)))
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

}
