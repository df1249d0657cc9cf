import IMAPClient
import IMAPCodec
import Maildir
import MoCore
import SyncEngine
import SyncState

/// `PreparedFolder`'s placeholders (`max-size`, `Maildir.Placeholder`): new messages over the size arrive
/// as their header section, delivered as any fetch is (intent, link, pair); a placeholder flagged on either
/// side is filled in place before its pair records the flag.
extension PreparedFolder {
    /// Delivers the messages of `wanted` over `limit` wire bytes as placeholders (flagged ones are fetched
    /// whole, as mbsync does); returns the others, to be fetched whole. One `UID FETCH (RFC822.SIZE)` for
    /// all, then the header sections by chunks.
    func deliverPlaceholders(
        _ wanted: [(uid: UInt32, flags: MaildirFlags)], over limit: Int, on server: any ServerStore
    ) throws -> [(uid: UInt32, flags: MaildirFlags)] {
        let sizes = try server.sizes(of: wanted.map(\.uid))
        var whole: [(uid: UInt32, flags: MaildirFlags)] = []
        var over: [(uid: UInt32, flags: MaildirFlags, size: Int)] = []
        for w in wanted {
            if let size = sizes[w.uid], size > limit, !w.flags.contains(.flagged) {
                over.append((w.uid, w.flags, size))
            } else {
                whole.append(w)
            }
        }
        var start = 0
        while start < over.count {
            let chunk = over[start..<min(over.count, start + Self.fetchChunk)]
            start += chunk.count
            let headers = try server.headers(of: chunk.map(\.uid))
            var batch = FetchBatch()
            do {
                for m in chunk {
                    guard let header = headers[m.uid] else { continue }  // expunged meanwhile
                    let pending = try folder.beginDelivery()
                    let bytes = Placeholder.render(header: header, size: m.size, limit: limit)
                    do { try pending.write(bytes) } catch {
                        pending.abort()
                        throw error
                    }
                    batch.add(pending, uid: m.uid, flags: m.flags, bytes: bytes.count)
                    summary.placeholders += 1
                    if batch.isFull { try deliver(&batch) }
                }
                try deliver(&batch)
            } catch {
                for item in batch.items { item.pending.abort() }
                throw error
            }
        }
        return whole
    }

    /// Local files here that no pair explains and that are placeholders: moved or copied from another
    /// folder without the server's move (`MoveDetector` could not carry it). They are never uploaded.
    var strandedPlaceholders: [String] {
        unpairedLocal.filter { unique in localByUnique[unique].map { Placeholder.size(ofFile: $0.path) != nil } ?? false }.sorted()
    }

    /// After `MoveDetector`: while a placeholder no pair explains is anywhere in the account, no pair whose
    /// file vanished is read as a local deletion (its file may be that placeholder, moved: deleting its
    /// server message would leave only the placeholder). Those pairs are held for the run (`held`); the
    /// next run judges them again. A placeholder that then pairs by key (lost state) ends the hold; one
    /// that does not is named by the upload's note.
    static func holdForStrandedPlaceholders(_ folders: [PreparedFolder]) {
        guard folders.contains(where: { !$0.strandedPlaceholders.isEmpty }) else { return }
        for f in folders {
            let vanished = f.vanishedLocally
            guard !vanished.isEmpty else { continue }
            for r in vanished { f.held.insert(r.unique) }
            f.times.passedOver = true
            f.summary.notes.append("\(vanished.count) local deletion(s) wait while a placeholder no pair explains is in the account")
        }
    }

    /// Fills the placeholders whose pairs `records` (the plan's record updates) newly flag; returns the
    /// UIDs it could not fill (their record updates wait, so the next run tries again).
    func fillFlaggedPlaceholders(_ records: [SyncAction], on server: any ServerStore) throws -> Set<UInt32> {
        var candidates: [(uid: UInt32, path: String)] = []
        for case .updateRecord(let uid, let unique, let r?) in records where uid != 0 && !unique.isEmpty {
            guard r.flags.contains(.flagged), table.record(uid: uid).map({ !$0.flags.contains(.flagged) }) ?? false,
                let file = localByUnique[unique], Placeholder.size(ofFile: file.path) != nil
            else { continue }
            candidates.append((uid, file.path))
        }
        guard !candidates.isEmpty else { return [] }
        try ensureSelected(on: server)
        let filled = try Self.fill(candidates, from: server, folder: folder)
        summary.filled += filled.count
        return Set(candidates.map(\.uid)).subtracting(filled)
    }

    /// Fetches the messages of `placeholders` (UID, the placeholder's path) from the open folder and puts
    /// each in its placeholder's place (`Placeholder.fill`); returns the UIDs filled (or found filled
    /// already). Also `mo-sync fetch`'s.
    static func fill(_ placeholders: [(uid: UInt32, path: String)], from server: any ServerStore, folder: MaildirFolder) throws -> Set<
        UInt32
    > {
        var paths: [UInt32: String] = [:]
        for p in placeholders { paths[p.uid] = p.path }
        var filled = Set<UInt32>()
        var receiver = BodyReceiver(folder: folder)
        defer { receiver.abort() }
        try server.bodies(of: placeholders.map(\.uid).sorted()) { event in
            try receiver.feed(event) { uid, pending, _ in
                guard let path = paths.removeValue(forKey: uid) else { pending.abort(); return }
                // Renamed or removed meanwhile (`.moved`): not filled; the next run or command tries again.
                if try Placeholder.fill(path, with: pending) != .moved { filled.insert(uid) }
                CrashPoint.step("fill: placeholder replaced")
            }
        }
        return filled
    }
}
