import JMAPClient
import Maildir
import MoConfig
import MoCore
import MoHTTP
import MoNet

/// The checker for a JMAP account, written from docs/jmap.md and not from the sync code: every Email must be
/// in exactly one of the folders INBOX, Sent, Drafts, Archive, Trash, Junk (the first of the roles trash,
/// junk, drafts, inbox, sent, archive its mailboxes have, else Archive), once, with the same bytes (SHA-256,
/// CRLF as LF) and with its keywords as letters and keywords (`$seen` S, `$flagged` F, `$answered` R,
/// `$draft` D, `$forwarded` P, others as themselves; `$hasattachment` and `$hasnoattachment` not shown), and
/// each of its other mailboxes as the tag the page names (a role that lost as `inbox`, `sent`, `draft`,
/// `archive`, `spam` or `important`; any other mailbox by its path along `parentId`, `label/PATH` when PATH is
/// one of those names). Tags are compared as the keywords the Maildir keeps them as (`TagVocabulary`).
extension SyncChecker {
    static let jmapViews: [(role: String, folder: String)] = [
        ("trash", "Trash"), ("junk", "Junk"), ("drafts", "Drafts"), ("inbox", "INBOX"), ("sent", "Sent"), ("archive", "Archive")
    ]
    static let jmapRoleTags = [
        "inbox": "inbox", "sent": "sent", "drafts": "draft", "archive": "archive", "junk": "spam", "important": "important"
    ]

    static func checkJMAP(_ config: JMAPConfig, account: Account, maildir: String, authorization: String, vocabulary: TagVocabulary) throws
        -> Report
    {
        guard let url = WebAddress(config.url) else { throw GenericError(.config, "account \(account.name): jmap.url is not usable") }
        let client = try JMAPClient(
            sessionURL: url, authorization: authorization, tls: TLSOptions(caFile: config.caFile), timeout: Double(config.timeout))
        defer { client.close() }
        let boxes = try client.mailboxes().mailboxes
        let byID = Dictionary(uniqueKeysWithValues: boxes.map { ($0.id, $0) })
        func path(_ b: JMAPMailbox) -> String {
            var names = [b.name]
            var up = b.parentID
            while let id = up, let parent = byID[id], names.count < 64 {
                names.append(parent.name)
                up = parent.parentID
            }
            return names.reversed().joined(separator: "/")
        }
        var remote: [String] = []
        let (_, ids) = try client.allEmailIDs()
        var emails: [(blob: String, boxes: [JMAPMailbox], keywords: [String])] = []
        _ = try client.get(ids, properties: ["id", "blobId", "mailboxIds", "keywords"]) { item in
            guard let blob = item["blobId"]?.stringValue, case .object = item["mailboxIds"] else { return }
            emails.append(
                (
                    blob, JMAPClient.trueKeys(item["mailboxIds"]).compactMap { byID[$0] },
                    JMAPClient.trueKeys(item["keywords"]).map { $0.lowercased() }
                ))
        }
        for e in emails {
            let roles = Set(e.boxes.compactMap { $0.role?.lowercased() })
            let view = jmapViews.first { roles.contains($0.role) }
            var names: [String] = []
            for k in e.keywords where k != "$hasattachment" && k != "$hasnoattachment" {
                names.append(["$seen": "\\seen", "$flagged": "\\flagged", "$answered": "\\answered", "$draft": "\\draft"][k] ?? k)
            }
            for b in e.boxes {
                let role = b.role?.lowercased()
                if let role, role == view?.role || role == "trash" { continue }
                let tag: String
                if let role, let t = jmapRoleTags[role] {
                    tag = t
                } else {
                    let p = path(b)
                    tag = jmapRoleTags.values.contains(p.lowercased()) || p.hasPrefix("label/") ? "label/" + p : p
                }
                names.append(vocabulary.keyword(forTag: tag).lowercased())
            }
            var hasher = SHA256()
            var lf = CRLFToLF()
            let found = try client.download(blobID: e.blob, maxBytes: 1 << 30) { bytes in
                var chunk: [UInt8] = []
                lf.convert(bytes, into: &chunk)
                hasher.update(chunk)
            }
            guard found else { continue }  // destroyed meanwhile
            var rest: [UInt8] = []
            lf.finish(into: &rest)
            hasher.update(rest)
            remote.append(
                (view?.folder ?? "Archive") + " " + hex(hasher.finalize()) + " [" + Set(names).sorted().joined(separator: " ") + "]")
        }
        var report = Report()
        let local = try viewMessages(jmapViews.map(\.folder), account: account, maildir: maildir, into: &report)
        compare(folder: "JMAP", remote: remote, local: local, into: &report.problems)
        return report
    }
}
