import IMAPClient
import IMAPCodec
import JMAPClient
import Maildir
import MoCore
import SyncEngine
import SyncState

/// `JMAPStore`'s transfers (keys, sizes, headers, blobs, imports) and changes (keywords and mailboxes set
/// by `Email/set`). A change reads the messages' mailboxes and keywords first (one request) and sends only
/// the difference, never leaving a message in no mailbox (which JMAP forbids).
extension JMAPStore {
    // MARK: Transfers

    /// The Email ids of the core's numbers (unknown numbers are left out).
    func emailIDs(_ numbers: [UInt32]) throws -> [String: UInt32] {
        let ids = try loadedIDs()
        var out: [String: UInt32] = [:]
        for n in numbers { if let id = ids.id(of: n) { out[id] = n } }
        return out
    }

    /// `Email/get` of `header:Message-ID` and `size`; ID-less messages of a wanted size downloaded and hashed.
    func keys(of ids: [UInt32], hashingSizes: Set<Int>) throws -> [UInt32: MessageKey] {
        let byID = try emailIDs(ids)
        var keys: [UInt32: MessageKey] = [:]
        var hash: [(UInt32, String)] = []
        _ = try client.get(Array(byID.keys), properties: ["id", "size", "blobId", "header:Message-ID"]) { item in
            guard let id = item["id"]?.stringValue, let n = byID[id], let size = item["size"]?.intValue else { return }
            if let raw = item["header:Message-ID"]?.stringValue,
                let messageID = MessageKeys.messageID(headerBytes: Array("Message-ID:\(raw)\r\n".utf8)[...])
            {
                keys[n] = MessageKey(messageID: messageID, wireSize: Int(size))
            } else if hashingSizes.contains(Int(size)), let blob = item["blobId"]?.stringValue {
                hash.append((n, blob))
            }
        }
        for (n, blob) in hash {
            var bytes: [UInt8] = []
            try client.download(blobID: blob, maxBytes: Self.maxMessage) { bytes += $0 }
            keys[n] = MessageKeys.key(wire: bytes)
        }
        return keys
    }

    /// The message bytes asked in one `Blob/get` (base64 in JSON: about 1.4 times that in memory, twice
    /// while parsed).
    static let blobBatchBytes = 2 << 20
    /// Requests in flight at once for the large reads (a whole listing's `Email/get`, `Blob/get` batches),
    /// each on a connection of its own: the server works on two, and this side writes one batch while the
    /// next arrives.
    static let requestsInFlight = 2

    /// Asked for a view's new messages in one call (bounded: batches are fetched at most a few ahead), so
    /// the `Blob/get` requests overlap across the whole of them; newest batch first.
    var bodyChunk: Int { 10_000 }

    /// A message larger than this is refused as hostile (the IMAP parser's literal limit is of this order).
    static let maxMessage = 1 << 30

    func sizes(of ids: [UInt32]) throws -> [UInt32: Int] {
        var sizes: [UInt32: Int] = [:]
        var ask: [UInt32] = []
        for n in ids { if let e = look?.emails[n] { sizes[n] = e.size } else { ask.append(n) } }
        let byID = try emailIDs(ask)
        _ = try client.get(Array(byID.keys), properties: ["id", "size"]) { item in
            if let id = item["id"]?.stringValue, let n = byID[id], let size = item["size"]?.intValue { sizes[n] = Int(size) }
        }
        return sizes
    }

    /// The header sections, rebuilt from `headers` (each field's name and raw value, in order).
    func headers(of ids: [UInt32]) throws -> [UInt32: [UInt8]] {
        let byID = try emailIDs(ids)
        var out: [UInt32: [UInt8]] = [:]
        _ = try client.get(Array(byID.keys), properties: ["id", "headers"]) { item in
            guard let id = item["id"]?.stringValue, let n = byID[id], case .array(let fields)? = item["headers"] else { return }
            var bytes: [UInt8] = []
            for f in fields {
                guard let name = f["name"]?.stringValue, let value = f["value"]?.stringValue else { continue }
                bytes += Array("\(name):\(value)\r\n".utf8)
            }
            out[n] = bytes + [0x0D, 0x0A]
        }
        return out
    }

