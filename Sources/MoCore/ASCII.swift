/// Byte classes of ASCII text, for the parsers of outside bytes (one home: TOML, MIME, HTML entities,
/// %-escapes). FolderNameMapper keeps its own upper-case-only hex digits: its escapes are canonical.
///
/// House style for byte literals: a byte that stands for a character is written `UInt8(ascii: "x")`
/// (the compiler folds it to a constant); hex is for values — masks (`| 0x20`), the bounds of control
/// ranges (`< 0x20`, `0x7F`), bytes above ASCII — and decimal never stands for a byte.
/// `@inlinable`: the IMAP, MIME and TOML parsers call these per byte, from other modules.
public enum ASCII {
    @inlinable @inline(__always)
    public static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    /// The value of a hex digit of either case; nil for any other byte.
    @inlinable @inline(__always)
    public static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
