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

/// What the account-level passes read of a prepared folder (`AccountSync`: whether it stands alone, looks
/// idle, how much it will transfer) and what `MoveDetector` changes in it (pairs detached from the source
/// folder of a move and attached to its destination).
extension PreparedFolder {
    /// After `prepare`: whether both sides match the saved pairs exactly (nothing new, gone or re-flagged),
    /// so `finish` will have nothing to do. Used to spend extra connections only on folders with work.
    var looksIdle: Bool {
        // An expiry pass has work whenever a pair is outside the window (`judgeWindow` took them back).
        if let window, window.expireLocal, !window.outside.isEmpty { return false }
        var localFocus = 0, remoteFocus = 0
        for r in table.unsettledRecords {
            if r.isOutside && r.unique.isEmpty {
                // An outside record listed unchanged (a whole listing): nothing to do.
                guard let flags = remote[r.uid], flags.subtracting(SyncRecord.outsideMark) == r.flags.subtracting(SyncRecord.outsideMark),
                    window?.admits(uid: r.uid, flags: flags) != true
                else { return false }
                remoteFocus += 1
                continue
            }
            guard !r.unique.isEmpty, r.uid != 0,
                let l = localByUnique[r.unique], l.flags.intersection(syncableFlags) == r.flags,
                remote[r.uid] == r.flags
            else { return false }
            localFocus += 1
            remoteFocus += 1
        }
        return localByUnique.count == localFocus && remote.count == remoteFocus
    }

    /// After `prepare`: the messages no pair explains on either side, i.e. at most what `finish` will fetch
    /// or upload (some may pair by key instead), less the bodies already fetched. Decides whether more
    /// connections pay (`ConnectionPlan`).
    var pendingTransfers: Int { unpairedLocal.count + unpairedRemote.count - prefetch.bodies.count }

    /// After `prepare`: nothing here can be half of a move between folders (no pair gone from one side,
    /// nothing unpaired on either side), so `finish` may run at once, while the mailbox is still selected.
    var standsAlone: Bool {
        unpairedLocal.isEmpty && unpairedRemote.isEmpty && vanishedLocally.isEmpty && vanishedRemotely.isEmpty && vanishedBoth.isEmpty
    }

    /// Pairs whose local file is gone while the server still has the message (candidates for a local move).
    var vanishedLocally: [SyncRecord] {
        table.unsettledRecords.filter {
            $0.uid != 0 && !$0.unique.isEmpty && localByUnique[$0.unique] == nil && remote[$0.uid] != nil && !held.contains($0.unique)
                && !$0.isOutside  // its file was let go (a window), not moved
        }
    }

    /// Pairs gone from both sides (their file moved to another folder here while the message left on the
    /// server: `MoveDetector.deferUploadsOfMessagesGoneFromBothSides`).
    var vanishedBoth: [SyncRecord] {
        table.unsettledRecords.filter {
            $0.uid != 0 && !$0.unique.isEmpty && localByUnique[$0.unique] == nil && remote[$0.uid] == nil && !held.contains($0.unique)
                && !$0.isOutside
        }
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

    /// The pair's message is back in this folder under a new id, the same key (Gmail mode: trashed and
    /// restored between two runs; `ServerStore.returnsUnderNewID` says where): the pair takes the new id, and the file
    /// stays as it is, neither deleted nor downloaded again.
    func repair(_ r: SyncRecord, uid: UInt32) {
        let file = localByUnique[r.unique]
        forget(uid: r.uid, unique: r.unique)
        remote[r.uid] = nil
        record(SyncRecord(uid: uid, unique: r.unique, flags: r.flags))
        if remote[uid] == nil { remote[uid] = r.flags }
        localByUnique[r.unique] = file
        summary.adopted += 1
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
    /// bytes. Same name, same flags (`MaildirFolder.replaceContent`: a crash leaves the old file or the new
    /// one). A file that cannot be read is left as it is: best effort, the pairing stands either way. Only
    /// inside an own change (`ownChange`: the plan's execution).
    func removeForeignHeaders(_ path: String) throws {
        guard let bytes = try? MessageFile.contents(of: path) else { return }
        let clean = MessageKeys.withoutForeignHeaders(bytes)
        guard clean.count != bytes.count else { return }
        try folder.replaceContent(path: path, with: clean)
        run.cleaned += 1
    }
}
