import Maildir

/// The sync decision for one folder as a pure function of (saved pairs, local scan, remote listing, policy).
///
/// Rules, per saved pair (uid ↔ unique, base flags):
///
/// | local | server | action                                                            |
/// |-------|--------|-------------------------------------------------------------------|
/// | yes   | yes    | 3-way flag merge against the base                                 |
/// | yes   | gone   | delete local (if deletions pull), else keep it as a local-only tombstone |
/// | gone  | yes    | delete on server (if deletions push), else a server-only tombstone |
/// | gone  | gone   | forget the pair                                                   |
///
/// Messages in no pair are new: first paired by `MessageKey` (adoption, lost state, UIDVALIDITY change),
/// both sides brought to the union of their flags, then fetched or appended as the policy allows. Messages
/// already marked deleted (`T`/`\Deleted`) are never transferred as new when that side expunges.
///
/// Flags merge letter by letter: a letter changed on one side since the base takes that side's value;
/// a letter changed on both sides changed the same way (flags are booleans), so there is no conflict.
/// Only `syncableFlags` take part; other local letters ride along untouched.
///
/// `unstorable`: keyword letters the server refuses to store in this folder (PERMANENTFLAGS without `\*`
/// not listing their keyword; `FlagTranslation.unstorableLetters`). They are masked out of both sides and
/// the base, so they ride along like local-only letters:
///
/// | letter                 | local file | STORE / APPEND | server lacking it means |
/// |------------------------|------------|----------------|-------------------------|
/// | syncable               | merged     | yes            | removed there (3-way)   |
/// | unstorable             | kept as is | never          | nothing (not a removal) |
///
/// A base holding an unstorable letter drops it, so once the server accepts the keyword the local letter
/// reads as a local addition and is pushed, never as a removal on the server.
///
/// `window` (`SyncWindow`, a folder's `max-age`; nil: none, or not judged this run): records whose flags
/// carry `SyncRecord.outsideMark` are the server's messages outside it.
///
/// | message                                   | window says        | action                                      |
/// |-------------------------------------------|--------------------|---------------------------------------------|
/// | new on the server                         | outside, not kept  | an outside record, nothing fetched          |
/// | outside record, on the server             | admits it now      | fetch (its pair replaces the record)        |
/// | outside record, on the server             | still outside      | the record follows the server's flags       |
/// | outside record, gone from the server      | –                  | forget                                      |
/// | outside record with its file (a run stopped letting it go) | – | a pair again: the rows above, then expiry  |
/// | pair, both sides equal to the base        | outside, not kept, `expireLocal` | `expireLocal` (not a deletion) |
///
/// Nothing outside the window is ever deleted on either side, and `expireLocal` is not counted by the
/// mass-deletion guard, whose totals count pairs only (`settled` must not count outside records either).
/// With no window judged, outside records stand as they are.
///
/// A focused plan leaves out the `settled` pairs whose both sides equal their base (the first row of the
/// flag merge: no action); they still count in each side's size for the mass-deletion guard.
public enum SyncPlanner {
    public static func plan(
        records: [SyncRecord], local: [LocalMessage], remote: [RemoteMessage],
        policy: SyncPolicy,
        localKeys: [String: MessageKey] = [:],
        remoteKeys: [UInt32: MessageKey] = [:],
        settled: Int = 0, unstorable: MaildirFlags = [], window: SyncWindow? = nil
    ) -> FolderPlan {
        let syncable = syncableFlags.subtracting(unstorable)
        var localByUnique: [String: LocalMessage] = [:]
        localByUnique.reserveCapacity(local.count)
        for m in local { localByUnique[m.unique] = m }
        var remoteByUID: [UInt32: RemoteMessage] = [:]
        remoteByUID.reserveCapacity(remote.count)
        for m in remote { remoteByUID[m.uid] = m }

        var actions: [SyncAction] = []
        var pairedUniques = Set<String>(minimumCapacity: records.count)
        var pairedUIDs = Set<UInt32>(minimumCapacity: records.count)
        // Server messages outside the window: not in the guard's count of the server's side.
        var outsideOnServer = 0

        for saved in records.sorted(by: recordOrder) {
            if !saved.unique.isEmpty { pairedUniques.insert(saved.unique) }
            if saved.uid != 0 { pairedUIDs.insert(saved.uid) }
            let l = saved.unique.isEmpty ? nil : localByUnique[saved.unique]
            let r = saved.uid == 0 ? nil : remoteByUID[saved.uid]

            var record = saved
            if saved.isOutside {
                guard l != nil else {
                    if r != nil { outsideOnServer += 1 }
                    outside(saved, remote: r, window: window, policy: policy, syncable: syncable, into: &actions)
                    continue
                }
                record.flags.remove(SyncRecord.outsideMark)  // its file is here: a pair again
            }
            let firstAction = actions.count
            defer {
                // A pair again keeps no mark, unless this plan lets its file go once more.
                if record != saved && !actions[firstAction...].contains(where: { if case .updateRecord = $0 { true } else { false } }) {
                    actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: record))
                }
            }
            if record.uid == 0 || record.unique.isEmpty {
                // A tombstone lives as long as the side that still has the message keeps it.
                if l == nil && r == nil {
                    actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: nil))
                }
                continue
            }
            switch (l, r) {
            case let (l?, r?):
                if let window, window.expireLocal, !window.admits(uid: r.uid, flags: r.flags),
                    l.flags.intersection(syncableFlags) == record.flags.intersection(syncable),  // no letter the server lacks
                    r.flags.intersection(syncable) == record.flags.intersection(syncable)
                {
                    actions.append(.expireLocal(uid: record.uid, unique: record.unique, flags: record.flags))
                    actions.append(
                        .updateRecord(uid: record.uid, unique: record.unique, record: .outside(uid: record.uid, flags: record.flags)))
                    continue
                }
                mergeFlags(record: record, local: l, remote: r, policy: policy, syncable: syncable, into: &actions)
            case (_?, nil):
                if policy.delete.contains(.pull) {
                    actions.append(.deleteLocal(unique: record.unique))
                    actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: nil))
                } else {
                    var tomb = record; tomb.uid = 0
                    actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: tomb))
                }
            case (nil, _?):
                if policy.delete.contains(.push) {
                    actions.append(.deleteRemote(uid: record.uid))
                    actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: nil))
                } else {
                    var tomb = record; tomb.unique = ""
                    actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: tomb))
                }
            case (nil, nil):
                actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: nil))
            }
        }

        var newLocal = local.filter { !pairedUniques.contains($0.unique) }.sorted { $0.unique < $1.unique }
        var newRemote = remote.filter { !pairedUIDs.contains($0.uid) }.sorted { $0.uid < $1.uid }

        // Same message on both sides without a saved pair: pair by key, in order, one to one.
        if !localKeys.isEmpty && !remoteKeys.isEmpty {
            var remoteByKey: [MessageKey: [RemoteMessage]] = [:]
            for m in newRemote { if let k = remoteKeys[m.uid] { remoteByKey[k, default: []].append(m) } }
            var adoptedUIDs = Set<UInt32>()
            var keptLocal: [LocalMessage] = []
            for l in newLocal {
                guard let k = localKeys[l.unique], var candidates = remoteByKey[k], !candidates.isEmpty else {
                    keptLocal.append(l)
                    continue
                }
                let r = candidates.removeFirst()
                remoteByKey[k] = candidates
                adoptedUIDs.insert(r.uid)
                actions += adoption(local: l, remote: r, syncable: syncable, pushFlags: policy.flags.contains(.push))
            }
            newLocal = keptLocal
            newRemote = newRemote.filter { !adoptedUIDs.contains($0.uid) }
        }

        if policy.new.contains(.pull) {
            for r in newRemote where !(policy.expungeRemote && r.flags.contains(.trashed)) {
                if let window, !window.admits(uid: r.uid, flags: r.flags) {
                    outsideOnServer += 1
                    let kept = SyncRecord.outside(uid: r.uid, flags: r.flags.intersection(syncable))
                    actions.append(.updateRecord(uid: r.uid, unique: "", record: kept))
                } else {
                    actions.append(.fetch(uid: r.uid, flags: r.flags.intersection(syncable)))
                }
            }
        }
        if policy.new.contains(.push) {
            for l in newLocal where !(policy.expungeLocal && l.flags.contains(.trashed)) {
                actions.append(.append(unique: l.unique, flags: l.flags.intersection(syncable)))
            }
        }

        if !policy.force,
            let tripped = deletionGuard(
                actions, localCount: local.count + settled,
                remoteCount: remote.count - outsideOnServer + settled, policy: policy)
        {
            return FolderPlan(actions: [], stoppedBy: tripped)
        }
        return FolderPlan(actions: actions)
    }

    /// The rows of an outside record without its file (the window table above).
    static func outside(
        _ record: SyncRecord, remote r: RemoteMessage?, window: SyncWindow?, policy: SyncPolicy, syncable: MaildirFlags,
        into actions: inout [SyncAction]
    ) {
        guard let r else {
            actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: nil))
            return
        }
        guard let window else { return }
        let flags = r.flags.intersection(syncable)
        if window.admits(uid: r.uid, flags: r.flags) && policy.new.contains(.pull)
            && !(policy.expungeRemote && r.flags.contains(.trashed))
        {
            actions.append(.fetch(uid: r.uid, flags: flags))
        } else if record != .outside(uid: r.uid, flags: flags) {
            actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: .outside(uid: r.uid, flags: flags)))
        }
    }

    /// Three-way merge of one pair's flags, with expunge of messages that end up marked deleted.
    static func mergeFlags(
        record: SyncRecord, local: LocalMessage, remote: RemoteMessage,
        policy: SyncPolicy, syncable: MaildirFlags = syncableFlags,
        into actions: inout [SyncAction]
    ) {
        let base = record.flags.intersection(syncable)
        let l = local.flags.intersection(syncable)
        let r = remote.flags.intersection(syncable)
        let localChanged = l.symmetricDifference(base)
        let remoteChanged = r.symmetricDifference(base)
        let push = policy.flags.contains(.push), pull = policy.flags.contains(.pull)

        let remoteTarget = push ? r.subtracting(localChanged).union(l.intersection(localChanged)) : r
        let localTarget = pull ? l.subtracting(remoteChanged).union(r.intersection(remoteChanged)) : l
        // The base is what the sides agree on; where the policy keeps one side's change from travelling,
        // the base follows the side that did not change, so the change is neither sent later nor undone.
        let newBase = pull ? remoteTarget : push ? localTarget : base

        let expungeHere = policy.expungeLocal && localTarget.contains(.trashed)
        let expungeThere = policy.expungeRemote && remoteTarget.contains(.trashed)

        if expungeHere {
            actions.append(.deleteLocal(unique: record.unique))
        } else if localTarget != l {
            let full = local.flags.subtracting(syncable).union(localTarget)
            actions.append(.setLocalFlags(unique: record.unique, flags: full))
        }
        if expungeThere {
            actions.append(.deleteRemote(uid: record.uid))
        } else if remoteTarget != r {
            actions.append(
                .setRemoteFlags(
                    uid: record.uid, add: remoteTarget.subtracting(r),
                    remove: r.subtracting(remoteTarget)))
        }

        var updated = record
        updated.flags = newBase
        switch (expungeHere, expungeThere) {
        case (true, true):
            actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: nil))
        case (true, false):
            updated.unique = ""  // the server copy stays (marked deleted) but must not come back
            actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: updated))
        case (false, true):
            updated.uid = 0
            actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: updated))
        case (false, false):
            if newBase != record.flags {  // records hold syncable letters only: differs from `base` only by unstorable ones
                actions.append(.updateRecord(uid: record.uid, unique: record.unique, record: updated))
            }
        }
    }

    /// Pairing two copies with no history: the union of their flags, except that a message is only
    /// considered deleted if both copies say so (losing a flag is better than losing a message). Both sides
    /// are brought to it: the file renamed, and the server's flags stored when they differ. The pair's base
    /// is the server's flags until that store is done (`updateRecord` after it), so a run cut in between
    /// never records flags the server lacks: the next run sees the file's as a local change and stores them.
    /// An account that does not push flags (`pushFlags` false) stores nothing: the base stays the server's,
    /// and the file's own letters are a local change that policy keeps local.
    static func adoption(
        local: LocalMessage, remote: RemoteMessage, syncable: MaildirFlags = syncableFlags, pushFlags: Bool = true
    ) -> [SyncAction] {
        let l = local.flags.intersection(syncable), r = remote.flags.intersection(syncable)
        var merged = l.union(r)
        if !(l.contains(.trashed) && r.contains(.trashed)) { merged.remove(.trashed) }
        let adopt = SyncAction.adopt(
            uid: remote.uid, unique: local.unique, localFlags: local.flags.subtracting(syncable).union(merged), remoteFlags: r)
        guard merged != r, pushFlags else { return [adopt] }
        return [
            adopt, .setRemoteFlags(uid: remote.uid, add: merged.subtracting(r), remove: r.subtracting(merged)),
            .updateRecord(uid: remote.uid, unique: local.unique, record: SyncRecord(uid: remote.uid, unique: local.unique, flags: merged))
        ]
    }

    static func deletionGuard(
        _ actions: [SyncAction], localCount: Int, remoteCount: Int,
        policy: SyncPolicy
    ) -> DeletionGuard? {
        var localDeletes = 0, remoteDeletes = 0
        for a in actions {
            if case .deleteLocal = a { localDeletes += 1 }
            if case .deleteRemote = a { remoteDeletes += 1 }
        }
        func trips(_ n: Int, _ total: Int) -> Bool {
            n > policy.deleteGuardFloor && n * 100 > policy.maxDeletePercent * total
        }
        if trips(localDeletes, localCount) { return DeletionGuard(side: .local, count: localDeletes, total: localCount) }
        if trips(remoteDeletes, remoteCount) { return DeletionGuard(side: .remote, count: remoteDeletes, total: remoteCount) }
        return nil
    }

    public static func recordOrder(_ a: SyncRecord, _ b: SyncRecord) -> Bool {
        a.uid != b.uid ? a.uid < b.uid : a.unique < b.unique
    }
}
