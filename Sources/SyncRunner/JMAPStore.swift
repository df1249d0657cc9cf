#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import IMAPCodec
import JMAPClient
import Maildir
import MoCore
import SyncEngine
import SyncState

/// A JMAP account's `ServerStore` (docs/jmap.md): the account's Emails shown as the views INBOX, Sent,
/// Drafts, Archive, Trash and Junk, each message in exactly one (`Placement`, the model Gmail mode shares),
/// its other mailboxes as tags, its keywords as letters and keywords.
///
/// Invariants:
/// - A message's id in every view is its number in `JMAPIDs` (numbered the first time a look sees it, made
///   durable before any folder can commit it), and every view's epoch is that file's. A message that moves
///   between views (a mailbox added or removed on either side) keeps its id, so the core carries it as a
///   move (`MoveDetector`) and never downloads it again.
/// - Every view of a run is cut from one look at the account (`begin`): the Email state, the mailboxes, and
///   the Emails changed since the oldest view's mark (`Email/changes`) or, when that cannot be said, every
///   Email. The mark a view commits is the number of the state the look saw.
/// - Nothing is destroyed but in Trash: a deletion elsewhere moves the message to the Trash role's mailbox.
///
/// The cost of a run that changed nothing: the session, and one request (the Email state and the mailboxes),
/// whatever the number of messages (`JMAPMark`).
final class JMAPStore: ServerStore {
    let client: JMAPClient
    let directory: String
    let vocabulary: TagVocabulary
    let policy: Placement.Policy
    var mailboxes = JMAPMailboxMap([])
    var ids: JMAPIDs?
    var look: Look?
    var openFolder: MailboxName?
    /// Whether every view is as the saved mark counts it (`begin`).
    var unchanged = false
    let lastMark: JMAPMark?
    /// Whether this run changed anything on the server (then it leaves no counts).
    var madeChanges = false
    /// Lines for the account's summary.
    var notes: [String] = []

    init(
        client: JMAPClient, directory: String, vocabulary: TagVocabulary,
        policy: Placement.Policy = Placement.Policy(syncTrash: true, syncJunk: true)
    ) {
        self.client = client
        self.directory = directory
        self.vocabulary = vocabulary
        self.policy = policy
        self.lastMark = JMAPMark.load(in: directory)
    }

    /// The folders of a JMAP account, in the order they are synced.
    static let views: [Placement.Folder] = [.inbox, .sent, .drafts, .archive, .trash, .junk]

    var endpoint: String { JMAPClient.name(client.sessionURL) }
    func reportsChangesSince(in folder: MailboxName) -> Bool { !(look?.listedWhole ?? true) }
    /// A view's vanished ids are those changed or destroyed since the look's mark and not in it now: only
    /// what went since the mark (and ids it never had, which the core passes over). Not in a run that
    /// listed every Email: then there is no mark to speak of, and the core reads every record.
    func knowsVanishedSince(in folder: MailboxName) -> Bool { !(look?.listedWhole ?? true) }
    var idsSpanFolders: Bool { true }
    func sharesIDs(_ folder: MailboxName) -> Bool { true }
    /// A message's id stays while it exists; one destroyed and imported again is new.
    func returnsUnderNewID(_ folder: MailboxName) -> Bool { false }
    /// `\Deleted` is never stored: a deletion is the file's removal.
    var neverStored: MaildirFlags { .trashed }
    var movesNameNewIDs: Bool { true }

    static func view(named mailbox: MailboxName) -> Placement.Folder? {
        if mailbox.isInbox { return .inbox }
        return Placement.Folder(rawValue: String(decoding: mailbox.wire, as: UTF8.self))
    }

    // MARK: The look

