import IMAPClient
import IMAPCodec
import Synchronization
import Maildir
import SyncEngine
import SyncState

/// One mailbox to sync with one Maildir folder: what the pair is (mailbox, folder, state store, policy,
/// how the run reports), fixed for the run. What a run finds and does in it is a `PreparedFolder`'s
/// (`prepare` lists both sides into it, `finish` plans and performs the plan with the journal written ahead
/// of every act that creates something; it owns the folder's summary).
///
/// Journal discipline: a fetch is announced (`F uid unique`, fsynced; one fsync per batch of bodies, see
/// `PreparedFolder.deliver`) before its file is linked into the folder, and an upload (`A unique …`, fsynced)
/// before APPEND; after a crash the next run settles these intents by looking (`CrashSettling`: is the file
/// there? did a message with that key appear on the server?) instead of acting twice. Flag changes and
/// deletions are journaled after the act: they are idempotent and a rerun recomputes them from the 3-way
/// merge, so a lost entry costs nothing.
final class FolderSync {
    let mailbox: MailboxName
    /// False for a mailbox a dry run would create: its plan is a new mailbox's, and nothing is selected.
    let onServer: Bool
    let folder: MaildirFolder
    let store: FolderStateStore
    let policy: SyncPolicy
    let dryRun: Bool
    /// The folder as the run's lines name it ("INBOX", or its path under the Maildir root).
    let displayName: String
    let verbose: (String) -> Void
    /// A dry run's planned actions.
    let planned: (String) -> Void
    /// Shared by the run's folders: one holds its whole table at a time.
    let wholeLoads: WholeLoads
    /// An earlier release left keywords beyond the 26 letters on the server only (its `unsynced-keywords`
    /// says so for this mailbox): the server is listed whole once, so they come into `mo-keywords`.
    var listKeywordsWhole = false
    /// The folder's date window (`max-age`), or the one the last run applied; nil: neither.
    var window: FolderWindow?
    /// New messages larger than this arrive as placeholders (`max-size`); nil: none.
    var maxSize: Int?
    /// The account's daily download allowance, shared by the run's folders; nil: none.
    var allowance: DownloadAllowance?

    init(
        mailbox: MailboxName, onServer: Bool = true, folder: MaildirFolder, store: FolderStateStore,
        policy: SyncPolicy, dryRun: Bool, displayName: String, verbose: @escaping (String) -> Void,
        planned: @escaping (String) -> Void = { _ in }, wholeLoads: WholeLoads = WholeLoads()
    ) {
        self.mailbox = mailbox
        self.onServer = onServer
        self.folder = folder
        self.store = store
        self.policy = policy
        self.dryRun = dryRun
        self.displayName = displayName
        self.verbose = verbose
        self.planned = planned
        self.wholeLoads = wholeLoads
    }

    /// The mailbox as the files of the state directory name it (decoded, as the `roles` file does).
    var recordedName: String { mailbox.decoded ?? String(decoding: mailbox.wire, as: UTF8.self) }
}

/// Lets one folder at a time hold every record of a large folder (`PreparedFolder.listWhole`, from the load
/// to `keepOnlyUnsettled`, on the QRESYNC path whose SELECT goes out before the load; and a commit, which
/// may compact). A second connection
/// listing alongside (`ListingHelper`) still waits for the server at the same time as the first (its
/// SELECT is out before it waits here), but the run's peak memory stays one large folder's table, not
/// two; the loads are CPU work the two cores share anyway. Nothing inside waits for the other thread.
final class WholeLoads: Sendable {
    private let lock = Mutex(())
    func one(_ body: () throws -> Void) rethrows {
        try lock.withLock { _ in try body() }
    }
}
