/// What a server announced in its EHLO reply (RFC 5321 §4.1.1.1 and the extensions we use).
public struct SMTPCapabilities: Sendable, Equatable {
    /// The first line of the reply: the server's name and greeting text.
    public var greeting: String
    /// Every keyword, upper-cased, with its parameters as sent.
    public var keywords: [String: [String]]

    public init(greeting: String = "", keywords: [String: [String]] = [:]) {
        self.greeting = greeting
        self.keywords = keywords
    }

    /// Parses a 250 reply to EHLO. Lines after the first are `keyword *(SP param)`.
    public init(ehloReply reply: SMTPReply) {
        greeting = reply.lines[0]
        keywords = [:]
        for line in reply.lines.dropFirst() {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard var keyword = words.first?.uppercased() else { continue }
            var params = Array(words.dropFirst())
            // Old servers (pre-RFC 2554 drafts) write "AUTH=PLAIN LOGIN".
            if keyword.hasPrefix("AUTH=") {
                params.insert(String(keyword.dropFirst(5)), at: 0)
                keyword = "AUTH"
            }
            keywords[keyword, default: []].append(contentsOf: params)
        }
    }

    public func offers(_ keyword: String) -> Bool { keywords[keyword.uppercased()] != nil }

    /// RFC 1870: the largest message accepted, in bytes; nil when not announced or announced as 0 (no limit).
    public var maxSize: Int? {
        guard let value = keywords["SIZE"]?.first, let n = Int(value), n > 0 else { return nil }
        return n
    }
    public var sizeExtension: Bool { offers("SIZE") }
    public var eightBitMIME: Bool { offers("8BITMIME") }
    public var smtpUTF8: Bool { offers("SMTPUTF8") }
    public var dsn: Bool { offers("DSN") }
    public var pipelining: Bool { offers("PIPELINING") }
    public var startTLS: Bool { offers("STARTTLS") }
    public var enhancedStatusCodes: Bool { offers("ENHANCEDSTATUSCODES") }
    /// SASL mechanisms, upper-cased, in the server's order.
    public var authMechanisms: [String] {
        var seen: [String] = []
        for m in keywords["AUTH"] ?? [] where !seen.contains(m.uppercased()) { seen.append(m.uppercased()) }
        return seen
    }
}