    /// The run's look at the account.
    struct Look {
        var epoch: UInt32
        /// The mark of the Email state the look is as of.
        var mark: UInt64
        var uidNext: UInt32
        /// Every Email was listed: `placed` holds all of them.
        var listedWhole = false
        /// The mark changes were listed since (the oldest view's), when not listed whole.
        var changedSince: UInt64?
        /// Each listed Email's view and flags (the changed ones, or all), and its blob and size.
        var placed: [UInt32: (folder: Placement.Folder?, flags: [Flag])] = [:]
        var emails: [UInt32: (blob: String, size: Int)] = [:]
        /// Ids destroyed since the mark.
        var destroyed: Set<UInt32> = []
        /// The views of messages this run uploaded, moved or deleted (nil: none).
        var own: [UInt32: Placement.Folder?] = [:]
        /// Each view's count, once asked.
        var counts: [Placement.Folder: UInt32]?

        func folder(of id: UInt32) -> Placement.Folder?? {
            if let o = own[id] { return o }
            return placed[id].map { $0.folder }
        }
    }

    /// Takes the run's look before any view is opened, given the views' committed marks (nil: a view with
    /// none), so every view is cut from one snapshot:
    ///
    /// | the account and the marks                                          | the look                    |
    /// |--------------------------------------------------------------------|-----------------------------|
    /// | Email state as the last `s` line, mailboxes as the mark, every view at that mark, counts kept | nothing more (`unchanged`) |
    /// | a view without a mark or of another epoch; mailboxes changed; the server cannot say what changed | every Email listed (`listedWhole`) |
    /// | otherwise                                                          | `Email/changes` since the oldest mark, and `Email/get` of those |
    func begin(views marks: [ListingMark?], whole wanted: Bool = false) throws {
        let answer = try client.call([
            JMAPCall("Email/get", .object([("accountId", .string(client.session.accountID)), ("ids", .array([]))]), id: "e"),
            JMAPCall("Mailbox/get", .object([("accountId", .string(client.session.accountID)), ("ids", .null)]), id: "m")
        ])
        guard let emailState = try answer.arguments(for: "e")["state"]?.stringValue else {
            throw GenericError(.protocolViolation, "\(endpoint): Email/get gave no state")
        }
        mailboxes = JMAPMailboxMap(try JMAPMailbox.list(from: try answer.arguments(for: "m")).mailboxes)

        if !wanted, let last = JMAPIDs.lastState(in: directory), last.state == emailState, lastMark?.mailboxState == mailboxes.digest,
            let counts = lastMark?.counts, counts.epoch == last.epoch, counts.mark == last.mark,
            marks.allSatisfy({ $0?.uidValidity == last.epoch && $0?.modSeq.value == last.mark })
        {
            unchanged = true
            var look = Look(epoch: last.epoch, mark: last.mark, uidNext: counts.uidNext)
            look.counts = Dictionary(uniqueKeysWithValues: Self.views.map { ($0, counts.views[$0.rawValue] ?? 0) })
            self.look = look
            return
        }
        var ids = try JMAPIDs.open(in: directory)
        let epoch = ids.epoch
        let oldest = marks.compactMap { $0?.modSeq.value }.min()
        let whole =
            wanted || marks.contains { $0 == nil || $0!.uidValidity != epoch } || lastMark?.mailboxState != mailboxes.digest
            || oldest.flatMap { ids.state(of: $0) } == nil
        var changed: [String] = [], destroyed: [String] = [], state = emailState
        if !whole, let oldest, let since = ids.state(of: oldest) {
            var counts: [Placement.Folder: UInt32]?
            do {
                // The changes, then each view's count in one request with a last Email/changes: when that
                // one finds nothing more, the counts are of the same state as the changes (else again).
                var from = since
                for _ in 0..<8 {
                    let (c, totals) = try changesAndCounts(since: from)
                    changed += c.created + c.updated
                    destroyed += c.destroyed
                    from = c.newState
                    counts = totals
                    if !c.hasMoreChanges && c.created.isEmpty && c.updated.isEmpty && c.destroyed.isEmpty { break }
                }
                state = from
            } catch let error as JMAPMethodError where error.type == "cannotCalculateChanges" {
                notes.append("the server cannot say what changed since the last sync; every message was listed")
                try listWhole(&ids)
                return
            }
            let (_, emails) = try client.emails(Array(Set(changed)))
            let mark = try ids.record(newIDs: emails.map(\.id), state: state) ?? 0
            var look = Look(epoch: epoch, mark: mark, uidNext: ids.lastNumber + 1)
            look.changedSince = oldest
            look.counts = counts
            look.destroyed = Set(destroyed.compactMap { ids.number(of: $0) })
            place(emails, ids: ids, into: &look)
            self.ids = ids
            self.look = look
            return
        }
        try listWhole(&ids)
    }

