import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import MoCore
import SyncEngine
import SyncState

/// Gmail mode's `ServerStore` (docs/gmail.md): one list of messages, `[Gmail]/All Mail`, shown as the views
/// INBOX, Sent, Drafts and Archive, each message in exactly one (`Placement`), its other labels as tags.
///
/// Invariants:
/// - A message's id in every view is its UID in All Mail, which Gmail keeps while the message is in All
///   Mail (a label change, an archive, a star never changes it). So a message that moves between views
///   (a label added or removed on either side) keeps its id, and the core carries it as a move
///   (`MoveDetector`), never downloading it again. The epoch of every view is All Mail's UIDVALIDITY.
/// - The views of one run come from one look at All Mail (`Look`): the SELECT, one `UID SEARCH` per placing
///   label, and the messages changed since the mark, so a message is in exactly one view of the run even
///   when Gmail changes it meanwhile. A message changed since the mark is placed by the labels its FETCH
///   shows (newer than the searches, which go first).
/// - Nothing is ever expunged from All Mail: a deletion moves the message to Trash (Gmail keeps it 30
///   days) or removes a label (`gmail-delete`), a move between views and a tag change add and remove labels.
///
/// The cost of a run that changed nothing: the SELECT of All Mail, when it shows All Mail as the last clean
/// run left it (`GmailMark`); else four `UID SEARCH RETURN (ALL)` more, and one CHANGEDSINCE FETCH when
/// HIGHESTMODSEQ moved, whatever the number of messages.
final class GmailStore: ServerStore {
    let imap: IMAPConnection
    let allMail: MailboxName
    /// Where a new local message of each view is uploaded: INBOX, the `\Sent` and `\Drafts` mailboxes,
    /// All Mail (archived).
    let uploadTargets: [Placement.Folder: MailboxName]
    let vocabulary: TagVocabulary
    /// Gmail's Trash mailbox (a deletion is a UID MOVE there, Google's way of deleting), and what a deletion
    /// in INBOX, Sent or Drafts does (`gmail-delete`).
    let trash: MailboxName?
    let deletion: GmailDeletion
    /// Gmail's mailboxes outside All Mail synced as folders of their own (`gmail-folders`: Trash, Spam), by
    /// local folder name. Their ids are their own UIDs (`sharesIDs`), and every call on them is the
    /// connection's own (`IMAPStore`), except a move to or from a view (`GmailStore+OwnMailboxes.swift`).
    let ownFolders: [(name: String, mailbox: MailboxName)]
    let ownMailboxes: Set<MailboxName>
    /// Each own mailbox's UIDVALIDITY as this run opened it.
    var ownValidity: [MailboxName: UInt32] = [:]
    /// All Mail as the last run that changed nothing saw it (`AccountFiles.gmailMark`), and whether it is
    /// so still: then nothing arrived, changed or left, and each view reports no change without a search.
    let lastMark: GmailMark?
    var unchangedSinceMark = false
    /// Whether this run changed anything on the server (then it leaves no mark).
    var madeChanges = false
    var openFolder: MailboxName?
    var look: Look?
    /// Lines for the account's summary: label changes Gmail refused.
    private(set) var notes: [String] = []

    init(
        imap: IMAPConnection, allMail: MailboxName, uploadTargets: [Placement.Folder: MailboxName], vocabulary: TagVocabulary,
        trash: MailboxName?, deletion: GmailDeletion = .trash, lastMark: GmailMark? = nil,
        ownFolders: [(name: String, mailbox: MailboxName)] = []
    ) {
        self.ownFolders = ownFolders
        self.ownMailboxes = Set(ownFolders.map(\.mailbox))
        self.lastMark = lastMark
        self.imap = imap
        self.allMail = allMail
        self.uploadTargets = uploadTargets
        self.vocabulary = vocabulary
        self.trash = trash
        self.deletion = deletion
    }

