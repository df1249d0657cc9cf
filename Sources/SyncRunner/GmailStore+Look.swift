import IMAPClient
import IMAPCodec
import SyncState
import SyncEngine

/// The run's look at All Mail (`GmailStore`): taken once, before any view is listed, and every view cut
/// from it.
extension GmailStore {
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
    func listWhole(_ look: inout Look) throws {
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
    func lookAtAllMail() throws -> Look {
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
    func searched(_ look: inout Look) throws {
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
    func selectAllMail() throws {
        guard imap.selectedMailbox != allMail else { return }
        let again = try imap.select(allMail)
        if let look, again.uidValidity != look.selected.uidValidity {
            throw IMAPError.epochMoved(server: endpoint, allMail)
        }
    }
}
