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

/// `PreparedFolder`'s downloads: bodies streamed into tmp/, fetched either in `prepare` while the mailbox is
/// still selected (`prefetchNewBodies`) or by the plan's fetch actions, then delivered in batches.
///
/// Invariant: a prefetched body (`prefetch.bodies`) is only a sealed file in tmp/, never announced nor linked; it becomes a
/// message only through `deliver` when the plan fetches its UID. A body the plan does not want (paired by
/// key, moved on the server, a stopped folder) is unlinked at the end of `finish`, and a crash leaves at
/// most a tmp/ file, as an interrupted fetch always could.
extension PreparedFolder {
    /// Bodies fetched in `prepare` at most (count, and wire bytes in total): a timer run's handful of new
    /// messages, so a folder whose finish then sends nothing needs no second SELECT.
    static let prefetchLimit = (messages: 64, bytes: 8 << 20)

    /// Fetches the new server messages' bodies while `prepare` has the mailbox selected, when they are
    /// few, their keys are known (`fetchNewKeys`) and nothing local is unpaired (so none can pair by key
    /// instead). A SELECT is what costs on the server: Dovecot re-reads a Maildir folder changed within the
    /// last second on every SELECT of it, tens of milliseconds for a large folder; a FETCH in the same
    /// selection costs a few.
    func prefetchNewBodies(on server: any ServerStore) throws {
        guard !dryRun, !server.idsSpanFolders, policy.new.contains(.pull), !prefetch.keysFetched.isEmpty, unpairedLocal.isEmpty else {
            return
        }
        // Not a message that may be over `max-size` (it arrives as a placeholder, in `fetch`).
        let uids = unpairedRemote.filter { uid in
            prefetch.keysFetched.contains(uid) && sync.maxSize.map { (prefetch.keys[uid]?.wireSize ?? .max) <= $0 } ?? true
        }.sorted()
        let bytes = uids.reduce(0) { $0 + (prefetch.keys[$1]?.wireSize ?? Self.prefetchLimit.bytes) }
        guard !uids.isEmpty, uids.count <= Self.prefetchLimit.messages, bytes <= Self.prefetchLimit.bytes else { return }
        // Within the day's allowance, all of them, or left to `fetch` (which takes what fits).
        if let allowance = sync.allowance {
            guard try allowance.take(uids.map { prefetch.keys[$0]?.wireSize ?? Self.prefetchLimit.bytes }, all: true) == uids.count else {
                return
            }
        }
        let wanted = Set(uids)
        var receiver = BodyReceiver(folder: folder)
        do {
            try server.bodies(of: uids) { [self] event in
                try receiver.feed(event) { uid, pending, written in
                    guard wanted.contains(uid), prefetch.bodies[uid] == nil else { pending.abort(); return }
                    prefetch.bodies[uid] = (pending, written)
                }
            }
        } catch let error as IMAPError where error.isOverQuota {
            // The server's allowance is spent: nothing prefetched; `fetch` defers them, the rest of the run goes on.
            receiver.abort()
            discardPrefetched()
            sync.allowance?.spendAll()
            return
        } catch {
            receiver.abort()
            discardPrefetched()
            throw error
        }
        receiver.abort()
        // Sealed now (fsync, close): no descriptor stays open across the other folders' listings.
        for (_, p) in prefetch.bodies { try p.pending.seal() }
    }

    /// Unlinks the prefetched bodies no fetch action took.
    func discardPrefetched() {
        for (_, p) in prefetch.bodies { p.pending.abort() }
        prefetch.bodies = [:]
    }