    var endpoint: String { imap.endpoint }
    /// False for a view in a run that lists every view whole (`begin`).
    func reportsChangesSince(in folder: MailboxName) -> Bool {
        ownMailboxes.contains(folder) ? imap.reportsChangesSince(in: folder) : !(look?.listedWhole ?? false)
    }
    /// The views' vanished messages are every UID below UIDNEXT not in the view (old gaps and other views'),
    /// except when All Mail is as the mark says (`begin` looked): then nothing vanished since.
    func knowsVanishedSince(in folder: MailboxName) -> Bool {
        ownMailboxes.contains(folder) ? imap.knowsVanishedSince(in: folder) : unchangedSinceMark
    }
    /// A move between views keeps the id; one to or from Trash or Spam is named by COPYUID.
    var movesNameNewIDs: Bool { true }
    var idsSpanFolders: Bool { true }
    func sharesIDs(_ folder: MailboxName) -> Bool { !ownMailboxes.contains(folder) }
    /// A view's message trashed and restored is back in All Mail under a new UID, the same bytes; not a
    /// draft (Gmail saves an edited draft as a new message).
    func returnsUnderNewID(_ folder: MailboxName) -> Bool {
        !ownMailboxes.contains(folder) && Placement.Folder.view(named: folder).map { $0 != .drafts } ?? false
    }
    /// The open folder is one of `ownMailboxes`.
    var inOwnMailbox: Bool { openFolder.map(ownMailboxes.contains) ?? false }
    /// `\Deleted` is never stored (`GmailLabels.split`): a deletion is the file's removal.
    var neverStored: MaildirFlags { .trashed }

    // MARK: The listing

    /// A view cut from the run's look (`begin`): its messages, and since a mark the changed ones placed in it
    /// and, as vanished, every UID below UIDNEXT not in it.
    func open(_ folder: MailboxName, since: ListingMark?) throws -> ServerListing {
        if ownMailboxes.contains(folder) { return try openOwnMailbox(folder, since: since) }
        guard let view = Placement.Folder.view(named: folder) else {
            throw IMAPError(server: endpoint, .unexpected("\(folder) is not a Gmail-mode folder"))
        }
        var look = try self.lookAtAllMail()
        var s = look.selected
        s.mailbox = folder
        s.changed = []
        s.vanished = UIDSet([])
        openFolder = folder
        if unchangedSinceMark, let count = lastMark?.counts[view.rawValue] {
            s.exists = count
            return s
        }
        if !look.listedWhole { try searched(&look) }
        let members = look.members(of: view)
        s.exists = UInt32(members.count)
        if let since, since.uidValidity == s.uidValidity, !look.listedWhole {
            if let next = s.uidNext, let highest = s.highestModSeq, !s.noModSeq, highest >= since.modSeq,
                look.changedSince.map({ $0 <= since.modSeq.value }) ?? (highest == since.modSeq)
            {
                s.changed = look.changed.filter { look.changedView[$0.uid] == view }
                if next > 1 { s.vanished = UIDSet(uids: Array(members)).complement(within: 1...next - 1) }
            } else {
                s.changesUnknown = true
            }
        }
        self.look = look
        return s
    }

    func beginOpen(_ folder: MailboxName, since: ListingMark?) throws -> PendingListing {
        let listing = try open(folder, since: since)
        return PendingListing { listing }
    }

    /// Every message of the open view with its flags (All Mail listed whole once a run).
    func listAll(_ each: (MessageInfo) throws -> Void) throws {
        if inOwnMailbox { return try listOwnMailbox(each) }
        guard let name = openFolder, let view = Placement.Folder.view(named: name), var look else { return }
        if look.whole == nil { try listWhole(&look) }
        if !look.listedWhole { try searched(&look) }
        self.look = look
        let members = look.members(of: view)
        for (uid, entry) in (look.whole ?? [:]).sorted(by: { $0.key < $1.key }) where members.contains(uid) {
            var m = MessageInfo(sequenceNumber: 0)
            m.uid = uid
            m.flags = entry.flags
            try each(m)
        }
    }

    func ids(from first: UInt32) throws -> [UInt32] {
        if inOwnMailbox { return try ownMailbox().ids(from: first) }
        guard let name = openFolder, let view = Placement.Folder.view(named: name), var look else { return [] }
        if !look.listedWhole { try searched(&look) }
        self.look = look
        return look.members(of: view).filter { $0 >= first }.sorted()
    }

