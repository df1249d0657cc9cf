/// A client command (RFC 3501 §6 and extensions). The tag is added by `CommandEncoder`; `DONE` (which ends IDLE
/// and has no tag) is `CommandEncoder.done`.
public enum Command: Sendable, Hashable {
    case capability
    case noop
    case logout
    case startTLS
    /// Username and password are sent as atoms, quoted strings or literals as their bytes require.
    case login(username: String, password: String)
    /// `AUTHENTICATE mech [initial-response]`. The initial response is raw (the encoder base64-encodes it); with
    /// SASL-IR it goes on the command line (`=` when empty), otherwise in a chunk sent after the server's `+`.
    case authenticate(mechanism: String, initialResponse: [UInt8]?)
    case enable([Capability])
    /// `LIST reference pattern [RETURN (...)]`. The pattern may contain `*` and `%`; it is mUTF-7 encoded.
    case list(reference: MailboxName, pattern: String, returning: [ListReturnOption] = [])
    case status(MailboxName, [StatusAttribute])
    case select(MailboxName, SelectParameter? = nil)
    case examine(MailboxName, SelectParameter? = nil)
    case create(MailboxName)
    case delete(MailboxName)
    /// `UID FETCH set (items) [(CHANGEDSINCE n [VANISHED])]` (RFC 7162).
    case uidFetch(UIDSet, [FetchItem], changedSince: ModSequence? = nil, vanished: Bool = false)
    /// `UID STORE set [(UNCHANGEDSINCE n)] [+|-]FLAGS[.SILENT] (flags)`.
    case uidStore(UIDSet, StoreAction, unchangedSince: ModSequence? = nil)
    /// Gmail: `UID STORE set ±X-GM-LABELS[.SILENT] (labels)`, each label its bytes (`\Inbox`, or a
    /// mailbox name in modified UTF-7). `.replace` sets the list.
    case uidStoreGmailLabels(UIDSet, StoreAction.Mode, [[UInt8]], silent: Bool = true)
    /// `APPEND mailbox [(flags)] [date] {size}`: the message itself is not part of the encoding; the caller
    /// streams exactly `messageSize` bytes where the `.messageBody` chunk says.
    case append(MailboxName, flags: [Flag] = [], date: InternalDate? = nil, messageSize: Int)
    case uidCopy(UIDSet, MailboxName)
    case uidMove(UIDSet, MailboxName)
    case expunge
    case uidExpunge(UIDSet)
    case idle
    case close
    case unselect
    /// `UID SEARCH [RETURN (ALL)] key`: with `returnAll`, the answer is one ESEARCH with the matches as a
    /// sequence set (RFC 4731), so a mailbox with few gaps answers in a few bytes.
    case uidSearch(SearchKey, returnAll: Bool = false)
    /// `NOTIFY SET event-groups` (RFC 5465); no groups is `NOTIFY NONE`.
    case notify([NotifyEventGroup])
}

/// One `(filter-mailboxes events)` group of NOTIFY SET (RFC 5465 §6). No events is `NONE`: nothing is reported for
/// those mailboxes.
public struct NotifyEventGroup: Sendable, Hashable {
    public var mailboxes: NotifyMailboxes
    public var events: [NotifyEvent]
    public init(_ mailboxes: NotifyMailboxes, _ events: [NotifyEvent]) {
        self.mailboxes = mailboxes
        self.events = events
    }
}

/// Which mailboxes a NOTIFY group covers (RFC 5465 §6.1).
public enum NotifyMailboxes: Sendable, Hashable {
    case selected, selectedDelayed, inboxes, personal, subscribed
    /// These mailboxes and all below them.
    case subtree([MailboxName])
    /// Exactly these mailboxes.
    case mailboxes([MailboxName])
}

/// NOTIFY events (RFC 5465 §5). The server refuses FlagChange without MessageNew and MessageExpunge.
public enum NotifyEvent: String, Sendable, Hashable, CaseIterable {
    case messageNew = "MessageNew", messageExpunge = "MessageExpunge", flagChange = "FlagChange"
    case annotationChange = "AnnotationChange", mailboxName = "MailboxName", subscriptionChange = "SubscriptionChange"
}

/// `RETURN` options of LIST (RFC 5258, RFC 6154, RFC 5819).
public enum ListReturnOption: Sendable, Hashable {
    case specialUse, subscribed, children
    case status([StatusAttribute])
}

/// STATUS data items.
public enum StatusAttribute: String, Sendable, Hashable, CaseIterable {
    case messages = "MESSAGES", recent = "RECENT", uidNext = "UIDNEXT", uidValidity = "UIDVALIDITY"
    case unseen = "UNSEEN", highestModSeq = "HIGHESTMODSEQ", size = "SIZE"
}

/// SELECT/EXAMINE parameters (RFC 7162).
public enum SelectParameter: Sendable, Hashable {
    case condstore
    /// `(QRESYNC (uidvalidity modseq [known-uids [(seq-set uid-set)]]))`.
    case qresync(uidValidity: UInt32, modSeq: ModSequence, knownUIDs: UIDSet? = nil)
}

/// A FETCH data item.
public enum FetchItem: Sendable, Hashable {
    case uid, flags, internalDate, rfc822Size, modSeq, envelope, bodyStructure
    /// Gmail's X-GM-MSGID, X-GM-THRID, X-GM-LABELS (X-GM-EXT-1).
    case gmailMessageID, gmailThreadID, gmailLabels
    /// `BODY[section]`; `peek` (the default) does not set `\Seen`. No partial `<origin.length>`: mo
    /// fetches whole sections.
    case body(section: String = "", peek: Bool = true)
    /// `BINARY[section]` (RFC 3516).
    case binary(section: String = "", peek: Bool = true)
}

/// What a STORE does to the flags.
public struct StoreAction: Sendable, Hashable {
    public enum Mode: String, Sendable, Hashable { case add = "+", remove = "-", replace = "" }
    public var mode: Mode
    public var flags: [Flag]
    /// `.SILENT`: no untagged FETCH in reply (but CONDSTORE servers still report MODSEQ).
    public var silent: Bool
    public init(_ mode: Mode, _ flags: [Flag], silent: Bool = false) {
        self.mode = mode
        self.flags = flags
        self.silent = silent
    }
}

/// Search criteria (RFC 3501 §6.4.4, RFC 7162 MODSEQ). Strings with non-ASCII characters make the encoder send
/// `CHARSET UTF-8`.
public indirect enum SearchKey: Sendable, Hashable {
    case all, answered, deleted, draft, flagged, seen, recent, new, old
    case unanswered, undeleted, undraft, unflagged, unseen
    case keyword(String), unkeyword(String)
    case uid(UIDSet), sequence(UIDSet)
    /// Dates compare by day only; the time and zone of the `InternalDate` are ignored.
    case before(InternalDate), on(InternalDate), since(InternalDate)
    case sentBefore(InternalDate), sentOn(InternalDate), sentSince(InternalDate)
    case larger(UInt32), smaller(UInt32)
    case modSeq(ModSequence)
    /// Gmail: the message whose X-GM-MSGID this is.
    case gmailMessageID(UInt64)
    /// Gmail: the messages with this label (`\\Inbox`, or a user label's bytes, modified UTF-7).
    case gmailLabel([UInt8])
    case header(String, String)
    case from(String), to(String), cc(String), bcc(String), subject(String), body(String), text(String)
    case not(SearchKey)
    case or(SearchKey, SearchKey)
    /// Several keys that must all match (sent parenthesised when more than one).
    case and([SearchKey])
}