    /// Every Email listed and placed.
    func listWhole(_ ids: inout JMAPIDs) throws {
        let (state, all) = try client.allEmailIDs()
        let (_, emails) = try client.emails(all)
        let mark = try ids.record(newIDs: emails.map(\.id), state: state) ?? 0
        var look = Look(epoch: ids.epoch, mark: mark, uidNext: ids.lastNumber + 1)
        look.listedWhole = true
        place(emails, ids: ids, into: &look)
        var counts: [Placement.Folder: UInt32] = [:]
        for (_, p) in look.placed { if let f = p.folder { counts[f, default: 0] += 1 } }
        look.counts = counts
        self.ids = ids
        self.look = look
    }

    private func place(_ emails: [JMAPEmail], ids: JMAPIDs, into look: inout Look) {
        for e in emails {
            guard let n = ids.number(of: e.id) else { continue }
            look.placed[n] = mailboxes.view(e, vocabulary: vocabulary, policy: policy)
            look.emails[n] = (e.blobID, e.size)
        }
    }

    /// `Email/changes` since `state` and, in the same request, each view's count (`Email/query` totals):
    /// the core checks its pairs against them.
    func changesAndCounts(since state: String) throws -> (JMAPChanges, [Placement.Folder: UInt32]) {
        let account = JSONValue.string(client.session.accountID)
        var calls = [
            JMAPCall(
                "Email/changes", .object([("accountId", account), ("sinceState", .string(state)), ("maxChanges", .int(4096))]), id: "c")
        ]
        for view in Self.views {
            guard let filter = filter(of: view) else { continue }
            calls.append(
                JMAPCall(
                    "Email/query", .object([("accountId", account), ("filter", filter), ("limit", .int(0)), ("calculateTotal", true)]),
                    id: view.rawValue))
        }
        let answer = try client.call(calls)
        let got = try answer.arguments(for: "c")
        guard let old = got["oldState"]?.stringValue, let new = got["newState"]?.stringValue else {
            throw GenericError(.protocolViolation, "\(endpoint): Email/changes gave no oldState or newState")
        }
        func ids(_ key: String) -> [String] { if case .array(let a)? = got[key] { a.compactMap(\.stringValue) } else { [] } }
        let changes = JMAPChanges(
            oldState: old, newState: new, hasMoreChanges: got["hasMoreChanges"] == .bool(true), created: ids("created"),
            updated: ids("updated"), destroyed: ids("destroyed"))
        var counts: [Placement.Folder: UInt32] = [:]
        for view in Self.views {
            // A view without its mailbox (no mailbox has the role) holds nothing.
            guard calls.contains(where: { $0.id == view.rawValue }) else {
                counts[view] = 0
                continue
            }
            guard let total = try answer.arguments(for: view.rawValue)["total"]?.intValue, total >= 0 else {
                throw GenericError(.protocolViolation, "\(endpoint): Email/query gave no total")
            }
            counts[view] = UInt32(clamping: total)
        }
        return (changes, counts)
    }

    /// The `Email/query` filter of a view: in its mailbox and in none of the rows before it in the
    /// placement's table (Archive: in none of the other roles' mailboxes); nil for a view whose role no
    /// mailbox has (it holds nothing).
    func filter(of view: Placement.Folder) -> JSONValue? {
        let order: [Placement.Folder] = [.trash, .junk, .drafts, .inbox, .sent]
        let before = view == .archive ? order : Array(order.prefix { $0 != view })
        let excluded = before.compactMap { mailboxes.mailboxID(of: $0) }
        let none: JSONValue = .object([("operator", "NOT"), ("conditions", .array(excluded.map { .object([("inMailbox", .string($0))]) }))])
        if view == .archive { return excluded.isEmpty ? .object([]) : none }
        guard let home = mailboxes.mailboxID(of: view) else { return nil }
        let inHome: JSONValue = .object([("inMailbox", .string(home))])
        return excluded.isEmpty ? inHome : .object([("operator", "AND"), ("conditions", .array([inHome, none]))])
    }

