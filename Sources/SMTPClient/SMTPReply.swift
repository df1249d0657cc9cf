/// One complete server reply: a three-digit code and its text lines (RFC 5321 §4.2).
///
/// A multi-line reply (`250-a`, `250-b`, `250 c`) becomes one value whose `lines` are `["a", "b", "c"]`.
public struct SMTPReply: Sendable, Equatable, CustomStringConvertible {
    /// The reply code, 200...599.
    public let code: Int
    /// The text after `ddd-` / `ddd ` on each line, undecoded apart from lossy UTF-8.
    public let lines: [String]

    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines.isEmpty ? [""] : lines
    }

    /// 2xx: the command succeeded.
    public var isSuccess: Bool { (200..<300).contains(code) }
    /// 3xx: the server waits for more (DATA's 354, AUTH's 334).
    public var isIntermediate: Bool { (300..<400).contains(code) }
    /// 4xx: failed now, worth retrying later.
    public var isTransientFailure: Bool { (400..<500).contains(code) }
    /// 5xx: failed for good.
    public var isPermanentFailure: Bool { (500..<600).contains(code) }

    /// The RFC 3463 status at the start of the first line (`5.1.1`), when its class matches the code's.
    public var enhancedStatus: EnhancedStatusCode? {
        guard let status = EnhancedStatusCode(prefixOf: lines[0]), status.statusClass == code / 100 else { return nil }
        return status
    }

    /// The reply as the server wrote it, lines joined by a space: `550 5.1.1 <x@y>: Recipient address rejected`.
    public var description: String {
        "\(code) " + lines.joined(separator: " ")
    }
}

/// An RFC 3463 enhanced status code `class.subject.detail`, e.g. `5.1.1` (bad destination mailbox).
public struct EnhancedStatusCode: Sendable, Equatable, CustomStringConvertible {
    public let statusClass: Int
    public let subject: Int
    public let detail: Int

    public var description: String { "\(statusClass).\(subject).\(detail)" }
}

extension EnhancedStatusCode {
    /// Parses `c.s.d` (class 2, 4 or 5; subject and detail 1–3 digits) followed by a space or the end.
    init?(prefixOf text: String) {
        var parts: [Int] = []
        var digits = 0, value = 0
        var rest = Substring(text)
        while let ch = rest.first, parts.count < 3 {
            if let d = ch.wholeNumberValue, ch.isASCII {
                digits += 1; value = value * 10 + d
                guard digits <= 3 else { return nil }
            } else if ch == "." && parts.count < 2 && digits > 0 {
                parts.append(value); digits = 0; value = 0
            } else {
                break
            }
            rest = rest.dropFirst()
        }
        guard parts.count == 2, digits > 0 else { return nil }
        parts.append(value)
        guard rest.isEmpty || rest.first == " " else { return nil }
        guard [2, 4, 5].contains(parts[0]), String(parts[0]).count == 1 else { return nil }
        self.init(statusClass: parts[0], subject: parts[1], detail: parts[2])
    }
}
