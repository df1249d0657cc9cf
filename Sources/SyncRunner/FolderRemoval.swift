import IMAPClient
import IMAPCodec
import Maildir
import MoCore
import SyncEngine
import SyncState

/// A folder synced before that is now missing on one side was deleted there; the deletion travels to the
/// other side, but only as far as it can be sure:
///
/// - Only messages the saved state knows are deleted on the other side. Messages that arrived there since
///   the last sync are kept, and the folder is recreated to hold them.
/// - INBOX is never deleted.
/// - The mass-deletion guard applies: a folder with more known messages than the guard's floor is only
///   deleted with `--force` (a changed `layout` or a wrong `maildir` must not read as "delete everything").
struct FolderRemoval {
    let sync: AccountSync
    let server: any ServerStore
    let policy: SyncPolicy

    struct Outcome {
        var summary: FolderSummary
        /// The folder was recreated on the side that deleted it, and a normal sync should follow.
        var recreated: Bool
    }

    /// The server no longer has the mailbox behind local folder `path`.
    func serverDeleted(path: String, mailboxName: String, store: FolderStateStore) throws -> Outcome {
        var summary = FolderSummary(folder: sync.displayName(path))
        guard let absolute = FolderNameMapper.absolutePath(root: sync.pair.maildir, relative: path) else {
            return Outcome(summary: summary, recreated: false)
        }
        let folder = MaildirFolder(path: absolute)
        let known = Set(try store.load(mailbox: mailboxName).records.map(\.unique))
        let entries = try MaildirScanner.scan(folder).entries
        let knownEntries = entries.filter { known.contains($0.unique) }
        let newEntries = entries.filter { !known.contains($0.unique) }
        if let refusal = refusal(count: knownEntries.count, isInbox: path.isEmpty || path == "INBOX") {
            summary.stopped = "deleted on the server; " + refusal
            return Outcome(summary: summary, recreated: false)
        }
        if sync.options.dryRun {
            summary.deletedLocal = knownEntries.count
            summary.notes.append("deleted on the server: would remove \(knownEntries.count) local message(s)")
            return Outcome(summary: summary, recreated: false)
        }
        for e in knownEntries { try folder.remove(path: e.path) }
        summary.deletedLocal = knownEntries.count
        try store.remove()
        if newEntries.isEmpty {
            // A message that arrived since the scan keeps the folder; the next run sees a new local folder.
            // Under the folder's keyword lock, so mo-index cannot save a table into it meanwhile (nil: this
            // run holds it already, or the folder is not writable; removing goes on either way).
            let keywordsLock = try? MaildirKeywords.lock(folder: folder.path, wait: 0)
            let removed = folder.removeIfEmpty()
            withExtendedLifetime(keywordsLock) {}
            summary.notes.append(
                removed
                    ? "deleted on the server: removed the local folder"
                    : "deleted on the server: the local folder was kept, a message arrived in it")
            return Outcome(summary: summary, recreated: false)
        }
        try server.createFolder(MailboxName(wire: Array(mailboxName.utf8)))
        summary.notes.append("deleted on the server, but \(newEntries.count) new local message(s) were kept: mailbox recreated")
        return Outcome(summary: summary, recreated: true)
    }

    /// The local folder `path` synced with `mailbox` is gone.
    func localDeleted(path: String, mailbox: MailboxName, store: FolderStateStore) throws -> Outcome {
        var summary = FolderSummary(folder: sync.displayName(path))
        let loaded = try store.load(mailbox: String(decoding: mailbox.wire, as: UTF8.self))
        let state = loaded.state
        // Never the messages outside a date window (`max-age`): the Maildir never held them, so deleting the
        // folder here says nothing of them. They keep the mailbox on the server.
        let known = loaded.table.unorderedRecords.filter { $0.uid != 0 && !$0.isOutside }.map(\.uid)
        let outside = loaded.table.unorderedRecords.filter { $0.isOutside && $0.unique.isEmpty }.count
        if let refusal = refusal(count: known.count, isInbox: mailbox.isInbox) {
            summary.stopped = "the local folder was deleted; " + refusal
            return Outcome(summary: summary, recreated: false)
        }
        let selected = try server.open(mailbox, since: nil)
        let present = selected.uidValidity == state.uidValidity && selected.exists > 0 ? try server.ids(from: 1) : []
        let knownSet = Set(known)
        let toDelete = present.filter { knownSet.contains($0) }
        let newer = selected.uidValidity == state.uidValidity ? present.count - toDelete.count : Int(selected.exists)
        if sync.options.dryRun {
            summary.deletedRemote = toDelete.count
            summary.notes.append("deleted locally: would delete \(toDelete.count) message(s) on the server")
            return Outcome(summary: summary, recreated: false)
        }
        if !toDelete.isEmpty { _ = try server.delete(UIDSet(uids: toDelete)) }
        summary.deletedRemote = toDelete.count
        try store.remove()
        if newer == 0 {
            _ = try server.open(MailboxName.inbox, since: nil)
            try server.deleteFolder(mailbox)
            summary.notes.append("deleted locally: deleted the mailbox on the server")
            return Outcome(summary: summary, recreated: false)
        }
        summary.notes.append(
            outside > 0
                ? "deleted locally, but the server's messages outside the date window (\(newer)) were kept: folder recreated"
                : "deleted locally, but \(newer) new server message(s) were kept: folder recreated")
        return Outcome(summary: summary, recreated: true)
    }

    private func refusal(count: Int, isInbox: Bool) -> String? {
        if isInbox { return "INBOX is never deleted; restore it or remove its state file to start over" }
        if count > policy.deleteGuardFloor && !policy.force {
            return "that would delete \(count) messages on the other side; nothing done (run with --force if intended)"
        }
        return nil
    }
}
