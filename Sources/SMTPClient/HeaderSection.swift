/// The header fields of a raw message, located by byte range; the body is never touched.
///
/// Lenient on purpose: it reads what mail programs hand to sendmail (LF or CRLF, a leading mbox "From "
/// line, a missing body). A field is its first line plus every following line that starts with SP or HT.
struct HeaderSection {
    struct Field {
        /// The field name as written (empty for a line without a colon).
        let name: String
        /// The raw bytes of the field: all its lines with their line ends.
        let range: Range<Int>
        /// The unfolded value after the colon, line ends removed, leading whitespace dropped.
        let value: String
    }

    let fields: [Field]
    /// Index of the blank line ending the header section, or the message end when there is none.
    let end: Int
    /// Whether the header's last line lacks a line end (a message of headers only, cut short).
    let lastLineOpen: Bool
    /// The line end the message uses ("\r\n" or "\n"), judged from its first line.
    let lineEnd: [UInt8]

    init(_ message: [UInt8]) {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var lines: [Range<Int>] = []  // each with its line end
        var i = 0
        var end = message.count
        var open = false
        while i < message.count {
            var j = i
            while j < message.count && message[j] != lf { j += 1 }
            let hasLF = j < message.count
            let next = hasLF ? j + 1 : j
            let contentEnd = hasLF && j > i && message[j - 1] == cr ? j - 1 : j
            if hasLF && contentEnd == i { end = i; break }  // the blank line before the body
            lines.append(i..<next)
            if !hasLF { open = true }
            i = next
        }
        var fields: [Field] = []
        var current: (start: Int, stop: Int)?
        func flush() {
            guard let c = current else { return }
            fields.append(Self.field(message, c.start..<c.stop))
        }
        for line in lines {
            let first = message[line.lowerBound]
            if (first == UInt8(ascii: " ") || first == UInt8(ascii: "\t")) && current != nil {
                current!.stop = line.upperBound
            } else {
                flush()
                current = (line.lowerBound, line.upperBound)
            }
        }
        flush()
        self.fields = fields
        self.end = end
        self.lastLineOpen = open
        if let first = lines.first, first.upperBound >= 2, message[first.upperBound - 1] == lf,
            message[first.upperBound - 2] == cr
        {
            lineEnd = [cr, lf]
        } else if lines.isEmpty && message.count >= 2 && message[0] == cr && message[1] == lf {
            lineEnd = [cr, lf]
        } else {
            lineEnd = [lf]
        }
    }

    private static func field(_ message: [UInt8], _ range: Range<Int>) -> Field {
        let raw = message[range]
        guard let colon = raw.firstIndex(of: UInt8(ascii: ":")),
            !raw[range.lowerBound..<colon].contains(where: {
                $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r")
            })
        else {
            return Field(name: "", range: range, value: "")
        }
        let name = String(decoding: raw[range.lowerBound..<colon], as: UTF8.self)
        // Unfold: drop CR and LF; the WSP that starts each continuation line stays (RFC 5322 §2.2.3).
        let unfolded = raw[(colon + 1)...].filter { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: "\r") }
        let value = String(decoding: unfolded.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }, as: UTF8.self)
        return Field(name: name, range: range, value: value)
    }

    func first(_ name: String) -> Field? {
        let lower = name.lowercased()
        return fields.first { $0.name.lowercased() == lower }
    }

    func all(_ names: Set<String>) -> [Field] {
        fields.filter { names.contains($0.name.lowercased()) }
    }
}
