import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import MoCore

/// The checker for an account synced in Gmail mode (docs/gmail.md), written from that page and not from
/// the sync code: every message of `[Gmail]/All Mail` must be in exactly one of the folders INBOX, Sent,
/// Drafts, Archive (the first of `\Draft`, `\Inbox`, `\Sent` it has, else Archive), once, with the same
/// bytes and flags, and with each of its other labels as the tag the page names (a user label by its
/// name, `\Important` as `important`, a placing label that lost as `inbox`, `sent`, `draft`; `\Starred` is
/// the `\Flagged` flag). Tags are compared as the keywords the Maildir keeps them as (`TagVocabulary`,
/// the one mapping of tags to keywords). Trash and Spam, when `gmail-folders` syncs them, are each a folder
/// of that name holding exactly their mailbox's messages, with the same bytes and flags, and with their user
/// labels and `\Important` as tags.
extension SyncChecker {
    static let gmailViews: [(folder: String, label: String?)] = [
        ("Drafts", "\\Draft"), ("INBOX", "\\Inbox"), ("Sent", "\\Sent"), ("Archive", nil)
    ]

    static func checkGmail(_ imap: IMAPConnection, account: Account, maildir: String, vocabulary: TagVocabulary) throws -> Report {
        var report = Report()
        guard let allMail = try imap.list().first(where: { $0.isSelectable && $0.attributes.contains(.all) })?.mailbox else {
            report.problems.append("Gmail mode: the server lists no \\All mailbox")
            return report
        }
        var remote: [String] = []
        for m in try serverBodies(imap, allMail, labels: true) {
            let labels = m.labels.map { String(decoding: $0, as: UTF8.self) }
            let has = { (l: String) in labels.contains { $0.lowercased() == l.lowercased() } }
            let view = gmailViews.first { $0.label.map(has) ?? true }!
            var names = m.flags.compactMap(flagName)
            for label in labels where label.lowercased() != view.label?.lowercased() {
                if let tag = gmailTag(label) { names.append(vocabulary.keyword(forTag: tag).lowercased()) }
            }
            remote.append(view.folder + " " + m.hash + " [" + Set(names).sorted().joined(separator: " ") + "]")
        }
        // Trash and Spam, when `gmail-folders` syncs them: each a folder of the same name, its messages with
        // their flags, and their user labels and `\Important` as tags.
        let roles: [GmailFolder: MailboxAttribute] = [.trash: .trash, .spam: .junk]
        let boxes = try imap.list().filter(\.isSelectable)
        var folders = gmailViews.map(\.folder)
        for own in account.sync.gmailFolders {
            guard let mailbox = boxes.first(where: { $0.attributes.contains(roles[own]!) })?.mailbox else { continue }
            folders.append(own.rawValue)
            for m in try serverBodies(imap, mailbox, labels: true) {
                var names = m.flags.compactMap(flagName)
                for bytes in m.labels {
                    let label = String(decoding: bytes, as: UTF8.self)
                    guard !label.hasPrefix("\\") || label.lowercased() == "\\important", let tag = gmailTag(label) else { continue }
                    names.append(vocabulary.keyword(forTag: tag).lowercased())
                }
                remote.append(own.rawValue + " " + m.hash + " [" + Set(names).sorted().joined(separator: " ") + "]")
            }
        }
        let local = try viewMessages(folders, account: account, maildir: maildir, into: &report)
        compare(folder: "Gmail mode", remote: remote, local: local, into: &report.problems)
        return report
    }

    /// The local messages of the folders a store's views are (Gmail mode, JMAP), each prefixed with its
    /// folder's name, counted per folder in `report`.
    static func viewMessages(_ folders: [String], account: Account, maildir: String, into report: inout Report) throws -> [String] {
        var local: [String] = []
        let mapper = FolderNameMapper(layout: account.layout)
        for folder in folders {
            guard let path = try? mapper.localPath(forMailbox: folder, delimiter: "/").path,
                let absolute = FolderNameMapper.absolutePath(root: maildir, relative: path)
            else { continue }
            let messages = try localMessages(absolute).map { folder + " " + $0 }
            report.folders[folder] = messages.count
            local += messages
        }
        return local
    }

    /// The tag docs/gmail.md names for a label that did not place the message; nil for none.
    static func gmailTag(_ label: String) -> String? {
        let roles = ["\\inbox": "inbox", "\\sent": "sent", "\\draft": "draft", "\\important": "important"]
        if label.hasPrefix("\\") { return roles[label.lowercased()] }
        let name = (try? ModifiedUTF7.decode(label)) ?? label
        let reserved = ["inbox", "sent", "draft", "archive", "spam", "important"].contains(name.lowercased()) || name.hasPrefix("label/")
        return reserved ? "label/" + name : name
    }
}