    /// Asked of All Mail (a view's ids are its UIDs); the core asks only about ids it holds for the view.
    func ids(arrivedBefore day: InternalDate) throws -> UIDSet {
        if inOwnMailbox { return try ownMailbox().ids(arrivedBefore: day) }
        try selectAllMail()
        return try imap.ids(arrivedBefore: day)
    }

    // MARK: Transfers (in All Mail, as on any IMAP server)

    func keys(of ids: [UInt32], hashingSizes: Set<Int>) throws -> [UInt32: MessageKey] {
        if inOwnMailbox { return try ownMailbox().keys(of: ids, hashingSizes: hashingSizes) }
        try selectAllMail()
        return try imap.keys(of: ids, hashingSizes: hashingSizes)
    }

    func sizes(of ids: [UInt32]) throws -> [UInt32: Int] {
        if inOwnMailbox { return try ownMailbox().sizes(of: ids) }
        try selectAllMail()
        return try imap.sizes(of: ids)
    }

    func headers(of ids: [UInt32]) throws -> [UInt32: [UInt8]] {
        if inOwnMailbox { return try ownMailbox().headers(of: ids) }
        try selectAllMail()
        return try imap.headers(of: ids)
    }

    func bodies(of ids: [UInt32], _ each: (BodyEvent) throws -> Void) throws {
        if inOwnMailbox { return try ownMailbox().bodies(of: ids, gmailThreads: true, each) }
        try selectAllMail()
        try imap.bodies(of: ids, gmailThreads: true, each)
    }

    /// APPEND into the view's mailbox; a message not appended to All Mail itself is found there by its
    /// X-GM-MSGID. Its tags become labels.
    func upload(
        to folder: MailboxName, flags: [Flag], date: InternalDate?, size: Int,
        body: @escaping (_ sink: ([UInt8]) throws -> Void) throws -> Void
    ) throws -> (uidValidity: UInt32, uid: UInt32)? {
        if ownMailboxes.contains(folder) { return try uploadToOwnMailbox(folder, flags: flags, date: date, size: size, body: body) }
        guard let view = Placement.Folder.view(named: folder), let target = uploadTargets[view] else {
            throw IMAPError(server: endpoint, .unexpected("\(folder) is not a Gmail-mode folder"))
        }
        let (plain, labels) = GmailLabels.split(flags, vocabulary: vocabulary)
        madeChanges = true
        guard let appended = try imap.upload(to: target, flags: plain, date: date, size: size, body: body) else { return nil }
        var uid = appended.uid
        if target != allMail {
            _ = try imap.select(target, readOnly: true)
            let info = try imap.fetchInfo(UIDSet(appended.uid), items: [.uid, .gmailMessageID]).messages
            guard let id = info.first?.gmail.messageID else { return nil }
            try selectAllMail()
            guard let found = try imap.uids(matching: .gmailMessageID(id)).elements.first else { return nil }
            uid = found
        }
        try selectAllMail()
        if !labels.isEmpty { try imap.run(.uidStoreGmailLabels(UIDSet(uid), .add, labels)) }
        look?.ownView[uid] = view
        return (look?.selected.uidValidity ?? 0, uid)
    }

    // MARK: Changes

    /// Flags as a FLAGS STORE, tags as an X-GM-LABELS STORE, all pipelined; in All Mail, or in the open own
    /// mailbox (Trash, Spam: outside All Mail, so no change to its mark).
    func setFlags(_ changes: [(uids: UIDSet, action: StoreAction)]) throws -> OwnChanges {
        let own = inOwnMailbox
        if own { _ = try ownMailbox() } else { try selectAllMail() }
        var plain: [(uids: UIDSet, action: StoreAction)] = []
        var labelled: [Command] = []
        for (uids, action) in changes {
            let (flags, labels) = GmailLabels.split(action.flags, vocabulary: vocabulary)
            if !flags.isEmpty { plain.append((uids, StoreAction(action.mode, flags, silent: true))) }
            if !labels.isEmpty { labelled.append(.uidStoreGmailLabels(uids, action.mode, labels)) }
        }
        if !own { madeChanges = madeChanges || !plain.isEmpty || !labelled.isEmpty }
        let changed = try imap.storeSilently(plain)
        try storeLabels(labelled)
        return changed
    }

