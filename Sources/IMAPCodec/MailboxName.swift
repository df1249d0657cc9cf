import MoCore

/// A mailbox name as the server spells it on the wire (modified UTF-7, RFC 3501 §5.1.3), plus its decoded form.
/// The wire bytes are the identity: two names are equal when their wire bytes are equal.
public struct MailboxName: Sendable, Hashable, CustomStringConvertible {
    /// Exactly the bytes of the astring (after unquoting / literal extraction).
    public let wire: [UInt8]
    /// The name decoded from modified UTF-7, or nil when the wire form is not valid modified UTF-7
    /// (for example raw UTF-8 from a server that ignores the rule).
    public let decoded: String?

    /// A name from the wire.
    public init(wire: [UInt8]) {
        self.wire = wire
        // Fast path: plain ASCII without "&" decodes to itself.
        if wire.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: "&") }) {
            decoded = String(decoding: wire, as: UTF8.self)
        } else {
            decoded = try? ModifiedUTF7.decode(String(decoding: wire, as: UTF8.self))
        }
    }

    /// A name given by the user; encoded with modified UTF-7.
    public init(_ name: String) {
        wire = Array(ModifiedUTF7.encode(name).utf8)
        decoded = name
    }

    public static let inbox = MailboxName("INBOX")

    /// True for any capitalisation of INBOX (the only case-insensitive name).
    public var isInbox: Bool {
        wire.count == 5 && wire.withUnsafeBufferPointer { equalsIgnoringCase($0, "INBOX") }
    }

    /// The decoded name, or the wire bytes read as UTF-8 when they do not decode.
    public var description: String { decoded ?? String(decoding: wire, as: UTF8.self) }

    public static func == (a: MailboxName, b: MailboxName) -> Bool { a.wire == b.wire }
    public func hash(into h: inout Hasher) { h.combine(wire) }
}

/// A LIST/LSUB mailbox attribute (RFC 3501 §7.2.2, RFC 6154 SPECIAL-USE, RFC 5258), such as `\Noselect` or `\Sent`.
/// Stored in lower case (attributes are case-insensitive) with the backslash.
public struct MailboxAttribute: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let name: String
    public init(_ name: String) { self.name = name.lowercased() }
    public init(stringLiteral value: String) { self.init(value) }
    public var description: String { name }

    public static let noInferiors: MailboxAttribute = "\\Noinferiors"
    public static let noSelect: MailboxAttribute = "\\Noselect"
    public static let marked: MailboxAttribute = "\\Marked"
    public static let unmarked: MailboxAttribute = "\\Unmarked"
    public static let nonExistent: MailboxAttribute = "\\NonExistent"
    public static let subscribed: MailboxAttribute = "\\Subscribed"
    public static let remote: MailboxAttribute = "\\Remote"
    public static let hasChildren: MailboxAttribute = "\\HasChildren"
    public static let hasNoChildren: MailboxAttribute = "\\HasNoChildren"
    public static let all: MailboxAttribute = "\\All"
    public static let archive: MailboxAttribute = "\\Archive"
    public static let drafts: MailboxAttribute = "\\Drafts"
    public static let flagged: MailboxAttribute = "\\Flagged"
    public static let junk: MailboxAttribute = "\\Junk"
    public static let sent: MailboxAttribute = "\\Sent"
    public static let trash: MailboxAttribute = "\\Trash"
    public static let important: MailboxAttribute = "\\Important"

    /// True for the RFC 6154 special-use attributes.
    public var isSpecialUse: Bool {
        [Self.all, .archive, .drafts, .flagged, .junk, .sent, .trash, .important].contains(self)
    }
}
