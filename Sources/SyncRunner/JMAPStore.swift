#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import IMAPCodec
import JMAPClient
import Maildir
import MoConfig
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
    /// What a local deletion outside Trash does (`jmap-delete`).
    let deletion: JMAPDeletion
    var mailboxes = JMAPMailboxMap([])
    var ids: JMAPIDs?
    var look: Look?
    var openFolder: MailboxName?
    /// Whether every view is as the saved mark counts it (`begin`).
    var unchanged = false
    let lastMark: JMAPMark?
    /// Whether this run changed anything on the server but keywords (then it leaves no counts).
    private(set) var madeChanges = false
    /// The states the run's own keyword changes led through, from the look's to the last (`OwnKeywords`):
    /// nil before the first, broken when another client's change came between two of them.
    var ownKeywords = OwnKeywords()
    /// Each view's state (its folder's), which `countsBroughtForward` reads for the records of changed ids.
    var viewStates: [Placement.Folder: FolderStateStore] = [:]
    /// Lines for the account's summary.
    var notes: [String] = []

    init(
        client: JMAPClient, directory: String, vocabulary: TagVocabulary,
        policy: Placement.Policy = Placement.Policy(syncTrash: true, syncJunk: true), deletion: JMAPDeletion = .trash
    ) {
        self.deletion = deletion
        self.client = client
        self.directory = directory
        self.vocabulary = vocabulary
        self.policy = policy
        self.lastMark = JMAPMark.load(in: directory)
    }

    /// The folders of a JMAP account, in the order they are synced.
    static let views: [Placement.Folder] = [.inbox, .sent, .drafts, .archive, .trash, .junk]

    var endpoint: String { client.sessionURL.origin }
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

    /// Before the run's first change on the server but keywords: the last run's counts leave `jmap-mark`,
    /// durably. The views' states will hold what this run changes, and a run that stops before it writes
    /// its own mark must leave no counts to bring forward (`countsBroughtForward`).
    func changingServer() throws {
        guard !madeChanges else { return }
        if let mark = lastMark, mark.counts != nil { try JMAPMark(mailboxState: mark.mailboxState).save(in: directory) }
        madeChanges = true
    }

    // MARK: The listing

    func open(_ folder: MailboxName, since: ListingMark?) throws -> ServerListing {
        guard let view = Placement.Folder.view(named: folder), let look else {
            throw GenericError(.software, "\(folder) is not a JMAP folder, or the run took no look")
        }
        openFolder = folder
        var s = SelectedMailbox(mailbox: folder)
        s.uidValidity = look.epoch
        s.highestModSeq = ModSequence(look.mark)
        s.permanentFlags = [.seen, .answered, .flagged, .draft, .wildcard]
        s.flags = [.seen, .answered, .flagged, .draft]
        s.uidNext = look.uidNext
        guard let counts = look.counts else { throw GenericError(.software, "the run's look has no counts") }
        s.exists = counts[view] ?? 0
        if let since = effective(since), since.uidValidity == look.epoch, !look.listedWhole, let base = look.changedSince {
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
        guard let name = openFolder, let view = Placement.Folder.view(named: name), let look else { return }
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
        guard let name = openFolder, let view = Placement.Folder.view(named: name), let look else { return [] }
        return look.placed.keys.filter { $0 >= first && (look.folder(of: $0) ?? nil) == view }.sorted()
    }

    /// Asked of the whole account (a view's ids are the account's); the core asks only about ids it holds.
    func ids(arrivedBefore day: InternalDate) throws -> UIDSet {
        let (_, found) = try client.queryAll(filter: .object([("before", .string(Self.utcDate(day)))]))
        let ids = try loadedIDs()
        return UIDSet(uids: found.compactMap(ids.number(of:)).sorted())
    }

    func loadedIDs() throws -> JMAPIDs {
        if let ids { return ids }
        let loaded = try JMAPIDs.open(in: directory)
        ids = loaded
        return loaded
    }
}
