/// One model for a message that is in several mailboxes at once (Gmail's labels, JMAP's `mailboxIds`):
/// where it lives in the Maildir, which tags stand for its other mailboxes, and what a local move or tag
/// change does to its mailboxes on the server. Pure; the stores (Gmail mode, JMAP) translate their own
/// names to `ServerMailbox` and back. docs/store-seam.md has the model, docs/gmail.md every neomutt action.
///
/// A message is stored **once**, in the first folder of this table whose mailbox it is in:
///
/// | the message is in   | folder  | reason           | note                                               |
/// |---------------------|---------|------------------|----------------------------------------------------|
/// | trash               | Trash   | `.trash`         | not stored when Trash is not synced (`.trashOff`)  |
/// | junk                | Junk    | `.junk`          | not stored when Junk is not synced (`.junkOff`)    |
/// | drafts              | Drafts  | `.draft`         |                                                    |
/// | inbox               | INBOX   | `.inbox`         |                                                    |
/// | sent                | Sent    | `.sent`          |                                                    |
/// | archive             | Archive | `.archive`       | JMAP's archive role                                |
/// | none of these       | Archive | `.archived`      | Gmail's archived mail: All Mail, no placing label  |
///
/// Every other mailbox it is in becomes a tag: a user mailbox (label) by its name, `/` hierarchy kept; a
/// role mailbox that lost to an earlier row by the role's tag (`inbox`, `sent`, `draft`, `archive`, `spam`);
/// `important` as the tag `important`. `flagged` (Gmail's `\Starred`) is the flagged letter, not a tag. A
/// user mailbox whose name is a role's tag (any case), or starts with `label/`, is tagged `label/NAME`, so
/// no two mailboxes share a tag.
///
/// The way back is a difference, never a rebuild: `change(server:from:to:archiveIsMailbox:)` compares the placement a message
/// had with the one the user made (a move, a deletion to Trash, a tag or flag edit) and adds or removes
/// only the mailboxes that difference names. So a mailbox the model does not show (a JMAP message that is
/// only in a user mailbox, placed in Archive) is never added or removed by accident, and removing a tag
/// never deletes a message: at worst it leaves the message in All Mail (Gmail) or in its folder's mailbox.
public enum Placement {
    /// What a server mailbox is to the placement.
    public enum ServerMailbox: Hashable, Sendable {
        case inbox, sent, drafts, trash, junk, archive, important, flagged
        /// A user mailbox or label, by its full name (`Lists/dev`).
        case user(String)
    }

    /// The Maildir folders a placed message can live in.
    public enum Folder: String, Sendable, CaseIterable {
        case inbox = "INBOX", sent = "Sent", drafts = "Drafts", trash = "Trash", junk = "Junk", archive = "Archive"
    }

    /// Why a message went where it did (one per row of the table).
    public enum Reason: Sendable, Equatable {
        case trash, trashOff, junk, junkOff, draft, inbox, sent, archive, archived
    }

    /// Which optional folders the account syncs (config; Gmail's default: neither).
    public struct Policy: Sendable, Equatable {
        public var syncTrash: Bool
        public var syncJunk: Bool
        public init(syncTrash: Bool = false, syncJunk: Bool = false) {
            self.syncTrash = syncTrash
            self.syncJunk = syncJunk
        }
    }

    /// Where a message lives locally and what it carries there. `folder == nil`: not stored.
    public struct Placed: Sendable, Equatable {
        public var folder: Folder?
        public var tags: Set<String>
        public var flagged: Bool
        public var reason: Reason
        public init(folder: Folder?, tags: Set<String>, flagged: Bool, reason: Reason) {
            self.folder = folder
            self.tags = tags
            self.flagged = flagged
            self.reason = reason
        }
    }

    /// What a local change asks of the server: mailboxes to add the message to and to take it out of.
    public struct MailboxChange: Sendable, Equatable {
        public var add: Set<ServerMailbox> = []
        public var remove: Set<ServerMailbox> = []
        public var isEmpty: Bool { add.isEmpty && remove.isEmpty }
    }

    /// The placing rows in order: the role, its folder, its reason.
    static let rows: [(ServerMailbox, Folder, Reason)] = [
        (.trash, .trash, .trash), (.junk, .junk, .junk), (.drafts, .drafts, .draft), (.inbox, .inbox, .inbox),
        (.sent, .sent, .sent), (.archive, .archive, .archive)
    ]

    /// The folders of the placing rows, in the table's order (the first whose mailbox a message is in wins).
    public static var placingFolders: [Folder] { rows.map(\.1) }

    /// The tag a role mailbox becomes when another row placed the message.
    static let roleTags: [ServerMailbox: String] = [
        .inbox: "inbox", .sent: "sent", .drafts: "draft", .archive: "archive", .junk: "spam", .important: "important"
    ]

