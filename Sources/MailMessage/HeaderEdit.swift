/// Edits of a raw message's header section that leave the body's bytes alone, for a sender (mo-sendmail,
/// the action journal): fields added at the end of the section in the message's own line end, fields
/// removed with their continuation lines. The fields are `HeaderBlock`'s, the one reader of header
/// sections, read with `strictStart: false` (a mail program's odd first line must not hide a Bcc).
///
/// The section ends at the first empty line, or at the end of a message that has none; its line end is
/// judged from the first line (CRLF or LF), and a section cut short without one gets one before a field
/// is added after it.
public enum HeaderEdit {
    /// The message with `fields` (whole lines without their line end, e.g. `Date: …`) added at the end
    /// of its header section; the blank line that ends the section is supplied when there is none.
    public static func adding(_ fields: [String], to message: [UInt8]) -> [UInt8] {
        guard !fields.isEmpty else { return message }
        let section = Section(message)
        var out: [UInt8] = []
        out.reserveCapacity(message.count + fields.reduce(0) { $0 + $1.utf8.count + 2 } + 2)
        out.append(contentsOf: message[0..<section.end])
        if section.lastLineOpen { out.append(contentsOf: section.lineEnd) }
        for field in fields { out.append(contentsOf: Array(field.utf8) + section.lineEnd) }
        if section.end == message.count {
            out.append(contentsOf: section.lineEnd)  // a message without body still needs its blank line
        } else {
            out.append(contentsOf: message[section.end...])
        }
        return out
    }

    /// The message without the fields of these names (any case), continuation lines included.
    public static func removing(_ names: Set<String>, from message: [UInt8]) -> [UInt8] {
        let lower = Set(names.map { $0.lowercased() })
        let drop = fields(of: message).fields.filter { lower.contains($0.name.lowercased()) }
        guard !drop.isEmpty else { return message }
        var out: [UInt8] = []
        out.reserveCapacity(message.count)
        var position = 0
        for field in drop {
            out.append(contentsOf: message[position..<field.range.lowerBound])
            position = field.range.upperBound
        }
        out.append(contentsOf: message[position...])
        return out
    }

    /// The unfolded value of the first field called `name` (any case), as a sender reads it (not decoded:
    /// RFC 2047 words stay as written); nil when absent.
    public static func value(_ name: String, in message: [UInt8]) -> String? {
        fields(of: message).first(name).map { String(decoding: $0.unfoldedValue, as: UTF8.self) }
    }

    /// The header fields as a sender reads them (`strictStart: false`).
    public static func fields(of message: [UInt8]) -> HeaderBlock {
        HeaderBlock.parse(message, strictStart: false)
    }

    /// Where the header section ends, whether its last line lacks a line end, and the line end in use.
    struct Section {
        let end: Int
        let lastLineOpen: Bool
        let lineEnd: [UInt8]

        init(_ message: [UInt8]) {
            let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
            var i = 0, end = message.count, open = false
            var firstLineCRLF: Bool?
            while i < message.count {
                let j = message[i...].firstIndex(of: lf) ?? message.count
                let hasLF = j < message.count
                let contentEnd = hasLF && j > i && message[j - 1] == cr ? j - 1 : j
                if firstLineCRLF == nil { firstLineCRLF = hasLF && contentEnd != j }
                if hasLF && contentEnd == i { end = i; break }  // the blank line before the body
                if !hasLF { open = true }
                i = hasLF ? j + 1 : j
            }
            self.end = end
            self.lastLineOpen = open
            self.lineEnd = firstLineCRLF == true ? [cr, lf] : [lf]
        }
    }
}
