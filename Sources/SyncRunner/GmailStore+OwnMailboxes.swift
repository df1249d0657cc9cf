import IMAPClient
import IMAPCodec
import SyncEngine

/// Gmail mode's Trash and Spam (`gmail-folders`): mailboxes outside All Mail, each synced as a folder of its
/// own whose ids are its UIDs (`GmailStore.ownMailboxes`). Every call on one is the connection's own, the
/// mailbox selected again when a view's call selected All Mail in between, except that a message's user
/// labels and `\Important` are its tags there too, as in the views (Gmail keeps a trashed message's labels):
/// its flags are listed with X-GM-LABELS, and a tag change is a label change. A move between one and a view
/// is a UID MOVE whose new ids the server names: COPYUID into Trash or Spam; into a view, the message's UID
/// in All Mail, found by its X-GM-MSGID (asked before the move, which takes the old UIDs away).
extension GmailStore {
    /// Opens Trash or Spam as any IMAP mailbox (CONDSTORE, the expunges by `UID SEARCH`), remembering its
    /// UIDVALIDITY; the changed messages' labels are asked in one more FETCH, for their tags.
    func openOwnMailbox(_ folder: MailboxName, since: ListingMark?) throws -> ServerListing {
        var listing = try imap.open(folder, since: since)
        openFolder = folder
        if let known = ownValidity[folder], listing.uidValidity != known {
            throw IMAPError.epochMoved(server: endpoint, folder)
        }
        ownValidity[folder] = listing.uidValidity
        let uids = listing.changed.map(\.uid).filter { $0 != 0 }
        guard !uids.isEmpty else { return listing }
        var labels: [UInt32: [[UInt8]]] = [:]
        for m in try imap.fetchInfo(UIDSet(uids: uids), items: [.uid, .gmailLabels]).messages { labels[m.uid] = m.gmail.labels }
        for i in listing.changed.indices where listing.changed[i].flags != nil {
            listing.changed[i].flags = tagged(listing.changed[i].flags ?? [], labels[listing.changed[i].uid] ?? [])
        }
        return listing
    }

    /// Every message of the open own mailbox with its flags and, as tags, its labels.
    func listOwnMailbox(_ each: (MessageInfo) throws -> Void) throws {
        let connection = try ownMailbox()
        var collector = MessageInfoCollector()
        try withoutActuallyEscaping(each) { each in
            try connection.fetch(UIDSet(1...UIDSet.star), items: [.uid, .flags, .gmailLabels]) { [self] event in
                guard var m = collector.feed(event), m.uid != 0 else { return }
                m.flags = tagged(m.flags ?? [], m.gmail.labels ?? [])
                try each(m)
            }
        }
    }

    /// APPEND into Trash or Spam; its tags become labels there.
    func uploadToOwnMailbox(
        _ folder: MailboxName, flags: [Flag], date: InternalDate?, size: Int,
        body: @escaping (_ sink: ([UInt8]) throws -> Void) throws -> Void
    ) throws -> (uidValidity: UInt32, uid: UInt32)? {
        let (plain, labels) = GmailLabels.split(flags, vocabulary: vocabulary)
        let appended = try imap.upload(to: folder, flags: plain, date: date, size: size, body: body)
        if let appended, !labels.isEmpty {
            if imap.selectedMailbox != folder { _ = try imap.select(folder) }
            try storeLabels([.uidStoreGmailLabels(UIDSet(appended.uid), .add, labels)])
        }
        return appended
    }

    /// A message of Trash or Spam as its folder shows it: its flags, and a tag for each user label and for
    /// `\Important` (the labels that place a message in a view, and Trash and Spam themselves, are none).
    func tagged(_ flags: [Flag], _ labels: [[UInt8]]) -> [Flag] {
        let tags = labels.filter { label in
            switch GmailLabels.mailbox(ofLabel: label) {
            case .user?, .important?: true
            default: false
            }
        }
        return GmailLabels.view(labels: tags, flags: flags, vocabulary: vocabulary).flags
    }

    /// The connection with the open own mailbox selected, again when a view's call selected All Mail; its
    /// UIDVALIDITY must not have moved since it was opened.
    func ownMailbox() throws -> IMAPConnection {
        guard let folder = openFolder, imap.selectedMailbox != folder else { return imap }
        let again = try imap.select(folder)
        if let known = ownValidity[folder], again.uidValidity != known {
            throw IMAPError.epochMoved(server: endpoint, folder)
        }
        return imap
    }

    /// A move with Trash or Spam at one end:
    ///
    /// | from → to            | on Gmail                                              | new ids            |
    /// |----------------------|-------------------------------------------------------|--------------------|
    /// | a view → Trash, Spam | UID MOVE from All Mail (out of All Mail and its views) | COPYUID            |
    /// | Trash, Spam → a view | UID MOVE into the view's mailbox (All Mail: Archive)   | All Mail's, by X-GM-MSGID |
    /// | Trash ↔ Spam         | UID MOVE                                              | COPYUID            |
    func moveAcross(_ ids: UIDSet, to folder: MailboxName) throws -> (pairs: [(source: UInt32, destination: UInt32)], changes: OwnChanges) {
        guard inOwnMailbox else {
            try selectAllMail()
            madeChanges = true
            let moved = try imap.move(ids, to: folder)
            for uid in ids.elements { look?.ownView[uid] = .some(nil) }
            return (moved.pairs, OwnChanges())
        }
        let connection = try ownMailbox()
        guard let view = Placement.Folder.view(named: folder) else { return try connection.move(ids, to: folder) }
        guard let target = uploadTargets[view] else {
            throw IMAPError(server: endpoint, .unexpected("\(folder) is not a Gmail-mode folder"))
        }
        let named = try connection.fetchInfo(ids, items: [.uid, .gmailMessageID]).messages
        madeChanges = true
        let moved = try connection.move(ids, to: target)
        try selectAllMail()
        var pairs: [(source: UInt32, destination: UInt32)] = []
        for m in named where m.uid != 0 {
            guard let id = m.gmail.messageID, let uid = try imap.uids(matching: .gmailMessageID(id)).elements.first else {
                // Moved, but not found in All Mail: this run stops before the file could be uploaded as a second
                // copy; the next one finds the move (the message gone from one folder, new in the other, one key).
                throw IMAPError(
                    server: endpoint,
                    .unexpected("a message moved to \(target) was not found in \(allMail) by its X-GM-MSGID; the next run pairs it"))
            }
            look?.ownView[uid] = view
            pairs.append((m.uid, uid))
        }
        return (pairs, moved.changes)
    }
}
