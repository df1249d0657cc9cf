import IMAPClient
import Maildir
import IMAPCodec
import SyncEngine

/// The store seam: everything the sync core (`PreparedFolder`, `CrashSettling`, `MoveDetector`,
/// `FolderRemoval`) asks of a server, and nothing else. isync's `driver.h` is the model: the core never
/// knows which kind of server it holds. IMAP is the first implementation (`IMAPStore.swift`); Gmail mode
/// and JMAP come in as others (docs/store-seam.md), under the same planner, journal discipline, crash
/// settling and Maildir side.
///
/// Three parts, each used for one thing:
/// - **the listing**: one folder opened, with what changed since a saved mark (`ServerListing`), or
///   every message's flags (`listAll`);
/// - **transfers**: message keys, bodies streamed as `BodyEvent`s, uploads;
/// - **changes**: flags set and cleared, messages deleted or moved to another folder; each returns what
///   the server said of its own marks (`OwnChanges`), so the saved mark may pass the run's own changes.
///
/// A store never writes state: intents are journaled by the core before a transfer creates anything,
/// and settled by looking (docs/sync-design.md). Per-folder calls apply to the folder last opened
/// (`openFolder`); the core opens it again (`PreparedFolder.ensureSelected`) when another was opened since.
///
/// Vocabulary, for now IMAP's value types: a message's id in a folder is a UID (`UInt32`; issue 26's
/// `ServerID` replaces it), flags are IMAP flags and keywords (JMAP's `$seen` is `\Seen` at its edge),
/// a listing is what a QRESYNC SELECT reports (identity epoch = UIDVALIDITY, mark = HIGHESTMODSEQ).
protocol ServerStore: AnyObject {
    /// Where the store is, for messages (`host:port`).
    var endpoint: String { get }

    // MARK: The listing

    /// The folder per-folder calls apply to now (nil: none).
    var openFolder: MailboxName? { get }
    /// Whether `open(_:since:)` reports the changes since a saved mark (IMAP: QRESYNC, or CONDSTORE with
    /// two more commands). Without it the core lists every message (`listAll`).
    func reportsChangesSince(in folder: MailboxName) -> Bool
    /// Whether the listing's `vanished` names only what went after the mark (IMAP: QRESYNC), so an empty
    /// one means nothing did, and the core may judge a folder from its state header alone (no record
    /// read). Without it `vanished` may also name ids gone long before, and only the records say which
    /// are news.
    func knowsVanishedSince(in folder: MailboxName) -> Bool
    /// Whether a message keeps its id when it moves between folders (Gmail mode's views: the id is the UID
    /// in All Mail). Then a server move is found by the id alone (`MoveDetector`), and new messages' keys
    /// and bodies are not fetched ahead in `prepare` (one may be a move, found only once every folder is
    /// listed; and the one mailbox stays selected, so the fetch in `finish` costs no second SELECT).
    var idsSpanFolders: Bool { get }
    /// Whether `folder` is one of those whose messages share ids (where `idsSpanFolders`: Gmail mode's views,
    /// not Trash and Spam, whose UIDs are their own). A move between two that share is found by id, any
    /// other by key.
    func sharesIDs(_ folder: MailboxName) -> Bool
    /// Whether a message can leave `folder` and come back to it under a new id with its bytes unchanged
    /// (Gmail's views but Drafts: trashed and restored), so a pair whose id vanished there and a new id of
    /// the same key are one message (`MoveDetector`, `PreparedFolder.repair`). Elsewhere the same key in the
    /// same folder may be other bytes (a draft saved again at its size under its Message-ID).
    func returnsUnderNewID(_ folder: MailboxName) -> Bool
    /// Maildir letters this store never stores, whatever the folder's PERMANENTFLAGS (Gmail mode: T, since
    /// `\Deleted` there would expunge past Trash): kept local, like keywords a server refuses.
    var neverStored: MaildirFlags { get }
    /// Opens a folder; with `since`, the listing holds what changed and vanished after that mark.
    func open(_ folder: MailboxName, since: ListingMark?) throws -> ServerListing
    /// `open` in two halves, so the core can load its state and scan the Maildir while the server
    /// prepares its answer; the second half is `PendingListing.finish`. Nothing else may go over the
    /// store between the halves.
    func beginOpen(_ folder: MailboxName, since: ListingMark?) throws -> PendingListing
    /// Every message of the open folder with its flags, streamed (never held as a list).
    func listAll(_ each: (MessageInfo) throws -> Void) throws
    /// The ids of the open folder's messages at or above `first`.
    func ids(from first: UInt32) throws -> [UInt32]
    /// The ids of the open folder's messages that arrived before `day` (IMAP: INTERNALDATE, by the date
    /// alone): those outside a window starting that day (`SyncWindow`).
    func ids(arrivedBefore day: InternalDate) throws -> UIDSet

