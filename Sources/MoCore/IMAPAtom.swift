/// The IMAP atom rule (RFC 3501 ATOM-CHAR: any CHAR except atom-specials), the one copy: the IMAP grammar
/// reads and writes atoms with it, tags are encoded into keywords by it, and the configuration checks
/// `[keywords]` names against it (a keyword the grammar would refuse would fail every STORE of its folder).
public enum IMAPAtom {
    /// A printable ASCII byte other than `( ) { % * " \ ]` and space.
    @inlinable
    public static func isAtomByte(_ b: UInt8) -> Bool {
        switch b {
        case 0...0x20, 0x7F..., 0x28, 0x29, 0x7B, 0x25, 0x2A, 0x22, 0x5C, 0x5D: false
        default: true
        }
    }

    /// Whether `s` is one atom (non-empty, every byte an atom byte).
    public static func isAtom(_ s: String) -> Bool { !s.isEmpty && s.utf8.allSatisfy(isAtomByte) }
}
