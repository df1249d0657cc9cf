/// Percent-escaping: the one home for "this byte set is written as MARKER + two hex digits".
///
/// The default serves line-based files (state files, sync journals, the action journal): every byte outside
/// `!`..`~`, and `%`, becomes `%XX` (uppercase hex of the UTF-8 byte), so a field never holds a space, a
/// line end or a byte a terminal would act on (docs/action-journal.md). Other formats pass their own byte
/// set, marker and digit case: IMAP keywords for tags (`=XX`, Maildir.TagVocabulary) and notmuch's dump
/// (`%xx`, MoIndex.NotmuchDump). Unescaping is the same for all: strict, either case.
public enum PercentEscape {
    /// Whether `b` is written as `%XX` in line-based files. Inlinable: the state-file writer asks it for
    /// every byte of every name.
    @inlinable
    public static func needsEscape(_ b: UInt8) -> Bool { b <= 0x20 || b >= 0x7F || b == UInt8(ascii: "%") }

    public static func escape(_ s: String) -> String { escape(s, where: needsEscape) }

    /// `s` with every byte for which `needsEscape` holds written as `marker` and two hex digits. The
    /// predicate must hold for `marker` itself, or the result would not read back.
    public static func escape(
        _ s: String, marker: UInt8 = UInt8(ascii: "%"), lowercase: Bool = false,
        where needsEscape: (UInt8) -> Bool
    ) -> String {
        guard s.utf8.contains(where: needsEscape) else { return s }
        let digits = lowercase ? lowerHex : hex
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 8)
        for b in s.utf8 {
            if needsEscape(b) {
                out.append(marker)
                out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)])
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A value for a URL query (RFC 3986): every byte but the unreserved ones (letters, digits, `-._~`)
    /// and `@` becomes `%XX`, so `+`, `&`, `#` and `=` in an address cannot change the query's meaning.
    public static func urlQueryValue(_ s: String) -> String {
        escape(
            s,
            where: { b in
                !(ASCII.isDigit(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
                    || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
                    || "-._~@".utf8.contains(b))
            })
    }

    /// Undoes `escape`: every `marker` must be followed by two hex digits (either case); nil otherwise, or
    /// when the bytes are not UTF-8. Other bytes pass as they are (so older files with raw UTF-8 still read).
    public static func unescape<S: StringProtocol>(_ s: S, marker: UInt8 = UInt8(ascii: "%")) -> String? {
        guard s.utf8.contains(marker) else { return String(s) }
        var out: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.popFirst() {
            if b != marker { out.append(b); continue }
            guard let h = it.popFirst().flatMap(ASCII.hexValue), let l = it.popFirst().flatMap(ASCII.hexValue) else { return nil }
            out.append(h << 4 | l)
        }
        return String(validating: out, as: UTF8.self)
    }

    private static let hex = Array("0123456789ABCDEF".utf8)
    private static let lowerHex = Array("0123456789abcdef".utf8)
}
