/// A server capability (RFC 3501 §7.2.1), normalised to upper case since capability names are case-insensitive.
public struct Capability: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// Upper-case name, e.g. `QRESYNC`, `AUTH=PLAIN`, `LITERAL+`.
    public let name: String

    public init(_ name: String) { self.name = name.uppercased() }
    public init(stringLiteral value: String) { self.init(value) }
    public var description: String { name }

    public static let imap4rev1: Capability = "IMAP4REV1"
    public static let startTLS: Capability = "STARTTLS"
    public static let loginDisabled: Capability = "LOGINDISABLED"
    public static let saslIR: Capability = "SASL-IR"
    public static let literalPlus: Capability = "LITERAL+"
    public static let literalMinus: Capability = "LITERAL-"
    public static let idle: Capability = "IDLE"
    public static let enable: Capability = "ENABLE"
    public static let condstore: Capability = "CONDSTORE"
    public static let qresync: Capability = "QRESYNC"
    public static let uidplus: Capability = "UIDPLUS"
    public static let move: Capability = "MOVE"
    public static let specialUse: Capability = "SPECIAL-USE"
    public static let listStatus: Capability = "LIST-STATUS"
    public static let esearch: Capability = "ESEARCH"
    public static let binary: Capability = "BINARY"
    public static let unselect: Capability = "UNSELECT"
    public static let namespace: Capability = "NAMESPACE"
    public static let notify: Capability = "NOTIFY"
    /// `AUTH=<mechanism>`.
    public static func auth(_ mechanism: String) -> Capability { Capability("AUTH=" + mechanism) }
}
