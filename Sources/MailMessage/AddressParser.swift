/// One mailbox from an address header.
public struct MailAddress: Sendable, Equatable, CustomStringConvertible {
    /// The display name, decoded (RFC 2047, quotes and escapes removed); nil when there is none.
    public var name: String?
    /// The addr-spec as written (`local@domain`), blanks and comments removed; may lack an `@` in
    /// broken headers.
    public var address: String

    public init(name: String?, address: String) {
        self.name = name
        self.address = address
    }

    public var description: String { name.map { "\($0) <\(address)>" } ?? address }
}

/// Address-list parsing (RFC 5322 §3.4 plus the obsolete forms and what real mailers write).
/// Best effort: never fails; unparseable pieces are dropped or kept as bare text.
public enum AddressParser {
    /// Parses an address-list header value (raw or unfolded bytes; folding is tolerated).
    /// Handles `Name <a@b>`, `a@b (Comment)`, quoted names with escapes, encoded-word names,
    /// groups (`Team: a@b, c@d;`, `undisclosed-recipients:;` gives none), source routes, and
    /// missing `>`, quotes or parentheses (they close at the end of input).
    ///
    /// `keepingQuotes`: a quoted local part keeps its quotes (`"a b"@c`), as an SMTP envelope needs it;
    /// without, they are removed (`a b@c`), as the index stores addresses.
    public static func parse<C: Collection>(_ value: C, keepingQuotes: Bool = false) -> [MailAddress] where C.Element == UInt8 {
        var p = State(Array(value), keepQuotes: keepingQuotes)
        p.run()
        return p.result
    }

    /// Parses a header value given as a `String`.
    public static func parse(_ value: String, keepingQuotes: Bool = false) -> [MailAddress] {
        parse(Array(value.utf8), keepingQuotes: keepingQuotes)
    }

    private struct State {
        let s: [UInt8]
        var i = 0
        var result = [MailAddress]()
        // The mailbox being read.
        var phrase = [[UInt8]]()  // words before '<' (quoted strings unquoted)
        var phraseHasQuoted = false
        var angle: [UInt8]? = nil  // <...> content
        var comments = [[UInt8]]()
        var inGroup = false

        let keepQuotes: Bool

        init(_ s: [UInt8], keepQuotes: Bool) {
            self.s = s
            self.keepQuotes = keepQuotes
        }

        mutating func run() {
            let n = s.count
            while i < n {
                let b = s[i]
                switch b {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                    i += 1
                case UInt8(ascii: "\""):
                    let start = i
                    let word = quoted()
                    if i < n, s[i] == UInt8(ascii: "@") {
                        // A quoted local part (`"a b"@example.com`): one addr-spec word, as in `<...>`.
                        let quotedEnd = i
                        let domain = atom()
                        phrase.append(keepQuotes ? Array(s[start..<quotedEnd]) + domain : word + domain)
                    } else {
                        phrase.append(word)
                        phraseHasQuoted = true
                    }
                case UInt8(ascii: "("):
                    comments.append(comment())
                case UInt8(ascii: "<"):
                    i += 1
                    angle = angleAddr()
                case UInt8(ascii: ","):
                    emit()
                    i += 1
                case UInt8(ascii: ";"):
                    emit()
                    inGroup = false
                    i += 1
                case UInt8(ascii: ":") where !inGroup && angle == nil:
                    // Group start: what came before is the group's name, not a mailbox.
                    phrase.removeAll(); comments.removeAll(); phraseHasQuoted = false
                    inGroup = true
                    i += 1
                default:
                    phrase.append(atom())
                }
            }
            emit()
        }

        /// A run of bytes up to a blank or a structural special. `.` and `@` stay inside atoms, so an
        /// unbracketed addr-spec is one word.
        mutating func atom() -> [UInt8] {
            let start = i
            while i < s.count {
                let b = s[i]
                if b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n")
                    || b == UInt8(ascii: "\"") || b == UInt8(ascii: "(")
                    || b == UInt8(ascii: "<") || b == UInt8(ascii: ",") || b == UInt8(ascii: ";")
                    || (b == UInt8(ascii: ":") && !inGroup && angle == nil)
                {
                    break
                }
                i += 1
            }
            if i == start { i += 1; return [s[start]] }  // a lone special such as '>' or ':'
            return Array(s[start..<i])
        }

