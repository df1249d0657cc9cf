import IMAPClient
import IMAPCodec
import Maildir
import MoCore
import SyncEngine

/// Finds messages that moved between folders since the last run and moves them on the other side too,
/// instead of deleting in one folder and transferring again into another:
///
/// - moved locally (`mv`, or a client that keeps the unique name): the pair's file vanished from folder A
///   and a file with the same unique name appeared in folder B → UID MOVE on the server (COPYUID gives
///   the new UID); or a file of another name but the same key (a client that writes an identical copy
///   and deletes the original) → the same, the new file paired with the moved message;
/// - moved on the server: the pair's UID vanished from A while its file is still here, and a new message
///   with the same key (Message-ID and wire size) appeared in B → move the file into B
///   (`MaildirFolder.moveIn`: never onto an existing file; refused, the message is transferred normally).
///
/// A moved message keeps its keywords (issue 17): the folders' `dovecot-keywords` tables differ, so its
/// letters, the pair's base and the server flags are re-mapped to the destination's table
/// (`FlagTranslation.translate`), the file renamed in the same step as the move (server moves) or once
/// found (local moves, `relabelMovedFile`, unless `lettersAlreadyTheTarget`s).
///
/// Crash safety needs no journal of its own: if the run dies between the move and the journal entries,
/// the next run sees in A a pair gone from both sides (forgotten) and in B an unpaired file and an unpaired
/// server message with one key (paired by adoption): nothing lost, nothing transferred twice.
struct MoveDetector {
    let server: any ServerStore
    let folders: [PreparedFolder]

    func run() throws {
        try movedLocally()
        try movedOnServer()
        deferUploadsOfMessagesGoneFromBothSides()
        PreparedFolder.holdForStrandedPlaceholders(folders)
        // A moved pair's base may use letters the re-mapping just assigned: the table is on disk before
        // the journal that records them.
        for f in folders where f.translation.changed && f.folder.exists { try f.translation.keywords.save(folder: f.folder.path) }
        for f in folders { try f.flushJournal() }
    }

    /// Whether a message keeps its id between the two folders (Gmail mode's views; not Trash and Spam,
    /// whose ids are their own: `ServerStore.sharesIDs`).
    func keepsID(_ source: PreparedFolder, _ destination: PreparedFolder) -> Bool {
        server.sharesIDs(source.mailbox) && server.sharesIDs(destination.mailbox)
    }

    /// Whether a move may go up: the account pushes new messages and deletions (a move is both), and the
    /// server names the moved UIDs (COPYUID, RFC 4315). Without COPYUID the destination's listing, taken
    /// before the move, would not hold the moved message, and its plan would upload the file again.
    /// Where the message keeps its id (Gmail mode's views) a move is a label change, not a deletion: it goes
    /// up when new messages or flags do (else the file would be uploaded as a second copy, or the change
    /// stay local).
    func localMoveAllowed(_ source: PreparedFolder, _ destination: PreparedFolder) -> Bool {
        localMoveAllowed(keepingID: keepsID(source, destination))
    }

    func localMoveAllowed(keepingID: Bool) -> Bool {
        guard let policy = folders.first?.policy else { return false }
        if keepingID { return policy.new.contains(.push) || policy.flags.contains(.push) }
        return policy.new.contains(.push) && policy.delete.contains(.push) && server.movesNameNewIDs
    }

    /// Whether a server move may come down: the account pulls new messages and deletions (where the message
    /// keeps its id, new messages or flags: else the message would come down again in its new folder while
    /// the old one keeps it).
    func serverMoveAllowed(keepingID: Bool) -> Bool {
        guard let policy = folders.first?.policy else { return false }
        if keepingID { return policy.new.contains(.pull) || policy.flags.contains(.pull) }
        return policy.new.contains(.pull) && policy.delete.contains(.pull)
    }

