/// The name a listing shows for a message's From ("Name <addr>" as indexed): the name, else the bare
/// address, as notmuch shows authors. One home for mo-index's summaries and the notmuch command line.
///
/// Trimmed scalar by scalar as Foundation's `trimmingCharacters(in:)` trims, without it: a search prints
/// one author per matched message, and Foundation's bridging through UTF-16 was a tenth of a 1,300-thread
/// search.
public enum AuthorName {
    /// "Alice Smith <a@x>" → "Alice Smith"; a bare address stays.
    public static func of(_ from: String) -> String {
        if let lt = from.lastIndex(of: "<"), lt > from.startIndex {
            let name = trimmed(from[..<lt], isBlank)
            if !name.isEmpty { return trimmed(name[...]) { $0 == "\"" } }
        }
        return trimmed(from[...]) { $0 == "<" || $0 == ">" || $0 == " " }
    }

    /// Foundation's `CharacterSet.whitespaces` as CoreFoundation defines it: the Zs spaces, tab, and
    /// U+200B (zero width space).
    static func isBlank(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x20, 0x09, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    static func trimmed(_ s: Substring, _ drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = s.unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }), let last = scalars.lastIndex(where: { !drop($0) }) else { return "" }
        return String(scalars[first...last])
    }
}
