import MoCore

extension EncodedWords {
    /// A phrase (a display name) for a header, as GMime encodes one: ASCII words as they are, each
    /// word with other characters as an encoded-word, in ISO-8859-1 when every character fits there,
    /// else UTF-8, in Q (`=E9`, `_` for a blank) unless B is shorter.
    public static func encodePhrase(_ phrase: String) -> String {
        phrase.split(separator: " ", omittingEmptySubsequences: false).map { word -> String in
            guard word.unicodeScalars.contains(where: { $0.value > 0x7E || $0.value < 0x20 }) else { return String(word) }
            let latin1 = word.unicodeScalars.allSatisfy { $0.value <= 0xFF }
            let bytes = latin1 ? word.unicodeScalars.map { UInt8($0.value) } : Array(word.utf8)
            let charset = latin1 ? "iso-8859-1" : "utf-8"
            var q = ""
            for b in bytes {
                if ASCII.isDigit(b) || (b | 0x20 >= UInt8(ascii: "a") && b | 0x20 <= UInt8(ascii: "z")) || "!*+-/".utf8.contains(b) {
                    q.append(Character(Unicode.Scalar(b)))
                } else {
                    q += "=" + String(hex[Int(b >> 4)]) + String(hex[Int(b & 15)])
                }
            }
            let b64 = Base64.encode(bytes)
            return b64.count < q.count ? "=?\(charset)?b?\(b64)?=" : "=?\(charset)?q?\(q)?="
        }.joined(separator: " ")
    }
}

private let hex = Array("0123456789ABCDEF")
