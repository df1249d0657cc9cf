import Testing
@testable import SyncEngine

/// The placement rule, table-driven: where a message in several mailboxes is stored, and what a local move,
/// deletion, tag or flag change asks of the server (Gmail: archiving is having no placing label; JMAP: an
/// archive mailbox).
@Suite struct PlacementTests {
    typealias M = Placement.ServerMailbox

    struct PlaceCase: CustomTestStringConvertible, Sendable {
        var name: String
        var mailboxes: Set<M>
        var policy = Placement.Policy()
        var folder: Placement.Folder?
        var tags: Set<String> = []
        var flagged = false
        var reason: Placement.Reason
        var testDescription: String { name }
    }

    static let all = Placement.Policy(syncTrash: true, syncJunk: true)

    static let placeCases: [PlaceCase] = [
        PlaceCase(name: "archived: All Mail only", mailboxes: [], folder: .archive, reason: .archived),
        PlaceCase(name: "inbox", mailboxes: [.inbox], folder: .inbox, reason: .inbox),
        PlaceCase(
            name: "inbox with a label, important and starred", mailboxes: [.inbox, .user("Work"), .important, .flagged],
            folder: .inbox, tags: ["Work", "important"], flagged: true, reason: .inbox),
        PlaceCase(name: "sent", mailboxes: [.sent], folder: .sent, reason: .sent),
        PlaceCase(
            name: "sent to oneself: inbox wins, sent is a tag", mailboxes: [.inbox, .sent], folder: .inbox, tags: ["sent"], reason: .inbox),
        PlaceCase(name: "a draft in the inbox", mailboxes: [.drafts, .inbox], folder: .drafts, tags: ["inbox"], reason: .draft),
        PlaceCase(name: "trash not synced", mailboxes: [.trash, .user("Work")], folder: nil, reason: .trashOff),
        PlaceCase(
            name: "trash keeps its labels as tags", mailboxes: [.trash, .user("Work")], policy: all, folder: .trash, tags: ["Work"],
            reason: .trash),
        PlaceCase(name: "junk not synced", mailboxes: [.junk, .inbox], folder: nil, reason: .junkOff),
        PlaceCase(name: "junk", mailboxes: [.junk, .inbox], policy: all, folder: .junk, tags: ["inbox"], reason: .junk),
        PlaceCase(name: "trash wins over junk", mailboxes: [.trash, .junk], policy: all, folder: .trash, tags: ["spam"], reason: .trash),
        PlaceCase(name: "JMAP archive mailbox", mailboxes: [.archive, .user("a/b")], folder: .archive, tags: ["a/b"], reason: .archive),
        PlaceCase(name: "inbox wins over archive", mailboxes: [.archive, .inbox], folder: .inbox, tags: ["archive"], reason: .inbox),
        PlaceCase(
            name: "labels only, hierarchy kept", mailboxes: [.user("Lists/dev"), .user("Work")], folder: .archive,
            tags: ["Lists/dev", "Work"], reason: .archived),
        PlaceCase(
            name: "a user label named like a role tag stays apart", mailboxes: [.user("Inbox"), .user("sent")], folder: .archive,
            tags: ["label/Inbox", "label/sent"], reason: .archived)
    ]

    @Test(arguments: placeCases)
    func place(_ c: PlaceCase) {
        let p = Placement.place(c.mailboxes, policy: c.policy)
        #expect(p == Placement.Placed(folder: c.folder, tags: c.folder == nil ? [] : c.tags, flagged: c.flagged, reason: c.reason))
    }

    /// Gmail's model loses nothing: for every set of roles and labels, the folder, tags and flag a message is
    /// placed with name exactly its labels again.
    @Test func gmailPlacementNamesTheLabelsBack() {
        let roles: [M] = [
            .inbox, .sent, .drafts, .junk, .trash, .important, .flagged, .user("Work"), .user("Inbox"), .user("a/b"), .user("label/inbox")
        ]
        for bits in 0..<(1 << roles.count) {
            let set = Set(roles.indices.filter { bits & (1 << $0) != 0 }.map { roles[$0] })
            let p = Placement.place(set, policy: Self.all)
            var back = Set(p.tags.map(Placement.mailbox(ofTag:)))
            if let f = p.folder, let m = Placement.mailbox(of: f, archiveIsMailbox: false) { back.insert(m) }
            if p.flagged { back.insert(.flagged) }
            #expect(back == set, "\(set) placed as \(p)")
        }
    }

    struct ChangeCase: CustomTestStringConvertible, Sendable {
        var name: String
        var server: Set<M>
        var to: @Sendable (Placement.Placed) -> Placement.Placed
        var archiveIsMailbox = false
        var add: Set<M> = []
        var remove: Set<M> = []
        var testDescription: String { name }
    }

    static func moved(_ f: Placement.Folder?) -> @Sendable (Placement.Placed) -> Placement.Placed {
        {
            var p = $0; p.folder = f; return p
        }
    }
    static func tagged(add: Set<String> = [], remove: Set<String> = []) -> @Sendable (Placement.Placed) -> Placement.Placed {
        {
            var p = $0; p.tags = p.tags.union(add).subtracting(remove); return p
        }
    }

    static let changeCases: [ChangeCase] = [
        ChangeCase(name: "INBOX to Archive removes Inbox", server: [.inbox, .user("Work")], to: moved(.archive), remove: [.inbox]),
        ChangeCase(name: "Archive to INBOX adds it", server: [.user("Work")], to: moved(.inbox), add: [.inbox]),
        ChangeCase(name: "a deletion is a move to Trash", server: [.inbox], to: moved(.trash), add: [.trash], remove: [.inbox]),
        ChangeCase(name: "out of Trash again", server: [.trash], to: moved(.inbox), add: [.inbox], remove: [.trash]),
        ChangeCase(name: "tag +work is the label", server: [.inbox], to: tagged(add: ["work"]), add: [.user("work")]),
        ChangeCase(
            name: "tag -Work removes the label only", server: [.user("Work")], to: tagged(remove: ["Work"]), remove: [.user("Work")]),
        ChangeCase(name: "tag +important", server: [.inbox], to: tagged(add: ["important"]), add: [.important]),
        ChangeCase(
            name: "flagged is Starred", server: [.inbox],
            to: {
                var p = $0; p.flagged = true; return p
            }, add: [.flagged]),
        ChangeCase(name: "nothing changed", server: [.inbox, .user("Work")], to: { $0 }),
        ChangeCase(name: "a label the server already dropped", server: [.inbox], to: tagged(remove: ["Work"])),
        ChangeCase(name: "a label the server already has", server: [.inbox, .user("Work")], to: tagged(add: ["Work"])),
        ChangeCase(
            name: "JMAP: INBOX to Archive files it in the archive mailbox", server: [.inbox], to: moved(.archive), archiveIsMailbox: true,
            add: [.archive], remove: [.inbox]),
        ChangeCase(
            name: "JMAP: the last tag removed leaves it in the archive mailbox, not in none", server: [.user("Work")],
            to: tagged(remove: ["Work"]), archiveIsMailbox: true, add: [.archive], remove: [.user("Work")]),
        ChangeCase(name: "a placement that stores nothing asks nothing", server: [.inbox, .user("Work")], to: moved(nil))
    ]

    @Test(arguments: changeCases)
    func change(_ c: ChangeCase) {
        let old = Placement.place(c.server, policy: Self.all)
        let change = Placement.change(server: c.server, from: old, to: c.to(old), archiveIsMailbox: c.archiveIsMailbox)
        #expect(change == Placement.MailboxChange(add: c.add, remove: c.remove))
    }
}
