/// One thing the parser produced. FETCH responses are streamed: `fetchStart`, attributes and body chunks,
/// then `fetchEnd`; everything else arrives whole.
public enum ResponseEvent: Sendable, Hashable {
    /// `+ ...`: the server waits for more of a command (literal, AUTHENTICATE, IDLE). The text (or base64 SASL
    /// challenge) is given raw, without the leading `+ ` and the CRLF.
    case continuation([UInt8])
    case tagged(TaggedResponse)
    case untagged(UntaggedResponse)
    /// `* <seq> FETCH (`.
    case fetchStart(sequenceNumber: UInt32)
    /// One attribute of the current FETCH, other than a message body.
    case fetchAttribute(FetchAttribute)
    /// A message body section begins; `bodyBytes` follow (none when empty or NIL), then `bodyEnd`.
    case bodyStart(FetchBodyStart)
    /// Some bytes of the current body, in order. Chunk sizes depend only on how the bytes were appended.
    case bodyBytes([UInt8])
    case bodyEnd
    /// The closing `)` of the current FETCH.
    case fetchEnd
}

/// `OK`, `NO` or `BAD` (RFC 3501 `resp-cond-state`).
public enum ResponseStatus: String, Sendable, Hashable {
    case ok = "OK", no = "NO", bad = "BAD"
}

/// `resp-text`: an optional bracketed response code and human-readable text.
public struct ResponseText: Sendable, Hashable {
    public var code: ResponseCode?
    /// The text as sent (invalid UTF-8 replaced). Meant for humans only.
    public var text: String
    public init(code: ResponseCode? = nil, text: String) {
        self.code = code
        self.text = text
    }
}

/// The completion of a command: `<tag> OK|NO|BAD [code] text`.
public struct TaggedResponse: Sendable, Hashable {
    public var tag: String
    public var status: ResponseStatus
    public var text: ResponseText
    public init(tag: String, status: ResponseStatus, text: ResponseText) {
        self.tag = tag
        self.status = status
        self.text = text
    }
}

/// A response code (RFC 3501 §7.1, RFC 4315, RFC 7162, RFC 5530...).
public enum ResponseCode: Sendable, Hashable {
    case alert
    case badCharset([String])
    case capability([Capability])
    case parse
    case permanentFlags([Flag])
    case readOnly
    case readWrite
    case tryCreate
    case uidNext(UInt32)
    case uidValidity(UInt32)
    case unseen(UInt32)
    case highestModSeq(ModSequence)
    case noModSeq
    /// RFC 7162: messages that failed UNCHANGEDSINCE.
    case modified(UIDSet)
    /// RFC 4315: `APPENDUID <uidvalidity> <uid-set>`.
    case appendUID(uidValidity: UInt32, uids: UIDSet)
    /// RFC 4315: `COPYUID <uidvalidity> <source uids> <destination uids>`; UIDs pair up by position.
    case copyUID(uidValidity: UInt32, source: UIDSet, destination: UIDSet)
    /// RFC 7162: the previously selected mailbox is closed.
    case closed
    case uidNotSticky
    /// RFC 5465: the server dropped notifications; the client must resynchronise what it watches.
    case notificationOverflow
    /// RFC 5465: NOTIFY named events the server does not support.
    case badEvent([String])
    /// Any other code (or a known one whose arguments did not parse): its atom in upper case and the raw rest.
    case other(name: String, text: String)
}

/// A response starting with `*`, other than FETCH (which is streamed).
public enum UntaggedResponse: Sendable, Hashable {
    case ok(ResponseText)
    case no(ResponseText)
    case bad(ResponseText)
    case preauth(ResponseText)
    case bye(ResponseText)
    case capability([Capability])
    case enabled([Capability])
    case list(ListResponse)
    case lsub(ListResponse)
    case status(StatusResponse)
    case flags([Flag])
    case exists(UInt32)
    case recent(UInt32)
    case expunge(UInt32)
    /// RFC 7162: `VANISHED [(EARLIER)] <uid-set>`.
    case vanished(earlier: Bool, uids: UIDSet)
    /// `SEARCH` numbers, with the CONDSTORE `(MODSEQ n)` when present.
    case search([UInt32], modSeq: ModSequence?)
    case esearch(ESearchResponse)
    /// `NAMESPACE`, kept raw (everything after `NAMESPACE `).
    case namespace(raw: [UInt8])
    /// Any other untagged response: its first word (upper case) and the raw rest of the response.
    case other(name: String, raw: [UInt8])
}