    func movedLocally() throws {
        let (found, vanished) = renamesAcrossFolders()
        let renamed = found.filter { localMoveAllowed($0.source, $0.destination) }
        try carry(found.filter { !localMoveAllowed($0.source, $0.destination) })
        // No route may move: no key is read for copies under new names.
        let anyAllowed = localMoveAllowed(keepingID: false) || (server.idsSpanFolders && localMoveAllowed(keepingID: true))
        guard anyAllowed, !renamed.isEmpty || !vanished.isEmpty else { return }
        struct Route: Hashable { let source: ObjectIdentifier; let destination: ObjectIdentifier }
        var groups: [Route: (source: PreparedFolder, destination: PreparedFolder, moves: [(record: SyncRecord, unique: String)])] = [:]
        func add(_ source: PreparedFolder, _ destination: PreparedFolder, _ record: SyncRecord, _ unique: String) {
            let route = Route(source: ObjectIdentifier(source), destination: ObjectIdentifier(destination))
            groups[route, default: (source, destination, [])].moves.append((record, unique))
        }
        for (source, destination, record, unique) in renamed { add(source, destination, record, unique) }
        let taken = Set(renamed.map(\.unique))
        for (source, destination, record, unique) in try copiesUnderNewNames(Array(vanished.values), taken: taken)
        where localMoveAllowed(source, destination) {
            add(source, destination, record, unique)
        }
        // In the folders' order, so a run's commands (and its SELECTs between mailboxes) do not depend on
        // hashing: the same run sends the same commands.
        for group in groups.values.sorted(by: {
            (position($0.source), position($0.destination)) < (position($1.source), position($1.destination))
        }) {
            let (source, destination, moves) = group
            let sourceTable = source.translation.keywords
            // The file is in the destination whatever the server does: its letters become the destination's
            // before the MOVE, so a crash after it never leaves a file carrying the source's letters (the
            // next run would pair it as new and read them through the wrong table). Idempotent.
            for (r, unique) in moves {
                let overflow = try destination.relabelMovedFile(unique: unique, base: r.flags, from: sourceTable)
                try destination.carryExtraKeywords(source.extra.local.keywords(of: r.unique).union(overflow), to: unique)
            }
            if server.openFolder != source.mailbox { _ = try server.open(source.mailbox, since: nil) }
            let going = try claimed(moves, from: source, to: destination)
            guard !going.isEmpty else { continue }
            let moved = try server.move(UIDSet(uids: going.map(\.record.uid)), to: destination.mailbox)
            CrashPoint.step("move: moved on the server")
            source.noteOwn(moved.changes)
            var newUID: [UInt32: UInt32] = [:]
            for m in moved.pairs { newUID[m.source] = m.destination }
            for (r, unique, off) in going {
                let flags = source.remote[r.uid] ?? r.flags
                source.detachMoved(r)
                // Without COPYUID the UID was gone: another device moved or deleted the message since this
                // run's listings. The file waits a run (`uploadsDeferred`) instead of being uploaded as a
                // second copy; this run's plan may still pair it by key with a copy already listed.
                if newUID[r.uid] == nil { destination.uploadsDeferred.insert(unique) }
                if let uid = newUID[r.uid] {
                    let base = destination.translation.translate(r.flags, from: sourceTable).flags
                    destination.attachMoved(
                        SyncRecord(uid: uid, unique: unique, flags: base),
                        remoteFlags: destination.translation.translate(flags.subtracting(off), from: sourceTable).flags, localFile: nil)
                }
            }
        }
    }

    /// Moves that cannot go up as moves (the policy, or no COPYUID): the file in B is uploaded as a new
    /// message and A's deleted, but its keywords come along: its letters re-mapped to B's table (read
    /// through B's, A's letters would name other keywords, or none), and its keywords beyond the letters
    /// (A's `mo-keywords` line, which A's finish drops) with those B has no letter for, to B's line.
    func carry(_ renamed: [Rename]) throws {
        for (source, destination, record, unique) in renamed {
            let overflow = try destination.relabelMovedFile(unique: unique, base: record.flags, from: source.translation.keywords)
            try destination.carryExtraKeywords(source.extra.local.keywords(of: unique).union(overflow), to: unique)
        }
    }

