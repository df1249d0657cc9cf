import IMAPCodec
import MoCore
import MoNet

/// A message's metadata from FETCH (everything but its body).
public struct MessageInfo: Sendable, Hashable {
    public var sequenceNumber: UInt32
    public var uid: UInt32 = 0
    public var flags: [Flag]?
    public var modSeq: ModSequence?
    public var size: UInt64?
    public var internalDate: InternalDate?
    /// Tokens of the FLAGS list that were not flags, skipped by the parser (raw; escape before printing).
    public var skippedFlags: [[UInt8]] = []
    /// Gmail's X-GM-MSGID, X-GM-THRID and X-GM-LABELS, when asked for.
    public var gmail = GmailAttributes()
    public init(sequenceNumber: UInt32) { self.sequenceNumber = sequenceNumber }
}

/// A message's Gmail attributes (X-GM-EXT-1): its id and its thread's across the account, and its labels
/// (each label's bytes: `\Inbox` with its backslash, user labels in modified UTF-7).
public struct GmailAttributes: Sendable, Hashable {
    public var messageID: UInt64?
    public var threadID: UInt64?
    public var labels: [[UInt8]]?
    public init() {}
}

/// Gathers `MessageInfo`s from FETCH events, ignoring body bytes.
public struct MessageInfoCollector {
    public private(set) var current: MessageInfo?
    public init() {}

    /// Feeds one event; returns the message when its FETCH ends.
    public mutating func feed(_ event: ResponseEvent) -> MessageInfo? {
        switch event {
        case .fetchStart(let seq): current = MessageInfo(sequenceNumber: seq)
        case .fetchAttribute(let a):
            switch a {
            case .uid(let u): current?.uid = u
            case .flags(let f): current?.flags = f
            case .skippedFlags(let raw): current?.skippedFlags += raw
            case .modSeq(let m): current?.modSeq = m
            case .rfc822Size(let s): current?.size = s
            case .internalDate(let d): current?.internalDate = d
            case .gmailMessageID(let id): current?.gmail.messageID = id
            case .gmailThreadID(let id): current?.gmail.threadID = id
            case .gmailLabels(let l): current?.gmail.labels = l
            case .other: break
            }
        case .fetchEnd:
            defer { current = nil }
            return current
        default: break
        }
        return nil
    }
}

/// What SELECT/EXAMINE reported.
public struct SelectedMailbox: Sendable {
    public var mailbox: MailboxName
    public var readOnly = false
    public var exists: UInt32 = 0
    public var uidValidity: UInt32 = 0
    public var uidNext: UInt32?
    public var highestModSeq: ModSequence?
    /// The server keeps no mod-sequences for this mailbox (RFC 7162 NOMODSEQ).
    public var noModSeq = false
    public var flags: [Flag] = []
    public var permanentFlags: [Flag]?
    /// QRESYNC: UIDs expunged since the given mod-sequence (`VANISHED (EARLIER)`).
    public var vanished = UIDSet([])
    /// QRESYNC: messages whose flags changed since the given mod-sequence.
    public var changed: [MessageInfo] = []
    /// The listing could not say what changed since the given mark (CONDSTORE alone, without
    /// HIGHESTMODSEQ or UIDNEXT): `changed` and `vanished` are empty for want of knowing, not of change.
    public var changesUnknown = false

    public init(mailbox: MailboxName) { self.mailbox = mailbox }
}

/// A SELECT in flight (`IMAPConnection.beginSelect`): what its untagged responses said so far.
public final class PendingSelect {
    var selected: SelectedMailbox
    let command: Command
    var tag = ""
    var vanished: [ClosedRange<UInt32>] = []
    private var collector = MessageInfoCollector()

    init(mailbox: MailboxName, command: Command) {
        self.selected = SelectedMailbox(mailbox: mailbox)
        self.command = command
    }

    func untagged(_ u: UntaggedResponse) {
        switch u {
        case .exists(let n): selected.exists = n
        case .flags(let f): selected.flags = f
        case .vanished(_, let uids): vanished += uids.ranges
        case .ok(let text), .no(let text):
            switch text.code {
            case .uidValidity(let v)?: selected.uidValidity = v
            case .uidNext(let n)?: selected.uidNext = n
            case .highestModSeq(let m)?: selected.highestModSeq = m
            case .noModSeq?: selected.noModSeq = true
            case .permanentFlags(let f)?: selected.permanentFlags = f
            default: break
            }
        default: break
        }
    }

