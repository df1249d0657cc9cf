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
    /// All Mail as the last run that changed nothing saw it (`AccountFiles.gmailMark`), and whether it is
    /// so still: then nothing arrived, changed or left, and each view reports no change without a search.
    let lastMark: GmailMark?
    private(set) var unchangedSinceMark = false
    /// Whether this run changed anything on the server (then it leaves no mark).
    private(set) var madeChanges = false
    private(set) var openFolder: MailboxName?
    private var look: Look?
    /// Lines for the account's summary: label changes Gmail refused.
    private(set) var notes: [String] = []

    init(
        imap: IMAPConnection, allMail: MailboxName, uploadTargets: [Placement.Folder: MailboxName], vocabulary: TagVocabulary,
        trash: MailboxName?, deletion: GmailDeletion = .trash, lastMark: GmailMark? = nil
    ) {
        self.lastMark = lastMark
        self.imap = imap
        self.allMail = allMail
        self.uploadTargets = uploadTargets
        self.vocabulary = vocabulary
        self.trash = trash
        self.deletion = deletion
    }

    /// The run's look at All Mail.
    struct Look {
        var selected: SelectedMailbox
        /// Each view's messages as the SEARCHes place them (the first of `\Draft`, `\Inbox`, `\Sent`, else
        /// Archive): asked only when a listing needs them (`searched`), never when All Mail is as the mark
        /// says.
        var searchedViews: [Placement.Folder: Set<UInt32>] = [:]
        var searched = false
        /// The view of each message changed since the oldest view's mark (their FETCH, newer than the
        /// searches); and of each message this run uploaded, moved or deleted (nil: none).
        var changedView: [UInt32: Placement.Folder?] = [:]
        var ownView: [UInt32: Placement.Folder?] = [:]
        /// The messages changed since the oldest view's mark, their flags as their views show them (tags
        /// as keywords), and that mark (one FETCH, in `begin`).
        var changed: [MessageInfo] = []
        var changedSince: UInt64?
        /// Some view had no saved mark, or one of another UIDVALIDITY: every view is listed whole this run,
        /// from one listing (`whole`).
        var listedWhole = false
        /// Every message's view and flags, once asked (`listAll`).
        var whole: [UInt32: (folder: Placement.Folder?, flags: [Flag])]?

        /// The view's messages: the searches' placement, overridden by the changed messages' labels.
        func members(of view: Placement.Folder) -> Set<UInt32> {
            // A run cut from the searches keeps them, even when a view later lists every message's flags
            // (`listAll`): that later FETCH may see a message in another view than the others did.
            var found = listedWhole ? Set((whole ?? [:]).filter { $0.value.folder == view }.keys) : searchedMembers(of: view)
            for (uid, placed) in ownView { if placed == view { found.insert(uid) } else { found.remove(uid) } }
            return found
        }

        /// The searches' placement, overridden by the changed messages' labels.
        private func searchedMembers(of view: Placement.Folder) -> Set<UInt32> {
            var found = searchedViews[view] ?? []
            for (uid, placed) in changedView { if placed == view { found.insert(uid) } else { found.remove(uid) } }
            return found
        }
    }

    var endpoint: String { imap.endpoint }
    /// False in a run that lists every view whole (`begin`).
    var reportsChangesSince: Bool { !(look?.listedWhole ?? false) }
    /// The views' vanished messages are every UID below UIDNEXT not in the view (old gaps and other views'),
    /// except when All Mail is as the mark says (`begin` looked): then nothing vanished since.
    var knowsVanishedSince: Bool { unchangedSinceMark }
    /// A move between views keeps the id.
    var movesNameNewIDs: Bool { true }
    var idsSpanFolders: Bool { true }
    /// `\Deleted` is never stored (`GmailLabels.split`): a deletion is the file's removal.
    var neverStored: MaildirFlags { .trashed }

    // MARK: The listing

    /// A view cut from the run's look (`begin`): its messages, and since a mark the changed ones placed in it
    /// and, as vanished, every UID below UIDNEXT not in it.
    func open(_ folder: MailboxName, since: ListingMark?) throws -> ServerListing {
        guard let view = GmailLabels.view(named: folder) else {
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
        guard let name = openFolder, let view = GmailLabels.view(named: name), var look else { return }
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
        guard let name = openFolder, let view = GmailLabels.view(named: name), var look else { return [] }
        if !look.listedWhole { try searched(&look) }
        self.look = look
        return look.members(of: view).filter { $0 >= first }.sorted()
    }

    // MARK: Transfers (in All Mail, as on any IMAP server)

    func keys(of ids: [UInt32], hashingSizes: Set<Int>) throws -> [UInt32: MessageKey] {
        try selectAllMail()
        return try imap.keys(of: ids, hashingSizes: hashingSizes)
    }

    func bodies(of ids: [UInt32], _ each: (BodyEvent) throws -> Void) throws {
        try selectAllMail()
        try imap.bodies(of: ids, gmailThreads: true, each)
    }

    /// APPEND into the view's mailbox; a message not appended to All Mail itself is found there by its
    /// X-GM-MSGID. Its tags become labels.
    func upload(
        to folder: MailboxName, flags: [Flag], date: InternalDate?, size: Int,
        body: @escaping (_ sink: ([UInt8]) throws -> Void) throws -> Void
    ) throws -> (uidValidity: UInt32, uid: UInt32)? {
        guard let view = GmailLabels.view(named: folder), let target = uploadTargets[view] else {
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

    /// Flags as a FLAGS STORE, tags as an X-GM-LABELS STORE, all pipelined.
    func setFlags(_ changes: [(uids: UIDSet, action: StoreAction)]) throws -> OwnChanges {
        try selectAllMail()
        var plain: [(uids: UIDSet, action: StoreAction)] = []
        var labelled: [Command] = []
        for (uids, action) in changes {
            let (flags, labels) = GmailLabels.split(action.flags, vocabulary: vocabulary)
            if !flags.isEmpty { plain.append((uids, StoreAction(action.mode, flags, silent: true))) }
            if !labels.isEmpty { labelled.append(.uidStoreGmailLabels(uids, action.mode, labels)) }
        }
        madeChanges = madeChanges || !plain.isEmpty || !labelled.isEmpty
        let own = try imap.storeSilently(plain)
        try storeLabels(labelled)
        return own
    }

    /// A deletion (`gmail-delete`): to Trash, Gmail keeping them there, out of All Mail, for 30 days (a UID
    /// MOVE from All Mail to the `\Trash` mailbox, else `\Trash` added as a label); or, in INBOX, Sent and
    /// Drafts with `archive`, only the view's label removed (the message stays in All Mail: Archive).
    func delete(_ ids: UIDSet) throws -> OwnChanges {
        try selectAllMail()
        madeChanges = true
        let view = openFolder.flatMap(GmailLabels.view(named:))
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

    /// A move between views: labels added and removed (`GmailLabels.move`); the ids stay.
    func move(_ ids: UIDSet, to folder: MailboxName) throws -> (pairs: [(source: UInt32, destination: UInt32)], changes: OwnChanges) {
        guard let name = openFolder, let source = GmailLabels.view(named: name), let destination = GmailLabels.view(named: folder) else {
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
    private func storeLabels(_ commands: [Command]) throws -> Bool {
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

    // MARK: All Mail

    /// Takes the run's look at All Mail before any view is opened, given the views' saved marks (nil: a view
    /// with none, or one not committed), so every view is cut from one snapshot:
    ///
    /// | All Mail and the marks                                       | the look                         |
    /// |--------------------------------------------------------------|----------------------------------|
    /// | as the account's mark says, every view's mark the same       | the SELECT alone (`unchangedSinceMark`) |
    /// | a view without a mark, or of another UIDVALIDITY             | every message listed (`listedWhole`) |
    /// | otherwise                                                    | the searches, and one FETCH of the changes since the oldest mark |
    func begin(views marks: [ListingMark?]) throws {
        var look = try lookAtAllMail()
        let validity = look.selected.uidValidity
        if marks.contains(where: { $0 == nil || $0!.uidValidity != validity }) {
            unchangedSinceMark = false
            look.listedWhole = true
            try listWhole(&look)
            self.look = look
            return
        }
        let oldest = marks.compactMap { $0?.modSeq }.min { $0.value < $1.value }
        if unchangedSinceMark, marks.allSatisfy({ $0?.modSeq.value == lastMark?.highestModSeq }) { return }
        unchangedSinceMark = false
        try searched(&look)
        if let oldest, let highest = look.selected.highestModSeq, !look.selected.noModSeq, highest > oldest {
            let messages = try imap.fetchInfo(UIDSet(1...UIDSet.star), items: [.uid, .flags, .gmailLabels], changedSince: oldest).messages
            for var m in messages where m.uid != 0 {
                let placed = GmailLabels.view(labels: m.gmail.labels ?? [], flags: m.flags ?? [], vocabulary: vocabulary)
                look.changedView[m.uid] = placed.folder
                m.flags = placed.flags
                look.changed.append(m)
            }
            look.changedSince = oldest.value
        }
        self.look = look
    }

    /// Every message of All Mail with its view and flags.
    private func listWhole(_ look: inout Look) throws {
        try selectAllMail()
        var whole: [UInt32: (folder: Placement.Folder?, flags: [Flag])] = [:]
        var collector = MessageInfoCollector()
        try imap.fetch(UIDSet(1...UIDSet.star), items: [.uid, .flags, .gmailLabels]) { [vocabulary] event in
            guard let m = collector.feed(event), m.uid != 0 else { return }
            whole[m.uid] = GmailLabels.view(labels: m.gmail.labels ?? [], flags: m.flags ?? [], vocabulary: vocabulary)
        }
        look.whole = whole
    }

    /// The mark this run leaves (`AccountFiles.markGmailMode`): All Mail as its look saw it and each view's
    /// count; nil when the run changed anything on the server (its own changes are not in that look).
    func mark() throws -> GmailMark? {
        guard !madeChanges, var look else { return nil }
        if unchangedSinceMark { return lastMark }
        if !look.listedWhole { try searched(&look) }
        self.look = look
        let s = look.selected
        guard let next = s.uidNext, let highest = s.highestModSeq, !s.noModSeq else { return nil }
        var counts: [String: UInt32] = [:]
        for view in AccountSync.gmailViews { counts[view.rawValue] = UInt32(look.members(of: view).count) }
        return GmailMark(uidValidity: s.uidValidity, uidNext: next, highestModSeq: highest.value, exists: s.exists, counts: counts)
    }

    /// The run's look at All Mail, taken once: its SELECT.
    private func lookAtAllMail() throws -> Look {
        if let look {
            try selectAllMail()
            return look
        }
        let selected = try imap.select(allMail)
        let look = Look(selected: selected)
        if let mark = lastMark, let next = selected.uidNext, let highest = selected.highestModSeq, !selected.noModSeq {
            unchangedSinceMark =
                mark.uidValidity == selected.uidValidity && mark.uidNext == next && mark.highestModSeq == highest.value
                && mark.exists == selected.exists
        }
        self.look = look
        return look
    }

    /// The placing labels' SEARCHes, once a run, when a listing needs the views' members.
    private func searched(_ look: inout Look) throws {
        guard !look.searched else { return }
        try selectAllMail()
        func search(_ key: SearchKey) throws -> Set<UInt32> {
            look.selected.exists == 0 ? [] : Set(try imap.uids(matching: key).elements)
        }
        let inbox = try search(.gmailLabel(Array("\\Inbox".utf8))), sent = try search(.gmailLabel(Array("\\Sent".utf8)))
        let drafts = try search(.gmailLabel(Array("\\Draft".utf8))), all = try search(.all)
        look.searchedViews = [
            .drafts: drafts, .inbox: inbox.subtracting(drafts), .sent: sent.subtracting(drafts).subtracting(inbox),
            .archive: all.subtracting(drafts).subtracting(inbox).subtracting(sent)
        ]
        look.searched = true
        self.look = look
    }

    /// All Mail selected again when another mailbox was (an upload's); its UIDVALIDITY must not have moved.
    private func selectAllMail() throws {
        guard imap.selectedMailbox != allMail else { return }
        let again = try imap.select(allMail)
        if let look, again.uidValidity != look.selected.uidValidity {
            throw IMAPError(server: endpoint, .unexpected("UIDVALIDITY of \(allMail) changed during the run; it will be handled next run"))
        }
    }
}