    typealias Rename = (source: PreparedFolder, destination: PreparedFolder, record: SyncRecord, unique: String)

    /// A pair gone from both sides of folder A whose file is new, under the same unique name, in folder B:
    /// moved here while another device moved (or deleted) the message on the server. Had that other move
    /// come between this run's listing of B and its listing of A, neither listing holds the message, and
    /// B's plan would upload the file as a second copy (two devices waking one snoozed message at once do
    /// exactly this). Its upload waits a run (`uploadsDeferred`); the next run's listing of B holds the
    /// moved message, which pairs with the file by key, or, if it was deleted, the file is uploaded then.
    func deferUploadsOfMessagesGoneFromBothSides() {
        var gone: [String: PreparedFolder] = [:]
        for f in folders { for r in f.vanishedBoth { gone[r.unique] = f } }
        guard !gone.isEmpty else { return }
        for destination in folders {
            for unique in destination.unpairedLocal where gone[unique].map({ $0 !== destination }) == true {
                destination.uploadsDeferred.insert(unique)
            }
        }
    }

    /// A folder's place in the run's order.
    func position(_ folder: PreparedFolder) -> Int { folders.firstIndex { $0 === folder } ?? folders.count }

    /// The pairs whose file left its folder and is new, under the same unique name, in another (a rename
    /// across folders), and the pairs whose file left with no such match, by unique name.
    func renamesAcrossFolders() -> (renamed: [Rename], vanished: [String: (source: PreparedFolder, record: SyncRecord)]) {
        var vanished: [String: (source: PreparedFolder, record: SyncRecord)] = [:]
        for f in folders { for r in f.vanishedLocally { vanished[r.unique] = (f, r) } }
        var renamed: [Rename] = []
        guard !vanished.isEmpty else { return ([], [:]) }
        for destination in folders {
            for unique in destination.unpairedLocal {
                guard let (source, record) = vanished[unique], source !== destination else { continue }
                renamed.append((source, destination, record, unique))
                vanished[unique] = nil
            }
        }
        return (renamed, vanished)
    }

    /// A pair's file gone from A, and a file of another unique name but the same key (Message-ID and wire
    /// size) new in B: a client that moves by writing an identical copy rather than renaming. Paired as a
    /// move too, so the server gets a UID MOVE instead of a delete and an upload. (neomutt's save adds a
    /// Content-Length field, so its copy is other bytes: uploaded as a new message, as it must be.) Keys are
    /// read only where both are left: the new files' headers, and the vanished messages' keys from the
    /// server (one FETCH in each source folder, which the move selects anyway).
    /// At most this many new local files are read for their keys to find moves under new names.
    static let keyedMoveLimit = 1_000