    // MARK: The listing

    func open(_ folder: MailboxName, since: ListingMark?) throws -> ServerListing {
        guard let view = Self.view(named: folder), let look else {
            throw GenericError(.software, "\(folder) is not a JMAP folder, or the run took no look")
        }
        openFolder = folder
        var s = SelectedMailbox(mailbox: folder)
        s.uidValidity = look.epoch
        s.highestModSeq = ModSequence(look.mark)
        s.permanentFlags = [.seen, .answered, .flagged, .draft, .wildcard]
        s.flags = [.seen, .answered, .flagged, .draft]
        if unchanged {
            s.exists = look.counts?[view] ?? 0
            s.uidNext = look.uidNext
            return s
        }
        s.uidNext = look.uidNext
        guard let counts = look.counts else { throw GenericError(.software, "the run's look has no counts") }
        s.exists = counts[view] ?? 0
        if let since, since.uidValidity == look.epoch, !look.listedWhole, let base = look.changedSince {
            if base <= since.modSeq.value, since.modSeq.value <= look.mark {
                var vanished = look.destroyed
                for (id, p) in look.placed {
                    let folder = look.folder(of: id) ?? p.folder
                    if folder == view {
                        var m = MessageInfo(sequenceNumber: 0)
                        m.uid = id
                        m.flags = p.flags
                        m.modSeq = ModSequence(look.mark)
                        s.changed.append(m)
                    } else {
                        vanished.insert(id)
                    }
                }
                s.changed.sort { $0.uid < $1.uid }
                s.vanished = UIDSet(uids: vanished.sorted())
            } else {
                s.changesUnknown = true
            }
        }
        return s
    }

    func beginOpen(_ folder: MailboxName, since: ListingMark?) throws -> PendingListing {
        let listing = try open(folder, since: since)
        return PendingListing { listing }
    }

    /// Every message of the open view with its flags, from a run that listed every Email. A run that
    /// looked only at the changes cannot list a view whole without a second look at the account, newer
    /// than the one the other views were cut from (a message moved in between would be in two views, or
    /// in none): the view fails, no view is finished this run (`syncViews`), and the mark is removed so
    /// the next run lists every Email.
    func listAll(_ each: (MessageInfo) throws -> Void) throws {
        guard let name = openFolder, let view = Self.view(named: name), let look else { return }
        guard look.listedWhole else {
            _ = unlink(directory + "/" + JMAPMark.fileName)
            throw GenericError(
                .temporary, "\(name) must be listed whole, but this run looked only at the changes; the next run lists every message")
        }
        for (id, p) in look.placed.sorted(by: { $0.key < $1.key }) where (look.folder(of: id) ?? p.folder) == view {
            var m = MessageInfo(sequenceNumber: 0)
            m.uid = id
            m.flags = p.flags
            try each(m)
        }
    }

    func ids(from first: UInt32) throws -> [UInt32] {
        guard let name = openFolder, let view = Self.view(named: name), let look else { return [] }
        return look.placed.keys.filter { $0 >= first && (look.folder(of: $0) ?? nil) == view }.sorted()
    }

    /// Asked of the whole account (a view's ids are the account's); the core asks only about ids it holds.
    func ids(arrivedBefore day: InternalDate) throws -> UIDSet {
        let (_, found) = try client.queryAll(filter: .object([("before", .string(Self.utcDate(day)))]))
        let ids = try loadedIDs()
        return UIDSet(uids: found.compactMap(ids.number(of:)).sorted())
    }

    /// The UTC start of the day a date names, as JMAP's UTCDate (RFC 8620 §1.4).
    static func utcDate(_ d: InternalDate) -> String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(d.year)-\(two(d.month))-\(two(d.day))T00:00:00Z"
    }

    func loadedIDs() throws -> JMAPIDs {
        if let ids { return ids }
        let loaded = try JMAPIDs.open(in: directory)
        ids = loaded
        return loaded
    }
}