    /// Downloads new messages: those prefetched are delivered as they are, the others fetched now in
    /// chunks of `fetchChunk`, the newest chunk first, streaming each body (CRLF → LF) into tmp/ and
    /// linking it into place.
    func fetch(_ wanted: [(uid: UInt32, flags: MaildirFlags)], on server: any ServerStore) throws {
        guard !wanted.isEmpty else { return }
        table.reserveCapacity(more: wanted.count)
        var batch = FetchBatch()
        var rest: [(uid: UInt32, flags: MaildirFlags)] = []
        for w in wanted {
            guard let p = prefetch.bodies.removeValue(forKey: w.uid) else { rest.append(w); continue }
            batch.add(p.pending, uid: w.uid, flags: w.flags, bytes: p.bytes)
            if batch.isFull { try deliver(&batch) }
        }
        try deliver(&batch)
        guard !rest.isEmpty else { return }
        try ensureSelected(on: server)
        if let limit = sync.maxSize { rest = try deliverPlaceholders(rest, over: limit, on: server) }
        guard !rest.isEmpty else { return }
        // Sorted by UID: the FETCH commands take ranges of it, and a response finds its flags by binary search.
        let inOrder = zip(rest, rest.dropFirst()).allSatisfy { $0.uid < $1.uid }
        let wanted = inOrder ? rest : rest.sorted { $0.uid < $1.uid }  // the plan's are in order: no copy
        var arrived = [Bool](repeating: false, count: wanted.count)
        func flagsOnce(_ uid: UInt32) -> MaildirFlags? {
            var lo = 0, hi = wanted.count
            while lo < hi { let mid = (lo + hi) / 2; if wanted[mid].uid < uid { lo = mid + 1 } else { hi = mid } }
            guard lo < wanted.count, wanted[lo].uid == uid, !arrived[lo] else { return nil }
            arrived[lo] = true
            return wanted[lo].flags
        }
        // Newest first: the chunk of the highest UIDs goes first, so the recent mail of a large first sync is
        // readable before the rest arrives (the server answers each chunk in its own, ascending, order).
        var end = wanted.count
        var waits = false  // the rest waits for a later run (the allowance, or the server's OVERQUOTA)
        while end > 0 {
            let start = max(0, end - server.bodyChunk)
            var chunk = wanted[start..<end].map(\.uid)
            end = start
            var receiver = BodyReceiver(folder: folder)
            do {
                if let allowance = sync.allowance {
                    // The newest of the chunk that fit in the day's allowance; the rest waits for a later run.
                    let fit = allowance.hasRoom ? try allowance.take(Array(try sizes(of: chunk, on: server).reversed())) : 0
                    if fit < chunk.count {
                        chunk = Array(chunk.suffix(fit))
                        end = 0
                        waits = true
                    }
                    if chunk.isEmpty { break }
                }
                try server.bodies(of: chunk) { [self] event in
                    try receiver.feed(event) { uid, pending, written in
                        guard let flags = flagsOnce(uid) else { pending.abort(); return }
                        batch.add(pending, uid: uid, flags: flags, bytes: written)
                        if batch.isFull { try deliver(&batch) }
                    }
                }
            } catch let error as IMAPError where error.isOverQuota {
                // The server's own allowance is spent (Gmail): what arrived is kept, the rest waits.
                receiver.abort()
                try deliver(&batch)
                sync.allowance?.spendAll()
                waits = true
                run.overQuota = true
                break
            } catch {
                // Keep what arrived whole before the failure (a cut connection): a rerun need not fetch it.
                receiver.abort()
                try? deliver(&batch)
                throw error
            }
            receiver.abort()
            try deliver(&batch)
        }
        let missing = arrived.lazy.filter { !$0 }.count
        if waits {
            run.deferred = missing
        } else if missing > 0 {
            summary.notes.append("\(missing) message(s) vanished from the server before they could be fetched")
        }
    }

    /// The wire sizes of `uids`, in their order: from the keys the listing fetched, else asked for. A
    /// message without a Message-ID has no key (`keys` hashes no body here): counted as `unknownSize`.
    func sizes(of uids: [UInt32], on server: any ServerStore) throws -> [Int] {
        let missing = uids.filter { prefetch.keys[$0] == nil }
        let asked = missing.isEmpty ? [:] : try server.keys(of: missing, hashingSizes: [])
        return uids.map { prefetch.keys[$0]?.wireSize ?? asked[$0]?.wireSize ?? Self.unknownSize }
    }

    /// The size a message of unknown size counts for against the download allowance.
    static let unknownSize = 1 << 20

    /// Fetched bodies waiting in tmp/ to be made durable and linked together.
    struct FetchBatch {
        var items: [(pending: PendingDelivery, uid: UInt32, flags: MaildirFlags)] = []
        var bytes = 0
        /// Bounds the open files (32 per connection, 16 connections at most) and the work a crash can make
        /// a rerun redo.
        var isFull: Bool { items.count >= 32 || bytes >= 8 << 20 }
        mutating func add(_ p: PendingDelivery, uid: UInt32, flags: MaildirFlags, bytes n: Int) {
            items.append((p, uid, flags)); bytes += n
        }
    }

