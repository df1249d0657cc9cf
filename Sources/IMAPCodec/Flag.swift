import MoCore
/// A message flag (RFC 3501 §2.3.2). System flags compare case-insensitively on the wire and are normalised here;
/// keywords keep the server's spelling.
public enum Flag: Sendable, Hashable, CustomStringConvertible {
    case answered, flagged, deleted, seen, draft
    /// `\Recent`: only ever sent by the server, never stored by a client.
    case recent
    /// `\*` in PERMANENTFLAGS: the client may create new keywords.
    case wildcard
    /// A keyword such as `$Forwarded` or `NonJunk` (an atom).
    case keyword(String)
    /// Any other `\Name` (a flag-extension), kept with its backslash.
    case `extension`(String)

    /// The wire form: `\Seen`, `$Forwarded`, `\*`.
    public var description: String {
        switch self {
        case .answered: "\\Answered"
        case .flagged: "\\Flagged"
        case .deleted: "\\Deleted"
        case .seen: "\\Seen"
        case .draft: "\\Draft"
        case .recent: "\\Recent"
        case .wildcard: "\\*"
        case .keyword(let k): k
        case .extension(let e): e
        }
    }

    /// Parses the wire form (as `description` prints it). Nil for an empty string or one that is not an atom.
    public init?(_ text: String) {
        var bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return nil }
        if bytes == [UInt8(ascii: "\\"), UInt8(ascii: "*")] { self = .wildcard; return }
        let backslash = bytes[0] == UInt8(ascii: "\\")
        if backslash { bytes.removeFirst() }
        guard !bytes.isEmpty, bytes.allSatisfy(isAtomChar) else { return nil }
        self = bytes.withUnsafeBufferPointer { Flag.make(backslash: backslash, name: $0) }
    }

    /// Builds a flag from the atom after an optional backslash, allocating a String only for keywords and
    /// extensions (system flags are the hot path of FETCH FLAGS).
    static func make(backslash: Bool, name: UnsafeBufferPointer<UInt8>) -> Flag {
        guard backslash else { return .keyword(String(decoding: name, as: UTF8.self)) }
        switch name.count {
        case 4 where equalsIgnoringCase(name, "SEEN"): return .seen
        case 5 where equalsIgnoringCase(name, "DRAFT"): return .draft
        case 6 where equalsIgnoringCase(name, "RECENT"): return .recent
        case 7 where equalsIgnoringCase(name, "FLAGGED"): return .flagged
        case 7 where equalsIgnoringCase(name, "DELETED"): return .deleted
        case 8 where equalsIgnoringCase(name, "ANSWERED"): return .answered
        default: return .extension("\\" + String(decoding: name, as: UTF8.self))
        }
    }
}

/// ASCII case-insensitive comparison of bytes with an upper-case ASCII pattern.
@inline(__always)
func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ upper: StaticString) -> Bool {
    guard bytes.count == upper.utf8CodeUnitCount else { return false }
    let p = upper.utf8Start
    for i in 0..<bytes.count {
        var b = bytes[i]
        if b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z") { b &-= 0x20 }
        if b != p[i] { return false }
    }
    return true
}

/// ATOM-CHAR (RFC 3501): any CHAR except atom-specials `( ) { SP CTL % * " \ ]`. Bytes >= 0x80 are accepted
/// too: some servers send raw UTF-8 in atoms, and refusing them gains no safety.
@inline(__always)
func isAtomChar(_ b: UInt8) -> Bool {
    // Bytes ≥ 0x80 are read as atom bytes (servers send raw UTF-8 there); writing checks them apart.
    b >= 0x80 || IMAPAtom.isAtomByte(b)
}