    // MARK: Transfers

    /// The keys (`MessageKeys`: Message-ID and wire size) of messages of the open folder; an ID-less one
    /// whose size is in `hashingSizes` is read whole to hash it, the others have no key.
    func keys(of ids: [UInt32], hashingSizes: Set<Int>) throws -> [UInt32: MessageKey]
    /// The wire sizes of messages of the open folder (IMAP: RFC822.SIZE).
    func sizes(of ids: [UInt32]) throws -> [UInt32: Int]
    /// The header sections of messages of the open folder, as the server sends them (placeholders,
    /// `max-size`).
    func headers(of ids: [UInt32]) throws -> [UInt32: [UInt8]]
    /// The bodies of messages of the open folder, streamed in wire form (CRLF).
    func bodies(of ids: [UInt32], _ each: (BodyEvent) throws -> Void) throws
    /// The most messages one `bodies(of:)` call is asked for (the core asks chunk by chunk, the newest
    /// first): IMAP's is one UID FETCH's (`PreparedFolder.fetchChunk`); a store that overlaps its own
    /// requests (JMAP: `Blob/get` batches, several in flight) does better with more at once.
    var bodyChunk: Int { get }
    /// Uploads a message of `size` wire bytes into `folder`: `body` hands them to the sink it is given,
    /// chunk by chunk. Returns the message's epoch and id when the server names them (IMAP: APPENDUID),
    /// else nil (the core finds it by key).
    func upload(
        to folder: MailboxName, flags: [Flag], date: InternalDate?, size: Int,
        body: @escaping (_ sink: ([UInt8]) throws -> Void) throws -> Void
    ) throws -> (uidValidity: UInt32, uid: UInt32)?

    // MARK: Changes

    /// Flag changes in the open folder, each a set of ids and what to add or remove, sent together.
    func setFlags(_ changes: [(uids: UIDSet, action: StoreAction)]) throws -> OwnChanges
    /// Deletes messages of the open folder.
    func delete(_ ids: UIDSet) throws -> OwnChanges
    /// Whether `move` names the moved messages' new ids (IMAP: UIDPLUS's COPYUID). Without it the
    /// destination's listing, taken before, would not hold them, and the core does not move.
    var movesNameNewIDs: Bool { get }
    /// Moves messages of the open folder into `folder`; returns old → new ids where the server says.
    func move(_ ids: UIDSet, to folder: MailboxName) throws -> (
        pairs: [(source: UInt32, destination: UInt32)], changes: OwnChanges
    )

    /// Whether `claim` can claim messages of the folder `listing` reports: mod-sequences kept, and ids
    /// that a move replaces (a move that keeps its id, a label change in Gmail mode, makes no copy).
    func canClaim(_ listing: ServerListing) -> Bool
    /// Claims messages of the open folder before moving them, so that of two devices moving one message
    /// at once only one does (`IMAPConnection.claim`): each claim a flag change under the folder's change
    /// mark as `listing` reported it. Only where `canClaim`. Returns the ids lost to a change since.
    func claim(_ claims: [(id: UInt32, action: StoreAction)], since listing: ServerListing) throws -> (
        lost: Set<UInt32>, changes: OwnChanges
    )

    // MARK: Folders

    func createFolder(_ folder: MailboxName) throws
    func deleteFolder(_ folder: MailboxName) throws
}

/// What opening a folder reports: its identity epoch, next id, message count, change mark, the flags it
/// can keep, and (since a mark) the changed and vanished messages.
typealias ServerListing = SelectedMailbox
/// The saved identity epoch and change mark a listing reports changes since.
typealias ListingMark = QResyncParameters
/// An `open` in flight; `finish` reads the listing.
struct PendingListing {
    let finish: () throws -> ServerListing
}

/// One step of a streamed body download. Per message: `messageStart`, then at most one body as
/// `bodyStart`, `bytes`…, `bodyEnd`, then `messageEnd` with the message's id (0: the server named none;
/// the body is not its message).
/// A mailbox selected again during a run shows another UIDVALIDITY than when the run opened it: the run's
/// ids for it now name other messages, so nothing more is done with them; the next run starts over.
extension IMAPError {
    static func epochMoved(server: String, _ mailbox: MailboxName) -> IMAPError {
        IMAPError(server: server, .unexpected("UIDVALIDITY of \(mailbox) changed during the run; it will be handled next run"))
    }
}

enum BodyEvent {
    case messageStart
    case bodyStart
    case bytes([UInt8])
    case bodyEnd
    /// `thread`: Gmail's X-GM-THRID when the store asked for it (Gmail mode), kept in the file's name.
    case messageEnd(id: UInt32, thread: UInt64? = nil)
}

extension ServerStore {
    var bodyChunk: Int { PreparedFolder.fetchChunk }
}
