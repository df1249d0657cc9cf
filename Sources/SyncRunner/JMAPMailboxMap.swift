import IMAPCodec
import JMAPClient
import Maildir
import MoCore
import SyncEngine

/// A JMAP account's mailboxes and keywords in the placement's words (`SyncEngine.Placement`, the model
/// Gmail mode shares), and back. Pure.
///
/// | JMAP                                              | placement mailbox | Maildir                              |
/// |---------------------------------------------------|-------------------|--------------------------------------|
/// | role `inbox` `sent` `drafts` `trash` `junk` `archive` | the role       | its folder (INBOX, Sent, …), else a tag |
/// | role `important`                                  | important         | the tag `important`                  |
/// | any other mailbox                                 | user(path)        | the tag `path`: names from the top along `parentId`, joined by `/` |
/// | keyword `$seen` `$flagged` `$answered` `$draft`   | —                 | the letters S F R D (IMAP's `\Seen` …) |
/// | keyword `$hasattachment`, `$hasnoattachment`      | —                 | nothing (Cyrus sets them itself)     |
/// | any other keyword                                 | —                 | the keyword, as on IMAP (`$forwarded` is P) |
///
/// The way back: a keyword asked of a message is a mailbox when its tag names a user mailbox the account
/// has, else a keyword. Of two mailboxes with one role, or one path, the first listed is the one.
struct JMAPMailboxMap: Sendable {
    let byID: [String: Placement.ServerMailbox]
    let idOf: [Placement.ServerMailbox: String]
    /// What the placement depends on (each mailbox's id, name, parent and role), hashed: another digest means
    /// the messages must be placed again. Not the Mailbox state, which moves with every message's arrival
    /// or reading (a mailbox's counts are its properties).
    let digest: String
    let boxes: [JMAPMailbox]

    init(_ boxes: [JMAPMailbox]) {
        self.boxes = boxes
        var hash = SHA256()
        for b in boxes.sorted(by: { $0.id < $1.id }) {
            hash.update(Array("\(b.id)\t\(b.name)\t\(b.parentID ?? "")\t\(b.role ?? "")\n".utf8))
        }
        digest = SHA256.hex(hash.finalize())
        var parents: [String: JMAPMailbox] = [:]
        for b in boxes { parents[b.id] = b }
        var byID: [String: Placement.ServerMailbox] = [:]
        var idOf: [Placement.ServerMailbox: String] = [:]
        for b in boxes {
            let mailbox = Self.mailbox(of: b, parents: parents)
            byID[b.id] = mailbox
            if idOf[mailbox] == nil { idOf[mailbox] = b.id }
        }
        self.byID = byID
        self.idOf = idOf
    }

    static let roles: [String: Placement.ServerMailbox] = [
        "inbox": .inbox, "sent": .sent, "drafts": .drafts, "trash": .trash, "junk": .junk, "archive": .archive,
        "important": .important
    ]

    /// A mailbox's place: its role, else its path (at most 64 levels up; a cycle stops there).
    static func mailbox(of box: JMAPMailbox, parents: [String: JMAPMailbox]) -> Placement.ServerMailbox {
        if let role = box.role.flatMap({ roles[$0.lowercased()] }) { return role }
        var names = [box.name]
        var up = box.parentID
        while let id = up, let parent = parents[id], names.count < 64 {
            names.append(parent.name)
            up = parent.parentID
        }
        return .user(names.reversed().joined(separator: "/"))
    }

    /// Keywords the server keeps by itself: never shown, never changed.
    static let serverOwn: Set<String> = ["$hasattachment", "$hasnoattachment"]

    /// An Email as the Maildir shows it: the folder it is placed in (nil: not stored) and its flags there.
    func view(_ email: JMAPEmail, vocabulary: TagVocabulary, policy: Placement.Policy) -> (folder: Placement.Folder?, flags: [Flag]) {
        var mailboxes = Set(email.mailboxIDs.compactMap { byID[$0] })
        var flags: [Flag] = []
        for keyword in email.keywords.sorted() {
            let k = keyword.lowercased()
            if Self.serverOwn.contains(k) { continue }
            if let system = Self.flag(ofKeyword: k) {
                flags.append(system)
                if system == .flagged { mailboxes.insert(.flagged) }
            } else {
                flags.append(.keyword(keyword))
            }
        }
        let placed = Placement.place(mailboxes, policy: policy)
        var have = Set(flags.compactMap { if case .keyword(let k) = $0 { k.lowercased() } else { nil } })
        for tag in placed.tags.sorted() {
            let keyword = vocabulary.keyword(forTag: tag)
            if have.insert(keyword.lowercased()).inserted { flags.append(.keyword(keyword)) }
        }
        return (placed.folder, flags)
    }

    /// IMAP's system flags as JMAP keywords (RFC 8621 §4.1.1).
    static func flag(ofKeyword k: String) -> Flag? {
        switch k {
        case "$seen": .seen
        case "$flagged": .flagged
        case "$answered": .answered
        case "$draft": .draft
        default: nil
        }
    }

    static func keyword(of flag: Flag) -> String? {
        switch flag {
        case .seen: "$seen"
        case .flagged: "$flagged"
        case .answered: "$answered"
        case .draft: "$draft"
        case .keyword(let k): k.lowercased()
        default: nil  // \Deleted: a deletion is the file's removal; \Recent and the others are not stored
        }
    }

    /// Flags asked of a message, as JMAP keywords and the user mailboxes its tags name.
    func split(_ flags: [Flag], vocabulary: TagVocabulary) -> (keywords: [String], mailboxIDs: [String]) {
        var keywords: [String] = [], boxes: [String] = []
        for f in flags {
            if case .keyword(let k) = f {
                let mailbox = Placement.mailbox(ofTag: vocabulary.tag(forKeyword: k))
                if mailbox != .flagged, let id = idOf[mailbox] {
                    boxes.append(id)
                    continue
                }
            }
            if let k = Self.keyword(of: f), !Self.serverOwn.contains(k) { keywords.append(k) }
        }
        return (keywords, boxes)
    }

    /// The mailbox a folder's new messages are imported into, and a move there adds.
    func mailboxID(of folder: Placement.Folder) -> String? {
        Placement.mailbox(of: folder, archiveIsMailbox: true).flatMap { idOf[$0] }
    }
}