    /// Delivers a batch with the journal discipline of one message, but a sync per step rather than per
    /// message: every body fsynced (their writeback was started as each ended, so the syncs overlap);
    /// every intent journaled with one fsync; every file linked; each target directory fsynced once;
    /// then the pairs recorded. A crash anywhere leaves each message either absent or announced.
    ///
    /// Invariant: the last intent for a UID names the file linked for it, exactly. A unique part a scanned
    /// file or a pair already has is renewed before it is announced; a file name found taken at the link
    /// (EEXIST: written since the scan, or never listed) is renewed, announced again (the later intent for
    /// a UID replaces the earlier) and only then linked. A crash between leaves an intent naming a name
    /// that is not a message file of the scan (else it would have been renewed before): nothing to pair.
    func deliver(_ batch: inout FetchBatch) throws {
        defer { batch = FetchBatch() }
        guard !batch.items.isEmpty else { return }
        for item in batch.items { try item.pending.seal() }
        for item in batch.items {
            if isTaken(item.pending.unique) { item.pending.renewUnique() }
            store.append(.fetchIntent(uid: item.uid, unique: item.pending.unique))
        }
        try store.flush()
        CrashPoint.step("fetch: intent journaled")
        try ownChange {
            var subdirs = Set<MaildirSubdir>()
            for item in batch.items {
                // new/ holds messages no client has seen yet; any flag needs the info part of cur/.
                let subdir: MaildirSubdir = item.flags.isEmpty ? .new : .cur
                try link(item.pending, uid: item.uid, to: subdir, flags: item.flags)
                subdirs.insert(subdir)
                CrashPoint.step("fetch: message delivered")
            }
            do {
                for subdir in subdirs.sorted(by: { $0.rawValue < $1.rawValue }) { try folder.syncDirectory(subdir) }
            } catch {
                for item in batch.items { item.pending.unlinkFinal() }
                throw error
            }
        }
        for item in batch.items {
            item.pending.finish()
            record(SyncRecord(uid: item.uid, unique: item.pending.unique, flags: item.flags))
            CrashPoint.step("fetch: pair recorded")
            summary.new += 1
            verbose("  fetched UID \(item.uid)")
        }
    }

    /// Whether a file of the folder, or a pair, already has the unique part `unique`.
    private func isTaken(_ unique: String) -> Bool {
        localByUnique[unique] != nil || table.record(unique: unique) != nil
    }

    /// Links an announced body under the name its intent gave; a name taken since is renewed and
    /// announced (durably) before the next try.
    private func link(_ pending: PendingDelivery, uid: UInt32, to subdir: MaildirSubdir, flags: MaildirFlags) throws {
        for _ in 0..<8 {
            if try pending.linkExactly(to: subdir, flags: flags) != nil { return }
            pending.renewUnique()
            store.append(.fetchIntent(uid: uid, unique: pending.unique))
            try store.flush()
            CrashPoint.step("fetch: name renewed")
        }
        throw MaildirError("cannot deliver", folder.directory(subdir), detail: "unique names kept colliding")
    }
}

/// Turns a body download's events (`ServerStore.bodies`) into files in tmp/ (CRLF → LF), one
/// `PendingDelivery` per message, handed over whole (id, file, bytes written) at the end of its message. A
/// message without an id or a body is dropped.
struct BodyReceiver {
    let folder: MaildirFolder
    private var pending: PendingDelivery?
    private var written = 0
    private var converter = CRLFToLF()
    private var converted: [UInt8] = []

    init(folder: MaildirFolder) {
        self.folder = folder
        converted.reserveCapacity(256 * 1024)
    }

    mutating func feed(_ event: BodyEvent, whole: (UInt32, PendingDelivery, Int) throws -> Void) throws {
        switch event {
        case .messageStart:
            break
        case .bodyStart:
            pending?.abort()
            pending = try folder.beginDelivery()
            converter = CRLFToLF()
            written = 0
        case .bytes(let bytes):
            guard let p = pending else { return }
            converted.removeAll(keepingCapacity: true)
            converter.convert(bytes, into: &converted)
            try p.write(converted)
            written += converted.count
        case .bodyEnd:
            guard let p = pending else { return }
            converted.removeAll(keepingCapacity: true)
            converter.finish(into: &converted)
            if !converted.isEmpty { try p.write(converted) }
            written += converted.count
            p.startWriteback()
        case .messageEnd(let uid, let thread):
            defer { pending = nil }
            guard let p = pending else { return }
            guard uid != 0 else { p.abort(); return }
            // Gmail's conversation stays with the file through every move between views (docs/gmail.md).
            if let thread { p.addField("G", String(thread)) }
            try whole(uid, p, written)
        }
    }

    /// Drops a body cut off before its message ended.
    mutating func abort() {
        pending?.abort()
        pending = nil
    }
}
