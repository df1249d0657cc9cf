import IMAPClient
import IMAPCodec
import Maildir
import SyncEngine
import SyncState

/// One mailbox to sync with one Maildir folder: what the pair is (mailbox, folder, state store, policy)
/// and what the run reports of it (`summary`). `prepare` lists both sides into a `PreparedFolder`, whose
/// `finish` plans and performs the plan with the journal written ahead of every act that creates something.
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
    let verbose: (String) -> Void
    /// A dry run's planned actions.
    let planned: (String) -> Void
    /// What the sync did, filled in by both phases; a phase's failure reports it with the notes so far.
    var summary: FolderSummary

    init(
        mailbox: MailboxName, onServer: Bool = true, folder: MaildirFolder, store: FolderStateStore,
        policy: SyncPolicy, dryRun: Bool, displayName: String, verbose: @escaping (String) -> Void,
        planned: @escaping (String) -> Void = { _ in }
    ) {
        self.mailbox = mailbox
        self.onServer = onServer
        self.folder = folder
        self.store = store
        self.policy = policy
        self.dryRun = dryRun
        self.verbose = verbose
        self.planned = planned
        self.summary = FolderSummary(folder: displayName)
    }

    /// The mailbox as the files of the state directory name it (decoded, as the `roles` file does).
    var recordedName: String { mailbox.decoded ?? String(decoding: mailbox.wire, as: UTF8.self) }

    /// First half: load state, select, list both sides, settle interrupted intents. Leaves the mailbox
    /// selected. Nothing is planned yet, so an account-level pass can first find messages moved between
    /// folders (see `MoveDetector`). `imap`: the connection the listing goes over (the account's first).
    ///
    /// | what the state header, the directories and a QRESYNC SELECT show | path                                   | result       |
    /// |-------------------------------------------------------------------|----------------------------------------|--------------|
    /// | nothing changed since the last commit                             | nothing read (`quickCheck`)            | `.unchanged` |
    /// | only the server changed, a small change                           | its records only (`listServerChanges`) | `.listed`    |
    /// | anything else                                                     | the full path (`listWhole`)            | `.listed`    |
    /// | (a dry run's mailbox it would create)                             | the folder only (`listLocalOnly`)      | `.listed`    |
    func prepare(on imap: IMAPConnection) throws -> FolderPreparation {
        let listing = PreparedFolder(self)
        guard onServer else {
            try listing.listLocalOnly()
            return .listed(listing)
        }
        var header: FolderState?
        switch try listing.quickCheck(on: imap) {
        case .unchanged:
            verbose("  unchanged since the last run: nothing read")
            return .unchanged
        case .serverOnly(let h, let s):
            if try listing.listServerChanges(header: h, selected: s, on: imap) { return .listed(listing) }
            header = h
        case .full(let h):
            header = h
        }
        try listing.listWhole(header: header, on: imap)
        return .listed(listing)
    }
}

/// What `FolderSync.prepare` found.
enum FolderPreparation {
    /// Neither side changed since the last commit: nothing to finish (the summary says nothing).
    case unchanged
    /// Both sides listed, intents of an interrupted run settled: `finish` plans and performs.
    case listed(PreparedFolder)
}
