/// Which mailbox plays which SPECIAL-USE role (RFC 6154): the one rule, for the `roles` file mo-sync
/// records and for the action journal's Sent copies. A role is the first selectable mailbox the LIST marks
/// with its attribute; no attribute, no role (a mailbox merely named "Sent" is the journal's own fallback).
public enum MailboxRole: String, Sendable, CaseIterable {
    case sent, drafts, trash, archive, junk, all, flagged

    public var attribute: MailboxAttribute {
        switch self {
        case .sent: .sent
        case .drafts: .drafts
        case .trash: .trash
        case .archive: .archive
        case .junk: .junk
        case .all: .all
        case .flagged: .flagged
        }
    }

    /// The role's mailbox in a LIST, or nil.
    public func mailbox(in boxes: [ListResponse]) -> MailboxName? {
        boxes.first { $0.isSelectable && $0.attributes.contains(attribute) }?.mailbox
    }

    /// Every role the LIST gives, in `allCases` order.
    public static func roles(in boxes: [ListResponse]) -> [(role: MailboxRole, mailbox: MailboxName)] {
        allCases.compactMap { role in role.mailbox(in: boxes).map { (role, $0) } }
    }
}
