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

/// Crash settling: the intents an interrupted run announced in its journal (`Replay.pendingFetches`,
/// `pendingAppends`) but did not confirm, settled by looking rather than acting twice. A function of the
/// journal's replay and the prepared folder (its local files, table and listing); it records the pairs it
/// finds through the folder, so they are journaled like any other.
///
/// | intent           | found                                                 | settled as                   |
/// |------------------|-------------------------------------------------------|------------------------------|
/// | fetch `F uid u`  | the file `u` is in the folder, the UID and `u` are unpaired | a pair (not fetched again) |
/// | upload `A u …`   | a server message at or above the intent's UIDNEXT with the file's key | a pair (not uploaded again) |
/// | either           | nothing                                               | nothing: the plan acts again |
enum CrashSettling {
    /// Settles the intents of `replay` against `folder` as `prepare` listed it; `server` has its folder
    /// open (an upload's key is looked for among the messages that arrived since its intent).
    static func settle(_ replay: Replay, in folder: PreparedFolder, on server: any ServerStore) throws {
        let remote = folder.remote, localByUnique = folder.localByUnique  // not changed here; the table is
        settleFetches(replay.pendingFetches, in: folder)
        let appends = replay.pendingAppends.filter { localByUnique[$0.unique] != nil && folder.table.record(unique: $0.unique) == nil }
        guard !appends.isEmpty else { return }
        // An interrupted APPEND may or may not have reached the server: look for its key among the
        // messages that arrived since.
        let floor = appends.map(\.uidNext).min() ?? 0
        let candidates = remote.keys.filter { $0 >= floor && folder.table.record(uid: $0) == nil }
        let keys = try server.keys(
            of: candidates,
            hashingSizes: Set(appends.compactMap { $0.key }.filter(\.isContentHash).map(\.wireSize)))
        var byKey: [MessageKey: [UInt32]] = [:]
        for (uid, key) in keys { byKey[key, default: []].append(uid) }
        for a in appends {
            guard let key = a.key, var uids = byKey[key], !uids.isEmpty else { continue }
            uids.sort()
            let uid = uids.removeFirst()
            byKey[key] = uids
            folder.record(SyncRecord(uid: uid, unique: a.unique, flags: remote[uid] ?? []))
            folder.summary.notes.append("recovered \(a.unique) uploaded by an interrupted run")
        }
    }

    /// The fetch intents whose file arrived before the crash, paired rather than fetched again. The last
    /// intent for a UID names the file linked for it (`PreparedFolder.deliver`), and a unique part is this
    /// run's own (time, pid, counter, 64 random bits: no other writer makes it), so the name is the proof;
    /// a file of that name already paired is another message and is never taken for it. (The keys are not
    /// compared: a body whose re-counted size differs from the server's RFC822.SIZE would then be fetched
    /// again and its file uploaded back, a duplicate on both sides.)
    static func settleFetches(_ intents: [(uid: UInt32, unique: String)], in folder: PreparedFolder) {
        for (uid, unique) in intents {
            // A window's outside record of the UID is no pair: the fetch was of a message now inside it.
            guard let entry = folder.localByUnique[unique],
                folder.table.record(uid: uid).map({ $0.isOutside && $0.unique.isEmpty }) ?? true,
                folder.table.record(unique: unique) == nil
            else { continue }
            folder.record(SyncRecord(uid: uid, unique: unique, flags: entry.flags.intersection(syncableFlags)))
            folder.summary.notes.append("recovered UID \(uid) fetched by an interrupted run")
        }
    }
}