        /// A quoted string starting at `"`; escapes removed; ends at the closing quote or the input's end.
        mutating func quoted() -> [UInt8] {
            var out = [UInt8]()
            i += 1
            while i < s.count {
                let b = s[i]
                if b == UInt8(ascii: "\\"), i + 1 < s.count { out.append(s[i + 1]); i += 2; continue }
                if b == UInt8(ascii: "\"") { i += 1; return out }
                if b != UInt8(ascii: "\r") && b != UInt8(ascii: "\n") { out.append(b) }
                i += 1
            }
            return out
        }

        /// A comment starting at `(`, nesting and escapes honoured; its text without the outer parentheses.
        mutating func comment() -> [UInt8] {
            var out = [UInt8]()
            var depth = 0
            while i < s.count {
                let b = s[i]
                if b == UInt8(ascii: "\\"), i + 1 < s.count { out.append(s[i + 1]); i += 2; continue }
                if b == UInt8(ascii: "(") {
                    depth += 1
                    if depth > 1 { out.append(b) }
                } else if b == UInt8(ascii: ")") {
                    depth -= 1
                    if depth == 0 { i += 1; return out }
                    out.append(b)
                } else if b != UInt8(ascii: "\r") && b != UInt8(ascii: "\n") {
                    out.append(b)
                }
                i += 1
            }
            return out
        }

        /// The addr-spec inside `<...>`: blanks and comments dropped, quoted local parts kept (their quotes
        /// removed unless `keepQuotes`), a source route (`@a,@b:`) dropped. Ends at `>` or the input's end.
        mutating func angleAddr() -> [UInt8] {
            var out = [UInt8]()
            while i < s.count {
                let b = s[i]
                switch b {
                case UInt8(ascii: ">"):
                    i += 1
                    return stripRoute(out)
                case UInt8(ascii: "("):
                    _ = comment()
                case UInt8(ascii: "\""):
                    let start = i
                    let word = quoted()
                    out += keepQuotes ? Array(s[start..<i]) : word
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                    i += 1
                default:
                    out.append(b)
                    i += 1
                }
            }
            return stripRoute(out)
        }

        func stripRoute(_ a: [UInt8]) -> [UInt8] {
            guard a.first == UInt8(ascii: "@"), let colon = a.firstIndex(of: UInt8(ascii: ":")) else { return a }
            return Array(a[(colon + 1)...])
        }

        static func decodePhrase(_ words: [[UInt8]]) -> String? {
            guard !words.isEmpty else { return nil }
            var joined = [UInt8]()
            for (k, w) in words.enumerated() {
                if k > 0 { joined.append(UInt8(ascii: " ")) }
                joined += w
            }
            let text = EncodedWords.decode(joined).trimmingCharacters(whereSpace: true)
            return text.isEmpty ? nil : text
        }

        mutating func emit() {
            defer {
                phrase.removeAll(); comments.removeAll(); angle = nil; phraseHasQuoted = false
            }
            if let a = angle {
                let address = String(decoding: a, as: UTF8.self)
                var name = Self.decodePhrase(phrase)
                if name == nil, let c = comments.first { name = Self.decodePhrase([c]) }
                if address.isEmpty && name == nil { return }
                result.append(MailAddress(name: name, address: address))
                return
            }
            guard !phrase.isEmpty else { return }
            // No angle brackets: the word holding '@' is the address (the last one if several);
            // other words are junk of a broken header and become the name.
            if let k = phrase.lastIndex(where: { $0.contains(UInt8(ascii: "@")) }) {
                let address = String(decoding: phrase[k], as: UTF8.self)
                var rest = phrase
                rest.remove(at: k)
                var name = Self.decodePhrase(rest)
                if let c = comments.first, let cn = Self.decodePhrase([c]) { name = name ?? cn }
                result.append(MailAddress(name: name, address: address))
            } else {
                // No '@': keep the text as an address so nothing silently vanishes (e.g. local users).
                let text = Self.decodePhrase(phrase) ?? ""
                if !text.isEmpty { result.append(MailAddress(name: nil, address: text)) }
            }
        }
    }
}

extension String {
    func trimmingCharacters(whereSpace: Bool) -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s.removeFirst() }
        while let l = s.last, l.isWhitespace { s.removeLast() }
        return String(s)
    }
}