    /// Each message's blob downloaded, streamed; messages the server no longer has give no events.
    func bodies(of ids: [UInt32], _ each: (BodyEvent) throws -> Void) throws {
        var blobs: [UInt32: String] = [:]
        var ask: [UInt32] = []
        for n in ids { if let e = look?.emails[n] { blobs[n] = e.blob } else { ask.append(n) } }
        let byID = try emailIDs(ask)
        _ = try client.get(Array(byID.keys), properties: ["id", "blobId"]) { item in
            if let id = item["id"]?.stringValue, let n = byID[id], let blob = item["blobId"]?.stringValue { blobs[n] = blob }
        }
        let wanted = ids.filter { blobs[$0] != nil }
        if client.session.blobCapability != nil {
            // Many messages a request (`Blob/get`), in batches of about `blobBatchBytes`, two requests in
            // flight (each on its own connection), written here in order while the next ones are fetched.
            var batches: [[UInt32]] = []
            var start = 0
            while start < wanted.count {
                var end = start, bytes = 0
                while end < wanted.count && (end == start || bytes + (look?.emails[wanted[end]]?.size ?? 65536) <= Self.blobBatchBytes)
                    && end - start < client.session.limits.maxObjectsInGet
                {
                    bytes += look?.emails[wanted[end]]?.size ?? 65536
                    end += 1
                }
                batches.append(Array(wanted[start..<end]))
                start = end
            }
            // Newest first, as the core asks its chunks: the recent mail of a large first sync comes first.
            batches.reverse()
            try client.blobs(batches: batches.map { $0.map { blobs[$0]! } }, inFlight: Self.requestsInFlight) { data, b, i in
                try each(.messageStart)
                try each(.bodyStart)
                try each(.bytes(data))
                try each(.bodyEnd)
                try each(.messageEnd(id: batches[b][i]))
            }
            return
        }
        // Pipelined on one connection: each message costs the server's time, not a round trip.
        var started = false
        var failure: Error?
        try withoutActuallyEscaping(each) { each in
            // The first failure of `each` (a full disk) stops the downloads and is thrown as it was.
            let stop = GenericError(.software, "stopped")
            do {
                try client.download(
                    blobIDs: wanted.map { blobs[$0]! }, maxBytes: Self.maxMessage,
                    sink: { (piece: [UInt8], _: Int) throws(GenericError) in
                        guard failure == nil, !piece.isEmpty else { return }
                        do {
                            // The events start with the first bytes: a blob gone since (404) gives none.
                            if !started {
                                started = true
                                try each(.messageStart)
                                try each(.bodyStart)
                            }
                            try each(.bytes(piece))
                        } catch {
                            failure = error
                            throw stop
                        }
                    },
                    done: { (i: Int, found: Bool) throws(GenericError) in
                        defer { started = false }
                        guard failure == nil, found, started else { return }
                        do {
                            try each(.bodyEnd)
                            try each(.messageEnd(id: wanted[i]))
                        } catch {
                            failure = error
                            throw stop
                        }
                    })
            } catch {
                throw failure ?? error
            }
        }
    }

    /// Uploaded, then `Email/import`ed into the view's mailbox and the mailboxes its tags name, with its
    /// keywords. The same bytes imported again (a run killed after the import) give the Email already
    /// there, which is then put in the view's mailbox too.
    func upload(
        to folder: MailboxName, flags: [Flag], date: InternalDate?, size: Int,
        body: @escaping (_ sink: ([UInt8]) throws -> Void) throws -> Void
    ) throws -> (uidValidity: UInt32, uid: UInt32)? {
        guard let view = Placement.Folder.view(named: folder) else { throw GenericError(.software, "\(folder) is not a JMAP folder") }
        let home = try mailboxID(of: view)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        try body { bytes += $0 }
        let (keywords, tagged) = mailboxes.split(flags, vocabulary: vocabulary)
        try changingServer()
        let blob = try client.upload(bytes)
        let (id, existed) = try client.importEmail(
            blobID: blob, mailboxIDs: Set([home] + tagged), keywords: Set(keywords), receivedAt: date.map(Self.utcTime))
        var ids = try loadedIDs()
        try ids.record(newIDs: [id], state: nil)
        self.ids = ids
        guard let n = ids.number(of: id) else { return nil }
        if existed {
            // The account keeps one Email per content: this file is a copy of a message it has. Where the
            // message is already in this view, the file is a second copy of it here, which the server cannot
            // hold: it stays local, unpaired, and the run says so. Elsewhere (a message restored from Trash
            // as a copy, a file copied between folders) this becomes the message's place in this view, with
            // this file's keywords and tags added; a deletion of the other copy later in this run then only
            // takes the message out of that view (`delete`).
            var here = false
            try apply([n]) { _, boxes, existing in
                here = boxes.contains(home) && (look?.folder(of: n) ?? nil).map { $0 == view } ?? true
                guard !here else { return }
                boxes.insert(home)
                boxes.formUnion(tagged)
                existing.formUnion(keywords)
            }
            if here {
                notes.append(
                    "\(folder): a new file has the same bytes as a message already here; the server keeps one copy, so it stays local")
                return nil
            }
            notes.append("\(folder): a new file is a message the server has; it is now in \(view.rawValue) too")
        }
        look?.own[n] = view
        return (ids.epoch, n)
    }

