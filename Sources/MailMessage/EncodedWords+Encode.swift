import MoCore

extension EncodedWords {
    /// A phrase (a display name) or an unstructured text (a Subject) for a header, as GMime encodes them
    /// (RFC 2047):
    ///
    /// - words of printable ASCII stay as they are;
    /// - the words from the first one with another character to the last one are one encoded run, the
    ///   blanks between them inside it: a decoder drops the blank between two encoded-words, so "Jörg
    ///   Müller" as two words would read back "JörgMüller";
    /// - the charset is ISO-8859-1 when every character fits there, else UTF-8;
    /// - B when more than 17 % of the run's bytes are not ASCII (GMime's `best_encoding`), else Q (`=E9`,
    ///   `_` for a blank);
    /// - a run longer than an encoded-word may be (75 characters) is split between characters, never
    ///   inside one.
    public static func encodePhrase(_ phrase: String) -> String {
        let words = phrase.split(separator: " ", omittingEmptySubsequences: false)
        func plain(_ w: Substring) -> Bool { !w.unicodeScalars.contains { $0.value > 0x7E || $0.value < 0x20 } }
        guard let first = words.firstIndex(where: { !plain($0) }), let last = words.lastIndex(where: { !plain($0) }) else {
            return phrase
        }
        let run = words[first...last].joined(separator: " ")
        return (words[..<first].map(String.init) + [encodeRun(run)] + words[(last + 1)...].map(String.init)).joined(separator: " ")
    }

    /// A Subject or other unstructured text: the same rules as a phrase.
    public static func encodeText(_ text: String) -> String { encodePhrase(text) }

    static func encodeRun(_ run: String) -> String {
        let latin1 = run.unicodeScalars.allSatisfy { $0.value <= 0xFF }
        let charset = latin1 ? "iso-8859-1" : "utf-8"
        // The run's characters as bytes in the charset, kept whole so a split never cuts one.
        let characters: [[UInt8]] = run.unicodeScalars.map { latin1 ? [UInt8($0.value)] : Array(String($0).utf8) }
        let bytes = characters.flatMap { $0 }
        let eightBit = bytes.filter { $0 > 0x7F }.count
        let useB = Double(eightBit) > Double(bytes.count) * 0.17
        var words: [String] = []
        var chunk: [UInt8] = []
        func encoded(_ b: [UInt8]) -> String {
            if useB { return "=?\(charset)?b?\(Base64.encode(b))?=" }
            var q = ""
            for x in b {
                if ASCII.isDigit(x) || (x | 0x20 >= UInt8(ascii: "a") && x | 0x20 <= UInt8(ascii: "z")) || "!*+-/".utf8.contains(x) {
                    q.append(Character(Unicode.Scalar(x)))
                } else if x == UInt8(ascii: " ") {
                    q += "_"
                } else {
                    q += "=" + String(hex[Int(x >> 4)]) + String(hex[Int(x & 15)])
                }
            }
            return "=?\(charset)?q?\(q)?="
        }
        for c in characters {
            if !chunk.isEmpty, encoded(chunk + c).utf8.count > 75 {
                words.append(encoded(chunk))
                chunk = []
            }
            chunk += c
        }
        if !chunk.isEmpty { words.append(encoded(chunk)) }
        return words.joined(separator: " ")
    }
}

private let hex = Array("0123456789ABCDEF")