    func copiesUnderNewNames(
        _ vanished: [(source: PreparedFolder, record: SyncRecord)],
        taken: Set<String>
    ) throws -> [(PreparedFolder, PreparedFolder, SyncRecord, String)] {
        guard !vanished.isEmpty else { return [] }
        // Only destinations with no new server message (one of them may be this very message, which the
        // destination's own plan pairs by key: a move as well would make two), and only a few files to read
        // (a first sync of a large folder beside one deletion elsewhere is not read whole for this).
        var candidates: [(destination: PreparedFolder, files: [PreparedFolder.LocalFile])] = []
        for destination in folders where destination.unpairedRemote.isEmpty {
            let files = destination.unpairedLocal.filter { !taken.contains($0) }.compactMap { destination.localFile($0) }
            if !files.isEmpty { candidates.append((destination, files)) }
        }
        guard !candidates.isEmpty, candidates.reduce(0, { $0 + $1.files.count }) <= Self.keyedMoveLimit else { return [] }
        var byKey: [MessageKey: [(destination: PreparedFolder, unique: String)]] = [:]
        for (destination, files) in candidates {
            for (unique, key) in try MessageKeys.local(files) { byKey[key, default: []].append((destination, unique)) }
        }
        guard !byKey.isEmpty else { return [] }
        var bySource: [ObjectIdentifier: (source: PreparedFolder, records: [SyncRecord])] = [:]
        for v in vanished { bySource[ObjectIdentifier(v.source), default: (v.source, [])].records.append(v.record) }
        let hashedSizes = Set(byKey.keys.filter(\.isContentHash).map(\.wireSize))
        var found: [(PreparedFolder, PreparedFolder, SyncRecord, String)] = []
        for group in bySource.values.sorted(by: { position($0.source) < position($1.source) }) {
            if server.openFolder != group.source.mailbox { _ = try server.open(group.source.mailbox, since: nil) }
            let keys = try server.keys(of: group.records.map(\.uid), hashingSizes: hashedSizes)
            for r in group.records.sorted(by: { $0.uid < $1.uid }) {
                guard let key = keys[r.uid], var candidates = byKey[key],
                    let i = candidates.firstIndex(where: { $0.destination !== group.source })
                else { continue }
                let (destination, unique) = candidates.remove(at: i)
                byKey[key] = candidates
                found.append((group.source, destination, r, unique))
            }
        }
        return found
    }

    /// Server moves: by id between folders that share ids (`movedKeepingIDs`), then by key between the
    /// others (Trash and Spam with the views, in Gmail mode; any two folders elsewhere).
    func movedOnServer() throws {
        func vanished(where wanted: (PreparedFolder) -> Bool) -> [(source: PreparedFolder, record: SyncRecord)] {
            folders.filter(wanted).flatMap { f in f.vanishedRemotely.map { (f, $0) } }
        }
        if server.idsSpanFolders, serverMoveAllowed(keepingID: true) {
            let shared = vanished { server.sharesIDs($0.mailbox) }
            let destinations = folders.filter { !$0.unpairedRemote.isEmpty && server.sharesIDs($0.mailbox) }
            if !shared.isEmpty && !destinations.isEmpty { try movedKeepingIDs(shared, into: destinations) }
        }
        guard serverMoveAllowed(keepingID: false) else { return }
        let left = vanished { _ in true }
        guard !left.isEmpty else { return }
        // Where ids span folders, a move between two that share ids was found by its id; by key, only one
        // with an own-id folder at one end, or a message back in its own folder under a new id.
        let fromOwn = left.contains { !server.sharesIDs($0.source.mailbox) }
        let sources = Set(left.map { ObjectIdentifier($0.source) })
        let destinations = folders.filter { f in
            !f.unpairedRemote.isEmpty
                && (fromOwn || !server.sharesIDs(f.mailbox)
                    || (server.returnsUnderNewID(f.mailbox) && sources.contains(ObjectIdentifier(f))))
        }
        try movedByKey(left, into: destinations)
    }

    /// Server moves found by key (Message-ID and wire size): a pair's message gone from A while its file is
    /// here, and a new message of the same key in B; or in A itself where the store says a message returns
    /// there under a new id (`ServerStore.returnsUnderNewID`).
    func movedByKey(_ vanished: [(source: PreparedFolder, record: SyncRecord)], into destinations: [PreparedFolder]) throws {
        guard !destinations.isEmpty else { return }
        var byKey: [MessageKey: [(source: PreparedFolder, record: SyncRecord)]] = [:]
        for v in vanished {
            guard let file = v.source.localFile(v.record.unique),
                let key = try MessageKeys.local([file]).values.first
            else { continue }
            byKey[key, default: []].append(v)
        }
        for destination in destinations {
            let uids = destination.unpairedRemote
            let keys = try destination.remoteKeys(
                uids, wantHashesForSizes: Set(byKey.keys.filter(\.isContentHash).map(\.wireSize)),
                on: server)
            for uid in uids.sorted() {
                guard let key = keys[uid], var candidates = byKey[key],
                    let i = candidates.firstIndex(where: {
                        $0.source === destination ? server.returnsUnderNewID(destination.mailbox) : !keepsID($0.source, destination)
                    })
                else { continue }
                let (source, record) = candidates.remove(at: i)
                byKey[key] = candidates
                if source === destination {
                    source.repair(record, uid: uid)
                } else {
                    try moveDown(record, from: source, to: destination, uid: uid)
                }
            }
        }
    }

