import Foundation

/// Diacritics-insensitive matching: text is folded the same way before indexing and before querying
/// (`é` → `e`, `Ø` stays: it has no decomposition). Xapian lowercases on its own.
///
/// Only Latin, Greek and Cyrillic letters with canonical decompositions are folded, from a table built
/// once; other scripts pass unchanged (decomposing Hangul, for one, would split its syllables). ASCII-only
/// text, the common case, is returned without copying.
public enum TextFolding {
    /// Folds `text`.
    public static func fold(_ text: String) -> String {
        var ascii = true
        for b in text.utf8 where b >= 0x80 { ascii = false; break }
        if ascii { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if v < 0x80 {
                out.append(scalar)
            } else if v >= 0x300, v < 0x370 {
                continue  // a combining mark already decomposed in the input
            } else if v >= 0xC0, v < 0x500, let base = table[Int(v - 0xC0)] {
                out.append(base)
            } else if v >= 0x1E00, v < 0x1F00, let base = extendedTable[Int(v - 0x1E00)] {
                out.append(base)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// The base letter of each scalar in U+00C0..<U+0500 that decomposes to letter + combining marks.
    private static let table: [Unicode.Scalar?] = (0xC0..<0x500).map(base)
    /// The same for Latin Extended Additional (U+1E00..<U+1F00: Vietnamese and others).
    private static let extendedTable: [Unicode.Scalar?] = (0x1E00..<0x1F00).map(base)

    private static func base(_ value: Int) -> Unicode.Scalar? {
        guard let scalar = Unicode.Scalar(UInt32(value)) else { return nil }
        let decomposed = String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars
        guard decomposed.count > 1, let first = decomposed.first,
            decomposed.dropFirst().allSatisfy({ $0.properties.generalCategory == .nonspacingMark })
        else { return nil }
        return first
    }
}