/// `mailbox-list`: `(attributes) delimiter name [extended items]`.
public struct ListResponse: Sendable, Hashable {
    public var attributes: [MailboxAttribute]
    /// The hierarchy delimiter, nil for a flat namespace (`NIL`).
    public var delimiter: UInt8?
    public var mailbox: MailboxName
    /// RFC 5258 extended data items (`CHILDINFO`, `OLDNAME`): name and raw value bytes.
    public var extendedItems: [ExtendedItem]
    public struct ExtendedItem: Sendable, Hashable {
        public var name: String
        public var raw: [UInt8]
        public init(name: String, raw: [UInt8]) {
            self.name = name
            self.raw = raw
        }
    }
    public init(attributes: [MailboxAttribute], delimiter: UInt8?, mailbox: MailboxName, extendedItems: [ExtendedItem] = []) {
        self.attributes = attributes
        self.delimiter = delimiter
        self.mailbox = mailbox
        self.extendedItems = extendedItems
    }

    /// Whether the mailbox can be selected: neither `\Noselect` nor `\NonExistent`, which implies it
    /// (RFC 5258 §3: a parent listed only for its children). The one test of it, for every LIST reader.
    public var isSelectable: Bool { !attributes.contains(.noSelect) && !attributes.contains(.nonExistent) }
}

/// `STATUS mailbox (items)`. Items the server did not send are nil; unknown items are skipped.
public struct StatusResponse: Sendable, Hashable {
    public var mailbox: MailboxName
    public var messages: UInt32?
    public var recent: UInt32?
    public var uidNext: UInt32?
    public var uidValidity: UInt32?
    public var unseen: UInt32?
    public var highestModSeq: ModSequence?
    /// RFC 8438 STATUS=SIZE.
    public var size: UInt64?
    public init(mailbox: MailboxName) { self.mailbox = mailbox }
}

/// RFC 4731 `ESEARCH`. Unknown return items are skipped.
public struct ESearchResponse: Sendable, Hashable {
    /// The `(TAG "...")` correlator.
    public var tag: String?
    public var uid: Bool = false
    public var min: UInt32?
    public var max: UInt32?
    public var count: UInt32?
    public var all: UIDSet?
    public var modSeq: ModSequence?
    public init() {}
}

/// A FETCH attribute other than a body.
public enum FetchAttribute: Sendable, Hashable {
    case uid(UInt32)
    case flags([Flag])
    /// Follows `flags` when the server's list held tokens that are not flags (e.g. a lone `\`): their raw
    /// bytes, skipped, so the client can note them (escaped) and the session stays in step.
    case skippedFlags([[UInt8]])
    case internalDate(InternalDate)
    case rfc822Size(UInt64)
    case modSeq(ModSequence)
    /// Gmail's X-GM-MSGID and X-GM-THRID: the message's and its thread's ids across the account.
    case gmailMessageID(UInt64)
    case gmailThreadID(UInt64)
    /// Gmail's X-GM-LABELS: each label's bytes (`\Inbox` with its backslash; user labels in modified UTF-7).
    case gmailLabels([[UInt8]])
    /// Any attribute kept raw: ENVELOPE, BODYSTRUCTURE, BODY (structure), PREVIEW, ...
    /// Name in upper case; `raw` is the value exactly as on the wire (literals included).
    case other(name: String, raw: [UInt8])
}

/// Which body attribute a `bodyStart` belongs to.
public struct FetchBodyStart: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case body = "BODY", binary = "BINARY", rfc822 = "RFC822", rfc822Header = "RFC822.HEADER", rfc822Text = "RFC822.TEXT"
    }
    public var kind: Kind
    /// The section text between the brackets, as sent (`""` for `BODY[]`, `HEADER.FIELDS (SUBJECT)`); empty for RFC822*.
    public var section: String
    /// The partial origin `<n>`, if any.
    public var origin: UInt32?
    /// Bytes that will follow in `bodyBytes` events.
    public var size: Int
    /// The server sent NIL (no such part); size is 0.
    public var isNil: Bool
    /// The server sent a binary literal (`~{n}`), which may contain NUL.
    public var isBinaryLiteral: Bool
    public init(kind: Kind, section: String, origin: UInt32? = nil, size: Int, isNil: Bool = false, isBinaryLiteral: Bool = false) {
        self.kind = kind
        self.section = section
        self.origin = origin
        self.size = size
        self.isNil = isNil
        self.isBinaryLiteral = isBinaryLiteral
    }
}
