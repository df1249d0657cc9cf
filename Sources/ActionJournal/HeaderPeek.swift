import SMTPClient

/// Reads single header fields of a raw message (LF or CRLF, folded lines), for summaries and choices.
public enum HeaderPeek {
    /// The unfolded value of the first field called `name` (any case), trimmed; nil when absent.
    public static func value(_ name: String, in message: [UInt8]) -> String? {
        let lower = name.lowercased()
        var result: String?
        var collecting = false
        forEachHeaderLine(message) { line in
            if collecting {
                if let first = line.first, first == " " || first == "\t" {
                    result! += " " + line.trimmingWhitespace()
                    return true
                }
                return false
            }
            if let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == lower {
                result = String(line[line.index(after: colon)...]).trimmingWhitespace()
                collecting = true
            }
            return true
        }
        return result
    }

    /// The addr-specs in an address-list value (`"A" <a@x>, b@y`).
    public static func addresses(in value: String) -> [String] {
        OutgoingMessage.recipients(fromHeadersOf: Array("To: \(value)\n\n".utf8))
    }

    /// Calls `body` with each header line (without its line end) until it returns false or the header ends.
    private static func forEachHeaderLine(_ message: [UInt8], _ body: (String) -> Bool) {
        var start = 0
        while start < message.count {
            let lf = message[start...].firstIndex(of: UInt8(ascii: "\n")) ?? message.count
            var end = lf
            if end > start && message[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            if end == start { return }
            if !body(String(decoding: message[start..<end], as: UTF8.self)) { return }
            start = lf + 1
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}

extension HeaderPeek {
    /// The message with `field` (e.g. `From: Me <me@x>`, no line end) added at the end of its header,
    /// using the message's own line end. The body is copied unchanged.
    public static func adding(field: String, to message: [UInt8]) -> [UInt8] {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r")
        var start = 0
        var headerEnd = message.count  // index where the blank line (or the end) begins
        var crlf = false
        var first = true
        while start < message.count {
            let nl = message[start...].firstIndex(of: lf)
            let end = nl ?? message.count
            let contentEnd = end > start && message[end - 1] == cr ? end - 1 : end
            if first { crlf = contentEnd != end; first = false }
            if nl != nil && contentEnd == start { headerEnd = start; break }
            guard let nl else { headerEnd = message.count; break }
            start = nl + 1
        }
        let lineEnd: [UInt8] = crlf ? [cr, lf] : [lf]
        var out = Array(message[0..<headerEnd])
        if let last = out.last, last != lf { out += lineEnd }  // a header cut short without a line end
        out += Array(field.utf8) + lineEnd
        if headerEnd == message.count { out += lineEnd } else { out += message[headerEnd...] }
        return out
    }
}