    public static func place(_ mailboxes: Set<ServerMailbox>, policy: Policy = Policy()) -> Placed {
        let flagged = mailboxes.contains(.flagged)
        guard let (role, folder, reason) = rows.first(where: { mailboxes.contains($0.0) }) else {
            return Placed(folder: .archive, tags: tags(of: mailboxes, placedBy: nil), flagged: flagged, reason: .archived)
        }
        if folder == .trash && !policy.syncTrash { return Placed(folder: nil, tags: [], flagged: flagged, reason: .trashOff) }
        if folder == .junk && !policy.syncJunk { return Placed(folder: nil, tags: [], flagged: flagged, reason: .junkOff) }
        return Placed(folder: folder, tags: tags(of: mailboxes, placedBy: role), flagged: flagged, reason: reason)
    }

    static func tags(of mailboxes: Set<ServerMailbox>, placedBy role: ServerMailbox?) -> Set<String> {
        var tags: Set<String> = []
        for m in mailboxes where m != role {
            if let t = tag(of: m) { tags.insert(t) }
        }
        return tags
    }

    /// The tag a mailbox shows as; nil for the ones shown otherwise (`flagged`: the letter; `trash`: the
    /// folder, which always wins).
    public static func tag(of mailbox: ServerMailbox) -> String? {
        switch mailbox {
        case .user(let name): reserved(name) ? "label/" + name : name
        case .flagged, .trash: nil
        default: roleTags[mailbox]
        }
    }

    /// A user label whose tag needs the `label/` mark: a role tag's name, or a name that starts with the
    /// mark itself (so `label/inbox` the label and `inbox` the label never share a tag).
    static func reserved(_ name: String) -> Bool { roleTags.values.contains(name.lowercased()) || name.hasPrefix("label/") }

    /// The mailbox a tag stands for (the inverse of `tag(of:)`).
    public static func mailbox(ofTag tag: String) -> ServerMailbox {
        if let role = roleTags.first(where: { $0.value == tag })?.key { return role }
        if tag.hasPrefix("label/"), reserved(String(tag.dropFirst(6))) { return .user(String(tag.dropFirst(6))) }
        // A tag `label/x` whose x needs no mark was written by the user, not by `tag(of:)`: the label itself.
        return .user(tag)
    }

    /// The mailbox a folder stands for on this kind of store; nil for Archive where archiving is having no
    /// placing mailbox (Gmail), rather than being in an archive mailbox (JMAP, `archiveIsMailbox`).
    public static func mailbox(of folder: Folder, archiveIsMailbox: Bool) -> ServerMailbox? {
        switch folder {
        case .inbox: .inbox
        case .sent: .sent
        case .drafts: .drafts
        case .trash: .trash
        case .junk: .junk
        case .archive: archiveIsMailbox ? .archive : nil
        }
    }

    /// What the user's change from `old` to `new` (as the Maildir shows them) asks of a message that is in
    /// `server`'s mailboxes now.
    ///
    /// | what changed         | add                         | remove                       |
    /// |----------------------|-----------------------------|------------------------------|
    /// | folder X → Y         | Y's mailbox (if it has one) | X's mailbox (if it has one)  |
    /// | tag added / removed  | the tag's mailbox           | the tag's mailbox            |
    /// | flagged set / unset  | `flagged`                   | `flagged`                    |
    ///
    /// A move out of Trash or Junk also takes the message out of that mailbox; a deletion is a move to
    /// Trash. Only what the server lacks is added and only what it has is removed. Where being in no mailbox
    /// would mean being deleted (`archiveIsMailbox`: JMAP), a change that would empty the set also adds the
    /// mailbox of the folder the message is in (`flagged` and `important` are keywords there, not mailboxes):
    /// removing the last tag of a message in Archive files it in the archive mailbox.
    public static func change(
        server: Set<ServerMailbox>, from old: Placed, to new: Placed, archiveIsMailbox: Bool
    ) -> MailboxChange {
        // A placement that stores nothing is the server's view (Trash or Junk not synced), never a change
        // the user made: nothing to ask. (A deletion is a move to Trash: `new.folder == .trash`.)
        guard new.folder != nil else { return MailboxChange() }
        var add: Set<ServerMailbox> = []
        var remove: Set<ServerMailbox> = []
        if old.folder != new.folder {
            if let m = new.folder.flatMap({ mailbox(of: $0, archiveIsMailbox: archiveIsMailbox) }) { add.insert(m) }
            if let m = old.folder.flatMap({ mailbox(of: $0, archiveIsMailbox: archiveIsMailbox) }) { remove.insert(m) }
        }
        for t in new.tags.subtracting(old.tags) { add.insert(mailbox(ofTag: t)) }
        for t in old.tags.subtracting(new.tags) { remove.insert(mailbox(ofTag: t)) }
        if new.flagged != old.flagged { if new.flagged { add.insert(.flagged) } else { remove.insert(.flagged) } }
        var c = MailboxChange(add: add.subtracting(remove).subtracting(server), remove: remove.subtracting(add).intersection(server))
        if archiveIsMailbox, server.union(c.add).subtracting(c.remove).subtracting([.flagged, .important]).isEmpty,
            let home = new.folder.flatMap({ mailbox(of: $0, archiveIsMailbox: true) })
        {
            c.add.insert(home)
        }
        return c
    }
}