    /// Server moves where a message keeps its id across folders (`ServerStore.idsSpanFolders`: Gmail's
    /// views): the id that vanished from A is the one new in B. No key is asked.
    func movedKeepingIDs(_ vanished: [(source: PreparedFolder, record: SyncRecord)], into destinations: [PreparedFolder]) throws {
        var byID: [UInt32: (source: PreparedFolder, record: SyncRecord)] = [:]
        for v in vanished { byID[v.record.uid] = v }
        for destination in destinations {
            for uid in destination.unpairedRemote.sorted() {
                guard let (source, record) = byID.removeValue(forKey: uid) else { continue }
                try moveDown(record, from: source, to: destination, uid: uid)
            }
        }
    }

    /// Moves the file of `record` from `source` into `destination`, paired there with the server's `uid`
    /// (its letters re-mapped to the destination's table). A move the file system refuses (EXDEV, EEXIST)
    /// leaves both alone: the message is transferred normally.
    func moveDown(_ record: SyncRecord, from source: PreparedFolder, to destination: PreparedFolder, uid: UInt32) throws {
        guard source !== destination, let file = source.localFile(record.unique) else { return }
        if !destination.folder.exists { try destination.folder.create() }
        let (letters, _) = try destination.lettersFromFolder(file.flags, source: source.translation.keywords)
        let outcome = try destination.ownChange {
            try source.ownChange {
                try destination.folder.moveIn(file.path, from: source.folder, flags: letters == file.flags ? nil : letters)
            }
        }
        guard case .moved(let target) = outcome else { return }
        CrashPoint.step("move: file moved locally")
        var moved = file
        moved.path = target
        moved.flags = letters
        source.detachMoved(record)
        let base = destination.translation.translate(record.flags, from: source.translation.keywords).flags
        destination.attachMoved(
            SyncRecord(uid: uid, unique: record.unique, flags: base),
            remoteFlags: destination.remote[uid] ?? base, localFile: moved)
    }

    /// Whether a file found in another folder after a local move already carries the destination's letters
    /// (`mo-index move` re-maps them as it moves) or still the source's (`mv`, a client's rename). The base
    /// (the pair's flags, in the source's letters) says which reading is the message's keywords:
    ///
    /// | the file's keyword letters read through | give the base's keywords | decision             |
    /// |-----------------------------------------|--------------------------|----------------------|
    /// | the destination's table                 | yes                      | the destination's    |
    /// | the source's table                      | yes                      | the source's: re-map |
    /// | neither (tags changed since the move)   | —                        | the reading closer to the base; a tie: the destination's (no rename) |
    static func lettersAlreadyTheTarget(
        _ flags: MaildirFlags, base: MaildirFlags,
        source: MaildirKeywords, target: MaildirKeywords
    ) -> Bool {
        func keywords(_ f: MaildirFlags, _ table: MaildirKeywords) -> Set<String> {
            Set(f.keywords.utf8.compactMap { table.keyword(for: $0)?.lowercased() })
        }
        let expected = keywords(base, source)
        let asTarget = keywords(flags, target), asSource = keywords(flags, source)
        if asTarget == expected { return true }
        if asSource == expected { return false }
        return asTarget.symmetricDifference(expected).count <= asSource.symmetricDifference(expected).count
    }
}
