import IMAPClient
import IMAPCodec
import Maildir
import MoCore
import SyncEngine

/// Gmail's labels in the placement's words (`SyncEngine.Placement`), and back: what a message of All Mail
/// is in the Maildir (its view, its flags, its tags as keywords), and what a flag or tag change asked in a
/// view is on Gmail (a FLAGS STORE, an X-GM-LABELS STORE, or both). Pure.
///
/// | Gmail                         | placement mailbox | Maildir                                        |
/// |-------------------------------|-------------------|------------------------------------------------|
/// | `\Inbox` `\Sent` `\Draft`     | inbox sent drafts | the view INBOX, Sent, Drafts (else a tag)      |
/// | `\Trash` `\Spam`              | trash junk        | not in All Mail: not shown (Trash and Spam are not synced) |
/// | `\Important`                  | important         | the tag `important`                            |
/// | `\Starred`, the `\Flagged` flag| flagged          | the flagged letter F                           |
/// | another `\Name`               | —                 | nothing (Gmail's own, e.g. `\Muted`)           |
/// | a user label (modified UTF-7) | user(name)        | the tag `name` (decoded), `/` kept             |
/// | a keyword in FLAGS            | —                 | the keyword, as on any server                  |
///
/// A tag travels as a keyword of the Maildir (`TagVocabulary`: `work`, `to=20do` for "to do", `$label1`
/// for `important`). On the way back a keyword is a label when its tag names one (`Placement.mailbox
/// (ofTag:)`), except a `$` keyword that is no table name (`$Forwarded`, `$NotPhishing`): those are
/// Gmail's keywords, stored as such.
enum GmailLabels {
    static let system: [(label: String, mailbox: Placement.ServerMailbox)] = [
        ("\\Inbox", .inbox), ("\\Sent", .sent), ("\\Draft", .drafts), ("\\Trash", .trash), ("\\Spam", .junk),
        ("\\Important", .important), ("\\Starred", .flagged)
    ]

    /// The placement mailbox a label is; nil for a system label the model does not show.
    static func mailbox(ofLabel bytes: [UInt8]) -> Placement.ServerMailbox? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard bytes.first == UInt8(ascii: "\\") else { return .user((try? ModifiedUTF7.decode(text)) ?? text) }
        return system.first { $0.label.lowercased() == text.lowercased() }?.mailbox
    }

    /// The label a placement mailbox is on Gmail; nil for `archive` (no label: All Mail alone).
    static func label(of mailbox: Placement.ServerMailbox) -> [UInt8]? {
        if case .user(let name) = mailbox { return Array(ModifiedUTF7.encode(name).utf8) }
        return system.first { $0.mailbox == mailbox }.map { Array($0.label.utf8) }
    }

    /// A message of All Mail as a view shows it: the view it is placed in (nil: none, it is in Trash or
    /// Spam) and its flags there: FLAGS as Gmail has them, plus a keyword for each tag.
    static func view(labels: [[UInt8]], flags: [Flag], vocabulary: TagVocabulary) -> (folder: Placement.Folder?, flags: [Flag]) {
        var mailboxes = Set(labels.compactMap(mailbox(ofLabel:)))
        if flags.contains(.flagged) { mailboxes.insert(.flagged) }
        let placed = Placement.place(mailboxes)
        var out = flags
        var have = Set(flags.compactMap { if case .keyword(let k) = $0 { k.lowercased() } else { nil } })
        for tag in placed.tags.sorted() {
            let keyword = vocabulary.keyword(forTag: tag)
            if have.insert(keyword.lowercased()).inserted { out.append(.keyword(keyword)) }
        }
        return (placed.folder, out)
    }

    /// Flags asked of a view, split into those Gmail stores as flags and the labels the others are.
    static func split(_ flags: [Flag], vocabulary: TagVocabulary) -> (flags: [Flag], labels: [[UInt8]]) {
        var plain: [Flag] = [], labels: [[UInt8]] = []
        for f in flags {
            // `\Deleted` (the T letter) is not stored: on Gmail it would expunge the message past Trash and
            // past `gmail-delete`; a deletion is the file's removal.
            if f == .deleted { continue }
            guard case .keyword(let k) = f else {
                plain.append(f)
                continue
            }
            let tag = vocabulary.tag(forKeyword: k)
            let mailbox = Placement.mailbox(ofTag: tag)
            if k.hasPrefix("$"), case .user(let name) = mailbox, name == k {
                plain.append(f)  // Gmail's own keyword, not a label
            } else if let label = label(of: mailbox) {
                labels.append(label)
            }
        }
        return (plain, labels)
    }

    /// What a move from one view to another is on Gmail: the labels to add and to remove
    /// (`Placement.change`: INBOX → Archive removes `\Inbox`, Archive → INBOX adds it).
    static func move(from source: Placement.Folder, to destination: Placement.Folder) -> (add: [[UInt8]], remove: [[UInt8]]) {
        let home = Placement.mailbox(of: source, archiveIsMailbox: false)
        let c = Placement.change(
            server: Set([home].compactMap { $0 }),
            from: Placement.Placed(folder: source, tags: [], flagged: false, reason: .inbox),
            to: Placement.Placed(folder: destination, tags: [], flagged: false, reason: .inbox), archiveIsMailbox: false)
        return (c.add.compactMap(label(of:)).sorted { $0.lexicographicallyPrecedes($1) }, c.remove.compactMap(label(of:)))
    }
}
