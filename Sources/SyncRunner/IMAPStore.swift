import IMAPClient
import Maildir
import IMAPCodec
import SyncEngine

/// IMAP as the first `ServerStore`: a folder is a mailbox, opening it is a SELECT (with QRESYNC since a
/// saved mark), an id is a UID. Each call is the IMAP exchange the sync made before the seam was drawn,
/// unchanged: the same commands, the same pipelining, the same round trips.
extension IMAPConnection: ServerStore {
    var endpoint: String { "\(settings.host):\(settings.port)" }

    // MARK: The listing

    var openFolder: MailboxName? { selectedMailbox }
    func reportsChangesSince(in folder: MailboxName) -> Bool { enabled.contains(.qresync) || supportsCondstore }
    func knowsVanishedSince(in folder: MailboxName) -> Bool { enabled.contains(.qresync) }
    /// A UID is the message's in its mailbox only.
    var idsSpanFolders: Bool { false }
    func sharesIDs(_ folder: MailboxName) -> Bool { false }
    func returnsUnderNewID(_ folder: MailboxName) -> Bool { false }
    var neverStored: MaildirFlags { [] }

    func open(_ folder: MailboxName, since: ListingMark?) throws -> ServerListing {
        try catchUp(select(folder, qresync: since), since: since)
    }

    func beginOpen(_ folder: MailboxName, since: ListingMark?) throws -> PendingListing {
        let pending = try beginSelect(folder, qresync: since)
        return PendingListing { try self.catchUp(self.finishSelect(pending), since: since) }
    }

    /// CONDSTORE without QRESYNC (Gmail, some others): after the CONDSTORE SELECT, what a QRESYNC SELECT
    /// would have listed, asked with two commands whose answers follow the change, not the mailbox:
    /// - changed: `UID FETCH 1:* (UID FLAGS) (CHANGEDSINCE mark)`, not sent when HIGHESTMODSEQ is the mark;
    /// - vanished: every UID below UIDNEXT that `UID SEARCH` (ESEARCH: one sequence set) does not find.
    ///   Old gaps are in it too (`knowsVanishedSince` is false): the core keeps only the UIDs it has.
    /// Without UIDNEXT or HIGHESTMODSEQ, with NOMODSEQ or a mark the server is behind, nothing can be said
    /// (`changesUnknown`: the core lists whole). With QRESYNC, no mark or a new UIDVALIDITY, the SELECT's
    /// own answer stands.
    private func catchUp(_ selected: SelectedMailbox, since: ListingMark?) throws -> ServerListing {
        guard let since, !enabled.contains(.qresync), selected.uidValidity == since.uidValidity else { return selected }
        var s = selected
        guard let next = s.uidNext, let highest = s.highestModSeq, !s.noModSeq, highest >= since.modSeq else {
            s.changesUnknown = true
            return s
        }
        if highest != since.modSeq {
            s.changed = try fetchInfo(UIDSet(1...UIDSet.star), items: [.uid, .flags], changedSince: since.modSeq).messages
        }
        guard next > 1 else { return s }
        let present = s.exists > 0 ? try uidsPresent(in: UIDSet(1...next - 1)) : UIDSet([])
        s.vanished = present.complement(within: 1...next - 1)
        return s
    }

    /// `UID FETCH 1:* (UID FLAGS)`, streamed.
    func listAll(_ each: (MessageInfo) throws -> Void) throws {
        var collector = MessageInfoCollector()
        try withoutActuallyEscaping(each) { each in
            try fetch(UIDSet(1...UIDSet.star), items: [.uid, .flags]) { event in
                if let m = collector.feed(event) { try each(m) }
            }
        }
    }

    func ids(from first: UInt32) throws -> [UInt32] {
        try fetchInfo(UIDSet(first...UIDSet.star), items: [.uid]).messages.map(\.uid)
    }

    /// `UID SEARCH RETURN (ALL) BEFORE day` (ESEARCH: one sequence set), else `UID SEARCH BEFORE day`.
    func ids(arrivedBefore day: InternalDate) throws -> UIDSet { try uids(matching: .before(day)) }

    // MARK: Transfers

    /// `UID FETCH (UID RFC822.SIZE BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])`; then, for ID-less messages of
    /// a wanted size, `BODY.PEEK[]` to hash them.
    func keys(of ids: [UInt32], hashingSizes: Set<Int>) throws -> [UInt32: MessageKey] {
        guard !ids.isEmpty else { return [:] }
        var keys: [UInt32: MessageKey] = [:]
        var needHash: [UInt32] = []
        try sections(of: ids, "HEADER.FIELDS (MESSAGE-ID)", withSize: true) { uid, size, header in
            if let id = MessageKeys.messageID(headerBytes: header[...]) {
                keys[uid] = MessageKey(messageID: id, wireSize: size)
            } else if hashingSizes.contains(size) {
                needHash.append(uid)
            }
        }
        guard !needHash.isEmpty else { return keys }
        try sections(of: needHash, "", withSize: false) { uid, _, body in keys[uid] = MessageKeys.key(wire: body) }
        return keys
    }