    func fetch(_ event: ResponseEvent) {
        if let info = collector.feed(event) { selected.changed.append(info) }
    }
}

/// The QRESYNC parameters of SELECT (RFC 7162 §3.2.5).
public struct QResyncParameters: Sendable {
    public var uidValidity: UInt32
    public var modSeq: ModSequence
    public var knownUIDs: UIDSet?
    public init(uidValidity: UInt32, modSeq: ModSequence, knownUIDs: UIDSet? = nil) {
        self.uidValidity = uidValidity
        self.modSeq = modSeq
        self.knownUIDs = knownUIDs
    }
}

extension IMAPConnection {
    public var supportsQResync: Bool { capabilities.contains(.qresync) }
    public var supportsCondstore: Bool { capabilities.contains(.condstore) || supportsQResync }

    /// ENABLE what the server offers of `wanted` (RFC 5161). QRESYNC implies CONDSTORE.
    public func enable(_ wanted: [Capability]) throws {
        let offered = wanted.filter { capabilities.contains($0) }
        guard capabilities.contains(.enable), !offered.isEmpty else { return }
        try run(.enable(offered))
    }

    /// LIST "" pattern, with SPECIAL-USE attributes when the server has them.
    public func list(pattern: String = "*") throws -> [ListResponse] {
        var result: [ListResponse] = []
        let returning: [ListReturnOption] =
            capabilities.contains(.specialUse) && capabilities.contains("LIST-EXTENDED") ? [.specialUse] : []
        try run(
            .list(reference: MailboxName(""), pattern: pattern, returning: returning),
            untagged: {
                if case .list(let l) = $0 { result.append(l) }
            })
        return result
    }

    public func status(_ mailbox: MailboxName, _ items: [StatusAttribute]) throws -> StatusResponse {
        var result = StatusResponse(mailbox: mailbox)
        try run(.status(mailbox, items), untagged: { if case .status(let s) = $0 { result = s } })
        return result
    }

    /// SELECT (or EXAMINE when `readOnly`), with QRESYNC parameters when given and enabled, else CONDSTORE
    /// when the server has it, so HIGHESTMODSEQ is reported.
    public func select(_ mailbox: MailboxName, readOnly: Bool = false, qresync: QResyncParameters? = nil) throws -> SelectedMailbox {
        try finishSelect(beginSelect(mailbox, readOnly: readOnly, qresync: qresync))
    }

    /// Sends SELECT (or EXAMINE) without waiting for the answer, so the caller can do local work while the
    /// server prepares it (a QRESYNC SELECT of a large, recently changed mailbox takes the server tens of
    /// milliseconds). Nothing else may use the connection until `finishSelect`.
    public func beginSelect(_ mailbox: MailboxName, readOnly: Bool = false, qresync: QResyncParameters? = nil) throws -> PendingSelect {
        let parameter: SelectParameter?
        if let q = qresync, enabled.contains(.qresync) {
            parameter = .qresync(uidValidity: q.uidValidity, modSeq: q.modSeq, knownUIDs: q.knownUIDs)
        } else if supportsCondstore && !enabled.contains(.qresync) {
            parameter = .condstore
        } else {
            parameter = nil
        }
        selectedMailbox = nil  // a failed SELECT leaves no mailbox selected (RFC 3501 §6.3.1)
        let pending = PendingSelect(mailbox: mailbox, command: readOnly ? .examine(mailbox, parameter) : .select(mailbox, parameter))
        pending.tag = try send(pending.command, untagged: pending.untagged, fetch: pending.fetch, body: nil)
        return pending
    }

    /// Reads the answer to `beginSelect`.
    public func finishSelect(_ pending: PendingSelect) throws -> SelectedMailbox {
        let done = try complete(tag: pending.tag, command: pending.command, untagged: pending.untagged, fetch: pending.fetch)
        var selected = pending.selected
        if case .readOnly? = done.text.code { selected.readOnly = true }
        selectedMailbox = pending.selected.mailbox
        selected.vanished = UIDSet(pending.vanished).normalized()
        return selected
    }

    /// UID FETCH of metadata; `changedSince` adds CHANGEDSINCE (CONDSTORE) and, with `vanished`,
    /// VANISHED (QRESYNC) so expunges are reported too. Returns the messages and the vanished UIDs.
    public func fetchInfo(
        _ uids: UIDSet, items: [FetchItem] = [.uid, .flags],
        changedSince: ModSequence? = nil, vanished: Bool = false
    ) throws -> (messages: [MessageInfo], vanished: UIDSet) {
        var messages: [MessageInfo] = []
        var gone: [ClosedRange<UInt32>] = []
        var collector = MessageInfoCollector()
        try run(
            .uidFetch(uids, items, changedSince: changedSince, vanished: vanished && enabled.contains(.qresync)),
            untagged: { if case .vanished(_, let u) = $0 { gone += u.ranges } },
            fetch: { if let m = collector.feed($0) { messages.append(m) } })
        return (messages, UIDSet(gone).normalized())
    }