    /// An IMAP date-time as JMAP's UTCDate (the same instant, in UTC).
    static func utcTime(_ d: InternalDate) -> String { utcText(InternalDate(epochSeconds: d.epochSeconds)) }

    /// The UTC start of the day a date names (the date alone, as IMAP's SEARCH BEFORE takes it), as UTCDate.
    static func utcDate(_ d: InternalDate) -> String {
        utcText(InternalDate(year: d.year, month: d.month, day: d.day, hour: 0, minute: 0, second: 0, zoneMinutes: 0) ?? d)
    }

    /// A UTC `InternalDate` written as RFC 8620's UTCDate (`2026-11-28T04:00:00Z`; a leap second as :59).
    private static func utcText(_ d: InternalDate) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(d.year)-\(two(d.month))-\(two(d.day))T\(two(d.hour)):\(two(d.minute)):\(two(min(d.second, 59)))Z"
    }

    /// A JSON Pointer token (RFC 6901): `~` and `/` escaped.
    static func pointer(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "~": out += "~0"
            case "/": out += "~1"
            default: out.append(c)
            }
        }
        return out
    }

    // MARK: Changes

    /// Flag and tag changes: keywords, and the user mailboxes tags name.
    func setFlags(_ changes: [(uids: UIDSet, action: StoreAction)]) throws -> OwnChanges {
        var edits: [UInt32: [(StoreAction.Mode, keywords: [String], mailboxes: [String])]] = [:]
        for (uids, action) in changes {
            let (keywords, boxes) = mailboxes.split(action.flags, vocabulary: vocabulary)
            for n in uids.elements { edits[n, default: []].append((action.mode, keywords, boxes)) }
        }
        // Keywords alone need no look at the messages first: each a patch of its own keys.
        if edits.values.allSatisfy({ $0.allSatisfy { $0.0 != .replace && $0.mailboxes.isEmpty } }) {
            let byID = try emailIDs(Array(edits.keys))
            var patches: [(String, JSONValue)] = []
            for (id, n) in byID.sorted(by: { $0.key < $1.key }) {
                // One key per keyword: a later change of the same keyword replaces an earlier one.
                var patch: [String: JSONValue] = [:]
                for (mode, keywords, _) in edits[n] ?? [] {
                    for k in keywords { patch["keywords/\(Self.pointer(k))"] = mode == .add ? .bool(true) : .null }
                }
                if !patch.isEmpty { patches.append((id, .object(patch.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }))) }
            }
            for result in try send(update: patches) { ownKeywords.note(result, refused: !result.notUpdated.isEmpty) }
            return OwnChanges()
        }
        let home = openFolder.flatMap(Placement.Folder.view(named:)).flatMap { mailboxes.mailboxID(of: $0) }
        let tagBoxes = Set(mailboxes.idOf.filter { if case .user = $0.key { true } else { false } }.values)
        try apply(Array(edits.keys)) { n, boxes, keywords in
            for (mode, ks, bs) in edits[n] ?? [] {
                switch mode {
                case .add:
                    keywords.formUnion(ks)
                    boxes.formUnion(bs)
                case .remove:
                    keywords.subtract(ks)
                    boxes.subtract(bs)
                case .replace:
                    keywords = keywords.filter(JMAPMailboxMap.serverOwn.contains).union(ks)
                    boxes = boxes.subtracting(tagBoxes).union(bs)
                }
            }
            if boxes.isEmpty, let home { boxes.insert(home) }
        }
        return OwnChanges()
    }

    /// A deletion: in Trash, destroyed; elsewhere moved to the Trash role's mailbox (`jmap-delete =
    /// "trash"`), or destroyed (`"destroy"`, or where the account has no Trash). A message this run placed in another view (an upload that was a copy of it) is
    /// only taken out of this view's mailbox.
    func delete(_ ids: UIDSet) throws -> OwnChanges {
        try changingServer()
        let view = openFolder.flatMap(Placement.Folder.view(named:))
        let elsewhere = ids.elements.filter { n in
            if case .some(.some(let other)) = look?.own[n] { other != view } else { false }
        }
        if !elsewhere.isEmpty, let view, let home = mailboxes.mailboxID(of: view) {
            try apply(elsewhere) { _, boxes, _ in boxes.remove(home) }
        }
        let rest = ids.elements.filter { !elsewhere.contains($0) }
        guard !rest.isEmpty else { return OwnChanges() }
        guard view != .trash, deletion == .trash, let trash = mailboxes.mailboxID(of: .trash) else {
            let byID = try emailIDs(rest)
            _ = try send(destroy: Array(byID.keys))
            for n in byID.values { look?.own[n] = .some(nil) }
            return OwnChanges()
        }
        try apply(rest) { _, boxes, _ in boxes = [trash] }
        for n in rest { look?.own[n] = policy.syncTrash ? .trash : .some(nil) }
        return OwnChanges()
    }

    /// No claims: a move between views is a change of mailboxes, which two devices make alike.
    func canClaim(_ listing: ServerListing) -> Bool { false }
    func claim(_ claims: [(id: UInt32, action: StoreAction)], since listing: ServerListing) throws -> (
        lost: Set<UInt32>, changes: OwnChanges
    ) { ([], OwnChanges()) }

    /// A move between views: the source view's mailbox removed, the destination's added (`Placement.change`);
    /// the ids stay.
    func move(_ ids: UIDSet, to folder: MailboxName) throws -> (pairs: [(source: UInt32, destination: UInt32)], changes: OwnChanges) {
        guard let name = openFolder, let source = Placement.Folder.view(named: name), let destination = Placement.Folder.view(named: folder)
        else {
            throw GenericError(.software, "\(folder) is not a JMAP folder")
        }
        _ = try mailboxID(of: destination)
        let map = mailboxes
        try apply(ids.elements) { _, boxes, _ in
            let server = Set(boxes.compactMap { map.byID[$0] })
            let c = Placement.change(
                server: server, from: Placement.Placed(folder: source, tags: [], flagged: false, reason: .inbox),
                to: Placement.Placed(folder: destination, tags: [], flagged: false, reason: .inbox), archiveIsMailbox: true)
            boxes.formUnion(c.add.compactMap { map.idOf[$0] })
            boxes.subtract(c.remove.compactMap { map.idOf[$0] })
            // Out of Trash or Junk: out of those mailboxes too, or the message would stay placed there.
            if source == .trash || source == .junk, let own = map.mailboxID(of: source) { boxes.remove(own) }
            if boxes.isEmpty, let home = map.mailboxID(of: destination) { boxes.insert(home) }
        }
        for n in ids.elements { look?.own[n] = destination }
        return (ids.elements.map { ($0, $0) }, OwnChanges())
    }

    /// The mailbox of a view, made when the account has none with its role (Cyrus starts with Inbox alone):
    /// a top-level mailbox of the view's name is given the role, else one is created. The mailboxes' digest
    /// changes with it, so the next run places every message again.
    func mailboxID(of view: Placement.Folder) throws -> String {
        if let id = mailboxes.mailboxID(of: view) { return id }
        guard let role = JMAPMailboxMap.roles.first(where: { $0.value == Placement.mailbox(of: view, archiveIsMailbox: true) })?.key else {
            throw GenericError(.software, "\(view.rawValue) has no role")
        }
        var boxes = mailboxes.boxes
        do {
            _ = try client.roleMailbox(role, name: view.rawValue, in: &boxes)
        } catch let error as GenericError {
            throw GenericError(error.kind, "\(endpoint): \(error.message)")
        }
        mailboxes = JMAPMailboxMap(boxes)
        notes.append("made the mailbox \(view.rawValue) (role \(role)) on the server")
        guard let id = mailboxes.mailboxID(of: view) else {
            throw GenericError(.unavailable, "\(endpoint): the \(view.rawValue) mailbox made has no role \(role)")
        }
        return id
    }

    /// Reads the mailboxes and keywords of the messages numbered `numbers`, lets `edit` change them, and
    /// sends the differences as `Email/set` patches (within `maxObjectsInSet`). Refusals become notes.
    func apply(_ numbers: [UInt32], _ edit: (UInt32, inout Set<String>, inout Set<String>) -> Void) throws {
        // Guarded by the state the messages were read at (`ifInState`): another client's change in between
        // makes the server refuse, and the messages are read again (twice at most; then unguarded).
        for attempt in 0..<3 {
            do {
                return try applyOnce(numbers, guarded: attempt < 2, edit)
            } catch let error as JMAPMethodError where error.type == "stateMismatch" {
                continue
            }
        }
    }

    private func applyOnce(_ numbers: [UInt32], guarded: Bool, _ edit: (UInt32, inout Set<String>, inout Set<String>) -> Void) throws {
        let byID = try emailIDs(numbers)
        guard !byID.isEmpty else { return }
        try changingServer()
        var patches: [(String, JSONValue)] = []
        let state = try client.get(Array(byID.keys), properties: ["id", "mailboxIds", "keywords"]) { item in
            guard let id = item["id"]?.stringValue, let n = byID[id] else { return }
            let oldBoxes = JMAPClient.trueKeys(item["mailboxIds"])
            let oldKeywords = Set(JMAPClient.trueKeys(item["keywords"]).map { $0.lowercased() })
            var boxes = oldBoxes, keywords = oldKeywords
            edit(n, &boxes, &keywords)
            // JMAP keeps every Email in a mailbox: a change that would empty the set leaves it as it was.
            if boxes.isEmpty { boxes = oldBoxes }
            var patch: [(String, JSONValue)] = []
            for b in boxes.subtracting(oldBoxes).sorted() { patch.append(("mailboxIds/\(Self.pointer(b))", true)) }
            for b in oldBoxes.subtracting(boxes).sorted() { patch.append(("mailboxIds/\(Self.pointer(b))", .null)) }
            for k in keywords.subtracting(oldKeywords).sorted() { patch.append(("keywords/\(Self.pointer(k))", true)) }
            // Removed with null, never false (../shared/cyrus-jmap.md, quirk 3).
            for k in oldKeywords.subtracting(keywords).sorted() { patch.append(("keywords/\(Self.pointer(k))", .null)) }
            if !patch.isEmpty { patches.append((id, .object(patch))) }
        }
        // Read in more than one answer (more than maxObjectsInGet messages), the state is the last answer's.
        _ = try send(update: patches, ifInState: guarded ? state : nil)
    }

    /// `Email/set`s of `update` patches, or of `destroy`, in batches of at most `maxObjectsInSet`; refusals
    /// become notes. With `ifInState`, each batch is guarded by the state the one before left.
    private func send(update: [(String, JSONValue)] = [], destroy: [String] = [], ifInState: String? = nil) throws -> [JMAPSetResult] {
        let per = client.session.limits.maxObjectsInSet
        var guardState = ifInState
        var results: [JMAPSetResult] = []
        for start in stride(from: 0, to: max(update.count, destroy.count), by: per) {
            let result = try client.setEmails(
                update: Array(update[min(start, update.count)..<min(update.count, start + per)]),
                destroy: Array(destroy[min(start, destroy.count)..<min(destroy.count, start + per)]), ifInState: guardState)
            note(result)
            if guardState != nil { guardState = result.newState }
            results.append(result)
        }
        return results
    }

    private func note(_ result: JMAPSetResult) {
        for (id, type) in (result.notUpdated.merging(result.notDestroyed) { a, _ in a }).sorted(by: { $0.key < $1.key }).prefix(5) {
            notes.append(
                "the server refused a change of \(escapedForMessage(id)): \(escapedForMessage(type)); the next sync shows it as the server keeps it"
            )
        }
    }

    // MARK: Folders (the views are fixed)

    func createFolder(_ folder: MailboxName) throws {}
    func deleteFolder(_ folder: MailboxName) throws {
        throw GenericError(.unavailable, "\(folder) is a JMAP account's folder; it is not deleted")
    }
}