    /// `UID FETCH (UID RFC822.SIZE)`.
    func sizes(of ids: [UInt32]) throws -> [UInt32: Int] {
        guard !ids.isEmpty else { return [:] }
        var sizes: [UInt32: Int] = [:]
        for m in try fetchInfo(UIDSet(uids: ids), items: [.uid, .rfc822Size]).messages where m.uid != 0 {
            if let size = m.size { sizes[m.uid] = Int(size) }
        }
        return sizes
    }

    /// `UID FETCH (UID BODY.PEEK[HEADER])`.
    func headers(of ids: [UInt32]) throws -> [UInt32: [UInt8]] {
        guard !ids.isEmpty else { return [:] }
        var headers: [UInt32: [UInt8]] = [:]
        try sections(of: ids, "HEADER", withSize: false) { uid, _, header in headers[uid] = header }
        return headers
    }

    /// `UID FETCH (UID [RFC822.SIZE] BODY.PEEK[section])`: `each` gets every message's UID, size (0 unless
    /// `withSize`) and the section's bytes, one message held at a time. For small sections, or bodies hashed
    /// whole; `bodies` streams the ones written to disk.
    private func sections(
        of ids: [UInt32], _ section: String, withSize: Bool, _ each: (UInt32, Int, [UInt8]) throws -> Void
    ) throws {
        var uid: UInt32 = 0, size = 0, bytes: [UInt8] = []
        try withoutActuallyEscaping(each) { each in
            try fetch(UIDSet(uids: ids), items: withSize ? [.uid, .rfc822Size, .body(section: section)] : [.uid, .body(section: section)]) {
                event in
                switch event {
                case .fetchStart: uid = 0; size = 0; bytes = []
                case .fetchAttribute(.uid(let u)): uid = u
                case .fetchAttribute(.rfc822Size(let s)): size = Int(s)
                case .bodyBytes(let b): bytes += b
                case .fetchEnd: if uid != 0 { try each(uid, size, bytes) }
                default: break
                }
            }
        }
    }

    /// `UID FETCH (UID BODY.PEEK[])`, its events turned into `BodyEvent`s: the UID may come before or after
    /// the body in a response, so it is given at the message's end. Only the whole message's body (section
    /// empty, not NIL) is passed on. `gmailThreads`: X-GM-THRID is asked too, and given at the end.
    func bodies(of ids: [UInt32], _ each: (BodyEvent) throws -> Void) throws {
        try bodies(of: ids, gmailThreads: false, each)
    }

    func bodies(of ids: [UInt32], gmailThreads: Bool, _ each: (BodyEvent) throws -> Void) throws {
        var uid: UInt32 = 0
        var thread: UInt64?
        var inBody = false
        try withoutActuallyEscaping(each) { each in
            try fetch(UIDSet(uids: ids), items: gmailThreads ? [.uid, .gmailThreadID, .body()] : [.uid, .body()]) { event in
                switch event {
                case .fetchStart:
                    uid = 0
                    thread = nil
                    inBody = false
                    try each(.messageStart)
                case .fetchAttribute(.uid(let u)): uid = u
                case .fetchAttribute(.gmailThreadID(let t)): thread = t
                case .bodyStart(let start) where start.section.isEmpty && !start.isNil:
                    inBody = true
                    try each(.bodyStart)
                case .bodyBytes(let bytes): if inBody { try each(.bytes(bytes)) }
                case .bodyEnd:
                    if inBody { try each(.bodyEnd) }
                    inBody = false
                case .fetchEnd: try each(.messageEnd(id: uid, thread: thread))
                default: break
                }
            }
        }
    }

    /// APPEND, the literal streamed from `body` onto the connection.
    func upload(
        to folder: MailboxName, flags: [Flag], date: InternalDate?, size: Int,
        body: @escaping (_ sink: ([UInt8]) throws -> Void) throws -> Void
    ) throws -> (uidValidity: UInt32, uid: UInt32)? {
        try append(to: folder, flags: flags, date: date, size: size) { connection in
            try body { wire in try wire.withUnsafeBytes { try connection.write($0) } }
        }
    }

    // MARK: Changes

    /// Silent UID STOREs, pipelined (`storeSilently`). `delete` (UID EXPUNGE, else \Deleted + EXPUNGE) and
    /// `move` (UID MOVE, else COPY + delete) are `IMAPConnection`'s own.
    func setFlags(_ changes: [(uids: UIDSet, action: StoreAction)]) throws -> OwnChanges {
        try storeSilently(changes)
    }

    var movesNameNewIDs: Bool { capabilities.contains(.uidplus) }

    func canClaim(_ listing: ServerListing) -> Bool { supportsCondstore && !listing.noModSeq && listing.highestModSeq != nil }

    func claim(_ claims: [(id: UInt32, action: StoreAction)], since listing: ServerListing) throws -> (
        lost: Set<UInt32>, changes: OwnChanges
    ) {
        guard let mark = listing.highestModSeq, !claims.isEmpty else { return ([], OwnChanges()) }
        return try claim(claims.map { (uid: $0.id, action: $0.action) }, unchangedSince: mark)
    }

    // MARK: Folders

    func createFolder(_ folder: MailboxName) throws { try create(folder) }
    func deleteFolder(_ folder: MailboxName) throws { try deleteMailbox(folder) }
}