    /// A deletion (`gmail-delete`): to Trash, Gmail keeping them there, out of All Mail, for 30 days (a UID
    /// MOVE from All Mail to the `\Trash` mailbox, else `\Trash` added as a label); or, in INBOX, Sent and
    /// Drafts with `archive`, only the view's label removed (the message stays in All Mail: Archive).
    func delete(_ ids: UIDSet) throws -> OwnChanges {
        if inOwnMailbox { return try ownMailbox().delete(ids) }  // Trash or Spam: for good, as "Delete forever"
        try selectAllMail()
        madeChanges = true
        let view = openFolder.flatMap(Placement.Folder.view(named:))
        if deletion == .archive, let view, let home = Placement.mailbox(of: view, archiveIsMailbox: false),
            let label = GmailLabels.label(of: home)
        {
            try storeLabels([.uidStoreGmailLabels(ids, .remove, [label])])
            for uid in ids.elements { look?.ownView[uid] = .archive }
            return OwnChanges()
        }
        if let trash {
            _ = try imap.move(ids, to: trash)
        } else {
            try imap.run(.uidStoreGmailLabels(ids, .add, [Array("\\Trash".utf8)]))
        }
        for uid in ids.elements { look?.ownView[uid] = .some(nil) }
        return OwnChanges()
    }

    /// No claims: a move between views is a label change, which two devices make alike without a copy.
    func canClaim(_ listing: ServerListing) -> Bool { false }
    func claim(_ claims: [(id: UInt32, action: StoreAction)], since listing: ServerListing) throws -> (
        lost: Set<UInt32>, changes: OwnChanges
    ) { ([], OwnChanges()) }

    /// A move between views: labels added and removed (`GmailLabels.move`); the ids stay.
    func move(_ ids: UIDSet, to folder: MailboxName) throws -> (pairs: [(source: UInt32, destination: UInt32)], changes: OwnChanges) {
        if inOwnMailbox || ownMailboxes.contains(folder) { return try moveAcross(ids, to: folder) }
        guard let name = openFolder, let source = Placement.Folder.view(named: name), let destination = Placement.Folder.view(named: folder)
        else {
            throw IMAPError(server: endpoint, .unexpected("\(folder) is not a Gmail-mode folder"))
        }
        try selectAllMail()
        madeChanges = true
        let (add, remove) = GmailLabels.move(from: source, to: destination)
        // The destination's label first: refused, the source's stays too, and the message is where it was.
        if try storeLabels(add.isEmpty ? [] : [.uidStoreGmailLabels(ids, .add, add)]), !remove.isEmpty {
            try storeLabels([.uidStoreGmailLabels(ids, .remove, remove)])
        }
        for uid in ids.elements { look?.ownView[uid] = destination }
        return (ids.elements.map { ($0, $0) }, OwnChanges())
    }

    /// Label STOREs, pipelined. One Gmail refuses (NO: a system label it keeps to itself, a name it will not
    /// take) is noted, not thrown, so the view's finish goes on: the message stays where Gmail keeps it, and
    /// the next run shows it there (a local move is moved back, a tag taken off).
    /// Returns whether Gmail took them all.
    @discardableResult
    func storeLabels(_ commands: [Command]) throws -> Bool {
        guard !commands.isEmpty else { return true }
        do {
            try imap.pipeline(commands)
            return true
        } catch let error as IMAPError {
            guard case .refused = error.reason else { throw error }
            notes.append("Gmail refused a label change (\(error.description)); the next sync shows the messages as Gmail keeps them")
            return false
        }
    }

    // MARK: Folders (the views are fixed)

    func createFolder(_ folder: MailboxName) throws {}
    func deleteFolder(_ folder: MailboxName) throws {
        throw IMAPError(server: endpoint, .unexpected("\(folder) is a Gmail-mode folder; it is not deleted"))
    }
}