    /// The UIDs of `uids` the selected mailbox holds: `UID SEARCH RETURN (ALL) UID set` where the server
    /// has ESEARCH (one sequence set: a few bytes for a mailbox with few gaps), else `UID SEARCH UID set`
    /// (a number per message).
    public func uidsPresent(in uids: UIDSet) throws -> UIDSet { try self.uids(matching: .uid(uids)) }

    /// The UIDs of the selected mailbox's messages that match `key`: `UID SEARCH RETURN (ALL)` where the
    /// server has ESEARCH (one sequence set), else `UID SEARCH` (a number per message).
    public func uids(matching key: SearchKey) throws -> UIDSet {
        var found: [ClosedRange<UInt32>] = []
        try run(
            .uidSearch(key, returnAll: capabilities.contains(.esearch)),
            untagged: {
                switch $0 {
                case .esearch(let r) where r.uid || r.all != nil: found += r.all?.ranges ?? []
                case .search(let numbers, _): found += numbers.map { $0...$0 }
                default: break
                }
            })
        return UIDSet(found).normalized()
    }

    /// UID FETCH streaming every event (bodies included) to `handler`.
    public func fetch(_ uids: UIDSet, items: [FetchItem], handler: @escaping FetchHandler) throws {
        try run(.uidFetch(uids, items), fetch: handler)
    }

    /// UID STORE; returns the FETCH responses (unless silent) and the UIDs that failed UNCHANGEDSINCE.
    @discardableResult
    public func store(_ uids: UIDSet, _ action: StoreAction, unchangedSince: ModSequence? = nil) throws -> (
        messages: [MessageInfo], modified: UIDSet?
    ) {
        var messages: [MessageInfo] = []
        var collector = MessageInfoCollector()
        let done = try run(
            .uidStore(uids, action, unchangedSince: unchangedSince),
            fetch: { if let m = collector.feed($0) { messages.append(m) } })
        if case .modified(let set)? = done.text.code { return (messages, set) }
        return (messages, nil)
    }

    /// APPEND a message of `size` bytes written by `body`; returns (UIDVALIDITY, UID) when the server has
    /// UIDPLUS (APPENDUID), nil otherwise.
    @discardableResult
    public func append(
        to mailbox: MailboxName, flags: [Flag] = [], date: InternalDate? = nil, size: Int,
        body: @escaping BodyWriter
    ) throws -> (uidValidity: UInt32, uid: UInt32)? {
        let done = try run(.append(mailbox, flags: flags, date: date, messageSize: size), body: body)
        if case .appendUID(let v, let uids)? = done.text.code, let uid = uids.ranges.first?.lowerBound {
            return (v, uid)
        }
        return nil
    }

    /// APPEND of bytes already in memory.
    @discardableResult
    public func append(
        to mailbox: MailboxName, flags: [Flag] = [], date: InternalDate? = nil,
        message: [UInt8]
    ) throws -> (uidValidity: UInt32, uid: UInt32)? {
        try append(to: mailbox, flags: flags, date: date, size: message.count) { try $0.write(message) }
    }

    /// EXPUNGE: removes every message marked \Deleted in the selected mailbox; returns how many the server
    /// reported expunged (EXPUNGE, or VANISHED under QRESYNC: counted by its ranges, never listed).
    @discardableResult
    public func expungeAll() throws -> Int {
        var gone = 0
        try run(
            .expunge,
            untagged: { u in
                if case .expunge = u { gone += 1 }
                if case .vanished(_, let uids) = u { gone += uids.count }
            })
        return gone
    }

    public func create(_ mailbox: MailboxName) throws { try run(.create(mailbox)) }
    public func deleteMailbox(_ mailbox: MailboxName) throws { try run(.delete(mailbox)) }
    public func noop(untagged: UntaggedHandler? = nil) throws { try run(.noop, untagged: untagged) }

    /// LOGOUT, ignoring a server that just closes.
    public func logout() {
        _ = try? run(.logout)
        connection.close()
    }
}

#if canImport(Glibc)
    import Glibc
#endif
