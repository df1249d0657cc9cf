import MoCore

/// A recursive-descent TOML 1.0 parser over UTF-8 bytes. Rule comments follow the TOML ABNF.
///
/// Invariant: `bytes` is valid UTF-8 (it comes from a `String`), so string contents can be copied byte
/// by byte and only ASCII needs inspecting.
struct TOMLParser {
    /// Control characters TOML forbids unescaped: U+0000–U+001F except tab, and U+007F.
    static func isControl(_ b: UInt8) -> Bool { (b < 0x20 && b != UInt8(ascii: "\t")) || b == 0x7F }

    private let bytes: [UInt8]
    private var i = 0
    /// Offsets where each line starts; positions are turned into line/column only when needed.
    private let lineStarts: [Int]
    private let root: MutableTable
    /// The table the current `[header]` section writes into.
    private var current: MutableTable

    init(_ text: String) {
        bytes = Array(text.utf8)
        var starts = [0]
        for (k, b) in bytes.enumerated() where b == UInt8(ascii: "\n") { starts.append(k + 1) }
        lineStarts = starts
        root = MutableTable(origin: .root, path: [], line: 1, column: 1)
        current = root
    }

    // toml = expression *( newline expression )
    // expression = ws [ comment ] / ws keyval ws [ comment ] / ws table ws [ comment ]
    mutating func parseDocument() throws(TOMLError) -> TOMLTable {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        while i < bytes.count {
            skipWhitespace()
            switch peek() {
            case nil, UInt8(ascii: "#"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                break
            case UInt8(ascii: "["):
                try parseHeader()
            default:
                try parseKeyValue(into: current)
            }
            try endOfLine()
        }
        return root.freeze()
    }

    // MARK: Tables

    // std-table = "[" ws key ws "]"
    // array-table = "[[" ws key ws "]]"
    private mutating func parseHeader() throws(TOMLError) {
        let start = i
        let isArray = peek(1) == UInt8(ascii: "[")
        i += isArray ? 2 : 1
        skipWhitespace()
        let key = try parseKey()
        skipWhitespace()
        let close = isArray ? "]]" : "]"
        guard peek() == UInt8(ascii: "]"), !isArray || peek(1) == UInt8(ascii: "]") else {
            throw error("expected '\(close)' to end the table header, found \(describeHere())")
        }
        i += isArray ? 2 : 1
        let (line, column) = location(start)

        var table = root
        for (n, part) in key.dropLast().enumerated() {
            let path = key[...n].map(\.name)
            if let slot = table[part.name] {
                switch slot.item {
                case .table(let t): table = t
                case .tableArray(let ts): table = ts[ts.count - 1]
                case .value:
                    throw error("\(TOML.dottedKey(path)) is already a value (line \(slot.line)), not a table", at: part.offset)
                }
            } else {
                let t = MutableTable(origin: .implicit, path: path, line: line, column: column)
                table[part.name] = .init(line: line, column: column, item: .table(t))
                table = t
            }
        }

        let last = key[key.count - 1]
        let path = key.map(\.name)
        let shown = TOML.dottedKey(path)
        if let slot = table[last.name] {
            switch slot.item {
            case .table(let t) where !isArray && t.origin == .implicit:
                t.origin = .header
                t.line = line
                t.column = column
                table[last.name] = .init(line: line, column: column, item: .table(t))
                current = t
            case .table(let t):
                let how = t.origin == .dotted ? " by dotted keys" : ""
                throw error("table \(shown) is already defined\(how) (line \(slot.line))", at: start)
            case .tableArray(var ts) where isArray:
                let t = MutableTable(origin: .header, path: path, line: line, column: column)
                ts.append(t)
                table[last.name] = .init(line: slot.line, column: slot.column, item: .tableArray(ts))
                current = t
            case .tableArray:
                throw error("\(shown) is already an array of tables (line \(slot.line))", at: start)
            case .value:
                throw error("\(shown) is already a value (line \(slot.line)), not a table", at: start)
            }
        } else {
            let t = MutableTable(origin: .header, path: path, line: line, column: column)
            table[last.name] = .init(line: line, column: column, item: isArray ? .tableArray([t]) : .table(t))
            current = t
        }
    }

    // MARK: Keys

    struct KeyPart {
        var name: String
        var offset: Int
    }

    // key = simple-key / dotted-key
    // dotted-key = simple-key 1*( dot-sep simple-key ); dot-sep = ws "." ws
    private mutating func parseKey() throws(TOMLError) -> [KeyPart] {
        var parts = [try parseSimpleKey()]
        while true {
            let save = i
            skipWhitespace()
            guard peek() == UInt8(ascii: ".") else { i = save; break }
            i += 1
            skipWhitespace()
            parts.append(try parseSimpleKey())
        }
        return parts
    }

    // simple-key = quoted-key / unquoted-key
    // unquoted-key = 1*( ALPHA / DIGIT / %x2D / %x5F )
    private mutating func parseSimpleKey() throws(TOMLError) -> KeyPart {
        let start = i
        switch peek() {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            let q = bytes[i]
            if peek(1) == q && peek(2) == q {
                throw error("a multi-line string cannot be a key")
            }
            let name = q == UInt8(ascii: "\"") ? try parseBasicString() : try parseLiteralString()
            return KeyPart(name: name, offset: start)
        default:
            while let b = peek(), TOML.isBareKeyByte(b) { i += 1 }
            guard i > start else { throw error("expected a key, found \(describeHere())") }
            return KeyPart(name: String(decoding: bytes[start..<i], as: UTF8.self), offset: start)
        }
    }

    // MARK: Key/value pairs

    // keyval = key keyval-sep val; keyval-sep = ws "=" ws
    private mutating func parseKeyValue(into table: MutableTable) throws(TOMLError) {
        let key = try parseKey()
        skipWhitespace()
        guard peek() == UInt8(ascii: "=") else {
            throw error("expected '=' after the key \(TOML.dottedKey(table.path + key.map(\.name))), found \(describeHere())")
        }
        i += 1
        skipWhitespace()
        let value = try parseValue(path: table.path + key.map(\.name))

        // Dotted keys walk (and create) tables that only dotted keys made (TOML 1.0, "Keys" and "Table").
        var target = table
        for (n, part) in key.dropLast().enumerated() {
            let path = table.path + key[...n].map(\.name)
            let shown = TOML.dottedKey(path)
            if let slot = target[part.name] {
                switch slot.item {
                case .table(let t) where t.origin == .dotted:
                    target = t
                case .table:
                    throw error("table \(shown) is already defined (line \(slot.line)); dotted keys cannot add to it", at: part.offset)
                case .tableArray:
                    throw error("\(shown) is an array of tables (line \(slot.line)); dotted keys cannot add to it", at: part.offset)
                case .value(let node):
                    if case .table = node.value {
                        throw error("\(shown) is an inline table (line \(slot.line)); it cannot be extended", at: part.offset)
                    }
                    throw error("\(shown) is already a value (line \(slot.line)), not a table", at: part.offset)
                }
            } else {
                let (line, column) = location(part.offset)
                let t = MutableTable(origin: .dotted, path: path, line: line, column: column)
                target[part.name] = .init(line: line, column: column, item: .table(t))
                target = t
            }
        }
        let last = key[key.count - 1]
        if let slot = target[last.name] {
            let shown = TOML.dottedKey(table.path + key.map(\.name))
            throw error("duplicate key \(shown) (first defined on line \(slot.line))", at: last.offset)
        }
        let (line, column) = location(key[0].offset)
        target[last.name] = .init(line: line, column: column, item: .value(value))
    }

    // MARK: Values

    // val = string / boolean / array / inline-table / date-time / float / integer
    private mutating func parseValue(path: [String]) throws(TOMLError) -> TOMLNode {
        let start = i
        let (line, column) = location(start)
        func node(_ v: TOMLValue) -> TOMLNode { TOMLNode(v, line: line, column: column) }
        switch peek() {
        case UInt8(ascii: "\""):
            if peek(1) == UInt8(ascii: "\"") && peek(2) == UInt8(ascii: "\"") {
                return node(.string(try parseMultiLineString(UInt8(ascii: "\""))))
            }
            return node(.string(try parseBasicString()))
        case UInt8(ascii: "'"):
            if peek(1) == UInt8(ascii: "'") && peek(2) == UInt8(ascii: "'") {
                return node(.string(try parseMultiLineString(UInt8(ascii: "'"))))
            }
            return node(.string(try parseLiteralString()))
        case UInt8(ascii: "["):
            return node(.array(try parseArray(path: path)))
        case UInt8(ascii: "{"):
            return node(.table(try parseInlineTable(path: path)))
        default:
            if matchWord("true") { return node(.bool(true)) }
            if matchWord("false") { return node(.bool(false)) }
            return node(try parseNumber())
        }
    }

    /// Consumes `word` if it is next and not followed by more key-like characters.
    private mutating func matchWord(_ word: String) -> Bool {
        let w = Array(word.utf8)
        guard bytes[i...].starts(with: w) else { return false }
        if let next = peek(w.count), TOML.isBareKeyByte(next) || next == UInt8(ascii: ".") { return false }
        i += w.count
        return true
    }

    // array = array-open [ array-values ] ws-comment-newline array-close
    // array-values = ws-comment-newline val ws-comment-newline [ array-sep array-values ]
    private mutating func parseArray(path: [String]) throws(TOMLError) -> [TOMLNode] {
        i += 1
        var items: [TOMLNode] = []
        while true {
            try skipWhitespaceCommentsNewlines()
            if peek() == UInt8(ascii: "]") { i += 1; return items }
            items.append(try parseValue(path: path))
            try skipWhitespaceCommentsNewlines()
            switch peek() {
            case UInt8(ascii: ","): i += 1
            case UInt8(ascii: "]"): i += 1; return items
            default: throw error("expected ',' or ']' in the array, found \(describeHere())")
            }
        }
    }

    // inline-table = "{" ws [ inline-table-keyvals ] ws "}"
    // inline-table-keyvals = keyval [ ws "," ws inline-table-keyvals ]
    private mutating func parseInlineTable(path: [String]) throws(TOMLError) -> TOMLTable {
        let (line, column) = location(i)
        i += 1
        let table = MutableTable(origin: .dotted, path: path, line: line, column: column)
        skipWhitespace()
        if peek() == UInt8(ascii: "}") { i += 1; return table.freeze() }
        while true {
            skipWhitespace()
            try parseKeyValue(into: table)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                i += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "}") { throw error("a trailing comma is not allowed in an inline table") }
            case UInt8(ascii: "}"):
                i += 1
                return table.freeze()
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                throw error("an inline table must be on one line (TOML 1.0)")
            default:
                throw error("expected ',' or '}' in the inline table, found \(describeHere())")
            }
        }
    }

    // MARK: Numbers

    // integer = dec-int / hex-int / oct-int / bin-int
    // float = float-int-part ( exp / frac [ exp ] ) / special-float
    private mutating func parseNumber() throws(TOMLError) -> TOMLValue {
        let start = i
        if looksLikeDate() { throw error("dates are not supported here") }
        while let b = peek(), TOML.isBareKeyByte(b) || b == UInt8(ascii: "+") || b == UInt8(ascii: ".") { i += 1 }
        let token = String(decoding: bytes[start..<i], as: UTF8.self)
        guard !token.isEmpty else {
            i = start
            throw error("expected a value, found \(describeHere())")
        }
        do {
            return try NumberSyntax.parse(token)
        } catch {
            throw self.error(error.message, at: start)
        }
    }

    /// `1979-05-27`, `07:32:00`: four digits and '-', or two digits and ':'.
    private func looksLikeDate() -> Bool {
        func digits(_ n: Int) -> Bool { (0..<n).allSatisfy { peek($0).map(ASCII.isDigit) ?? false } }
        return (digits(4) && peek(4) == UInt8(ascii: "-")) || (digits(2) && peek(2) == UInt8(ascii: ":"))
    }

    // MARK: Strings

    // basic-string = quotation-mark *basic-char quotation-mark
    private mutating func parseBasicString() throws(TOMLError) -> String {
        let start = i
        i += 1
        var out: [UInt8] = []
        while true {
            guard let b = peek() else { throw error("unterminated string", at: start) }
            switch b {
            case UInt8(ascii: "\""):
                i += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try parseEscape(into: &out)
            case _ where b == UInt8(ascii: "\n") || (b == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n")):
                throw error("unterminated string (a single-line string cannot span lines; use \"\"\")", at: start)
            default:
                try checkStringByte(b)
                out.append(b)
                i += 1
            }
        }
    }

    // ml-basic-string = ml-basic-string-delim [ newline ] ml-basic-body ml-basic-string-delim
    // ml-literal-string = ml-literal-string-delim [ newline ] ml-literal-body ml-literal-string-delim
    /// Both multi-line forms: `delimiter` is the quote or the apostrophe; only the basic form (quote) has
    /// escapes.
    private mutating func parseMultiLineString(_ delimiter: UInt8) throws(TOMLError) -> String {
        let start = i
        i += 3
        skipNewline()
        var out: [UInt8] = []
        while true {
            guard let b = peek() else { throw error("unterminated multi-line string", at: start) }
            switch b {
            case delimiter:
                if let closed = try closeQuoteRun(delimiter, into: &out) { return closed }
            case UInt8(ascii: "\\") where delimiter == UInt8(ascii: "\""):
                // mlb-escaped-nl = escape ws newline *( wschar / newline ): a line-ending backslash
                // swallows the newline and all whitespace up to the next content.
                var j = i + 1
                while j < bytes.count, bytes[j] == UInt8(ascii: " ") || bytes[j] == UInt8(ascii: "\t") { j += 1 }
                if j < bytes.count,
                    bytes[j] == UInt8(ascii: "\n")
                        || (bytes[j] == UInt8(ascii: "\r") && j + 1 < bytes.count && bytes[j + 1] == UInt8(ascii: "\n"))
                {
                    i = j
                    while let c = peek(),
                        c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\n")
                            || (c == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n"))
                    {
                        i += 1
                    }
                } else {
                    try parseEscape(into: &out)
                }
            case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"):
                out.append(UInt8(ascii: "\n"))
                i += 2
            case UInt8(ascii: "\n"):
                out.append(b)
                i += 1
            default:
                try checkStringByte(b)
                out.append(b)
                i += 1
            }
        }
    }

    // literal-string = apostrophe *literal-char apostrophe
    private mutating func parseLiteralString() throws(TOMLError) -> String {
        let start = i
        i += 1
        let contentStart = i
        while true {
            guard let b = peek() else { throw error("unterminated string", at: start) }
            switch b {
            case UInt8(ascii: "'"):
                i += 1
                return String(decoding: bytes[contentStart..<(i - 1)], as: UTF8.self)
            case _ where b == UInt8(ascii: "\n") || (b == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n")):
                throw error("unterminated string (a single-line string cannot span lines; use ''')", at: start)
            default:
                try checkStringByte(b)
                i += 1
            }
        }
    }

    /// Handles a run of quote characters inside a multi-line string. Up to two quotes may sit right
    /// before the closing delimiter (`""""a""""` is not allowed, `"""a"""""` is `a""`).
    /// Returns the finished string when the run closes it.
    private mutating func closeQuoteRun(_ q: UInt8, into out: inout [UInt8]) throws(TOMLError) -> String? {
        var n = 0
        while peek(n) == q { n += 1 }
        if n < 3 {
            out.append(contentsOf: repeatElement(q, count: n))
            i += n
            return nil
        }
        if n > 5 { throw error("too many quotes at the end of a multi-line string", at: i + 5) }
        out.append(contentsOf: repeatElement(q, count: n - 3))
        i += n
        return String(decoding: out, as: UTF8.self)
    }

    // escaped = escape escape-seq-char
    // escape-seq-char = %x22 / %x5C / %x62 / %x66 / %x6E / %x72 / %x74 / %x75 4HEXDIG / %x55 8HEXDIG
    private mutating func parseEscape(into out: inout [UInt8]) throws(TOMLError) {
        let start = i
        i += 1
        guard let c = peek() else { throw error("unterminated string", at: start) }
        i += 1
        switch c {
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "t"): out.append(UInt8(ascii: "\t"))
        case UInt8(ascii: "n"): out.append(UInt8(ascii: "\n"))
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "r"): out.append(UInt8(ascii: "\r"))
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(c)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = c == UInt8(ascii: "u") ? 4 : 8
            var value: UInt32 = 0
            for k in 0..<count {
                guard let h = peek(k), let d = ASCII.hexValue(h) else {
                    throw error("\\\(Character(Unicode.Scalar(c))) needs \(count) hex digits", at: start)
                }
                value = value << 4 | UInt32(d)
            }
            i += count
            guard let scalar = Unicode.Scalar(value) else {
                let text = String(decoding: bytes[start..<i], as: UTF8.self)
                throw error("\(text) is not a Unicode scalar value", at: start)
            }
            out.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            let shown = c < 0x20 || c == 0x7F ? "U+" + TOML.hex4(UInt32(c)) : String(Character(Unicode.Scalar(c)))
            throw error("invalid escape sequence '\\\(shown)'", at: start)
        }
    }

    /// Control characters other than tab must be escaped in strings.
    private func checkStringByte(_ b: UInt8) throws(TOMLError) {
        if TOMLParser.isControl(b) {
            throw error("control character U+\(TOML.hex4(UInt32(b))) must be escaped")
        }
    }

    // MARK: Whitespace, comments, newlines

    // ws = *wschar; wschar = %x20 / %x09
    private mutating func skipWhitespace() {
        while let b = peek(), b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") { i += 1 }
    }

    // newline = %x0A / %x0D.0A
    private mutating func skipNewline() {
        if peek() == UInt8(ascii: "\n") { i += 1 } else if peek() == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n") { i += 2 }
    }

    // comment = "#" *non-eol
    private mutating func skipComment() throws(TOMLError) {
        i += 1
        while let b = peek(), b != UInt8(ascii: "\n") {
            if b == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n") { return }
            if TOMLParser.isControl(b) {
                throw error("control character U+\(TOML.hex4(UInt32(b))) in a comment")
            }
            i += 1
        }
    }

    // ws-comment-newline = *( wschar / [ comment ] newline )
    private mutating func skipWhitespaceCommentsNewlines() throws(TOMLError) {
        while let b = peek() {
            switch b {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"): i += 1
            case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"): i += 2
            case UInt8(ascii: "#"): try skipComment()
            default: return
            }
        }
    }

    /// After an expression: optional whitespace and comment, then a newline or the end.
    private mutating func endOfLine() throws(TOMLError) {
        skipWhitespace()
        if peek() == UInt8(ascii: "#") { try skipComment() }
        switch peek() {
        case nil: return
        case UInt8(ascii: "\n"): i += 1
        case UInt8(ascii: "\r") where peek(1) == UInt8(ascii: "\n"): i += 2
        case let b? where TOMLParser.isControl(b):
            throw error("control character U+\(TOML.hex4(UInt32(b))) is not allowed here")
        default:
            throw error("expected the end of the line, found \(describeHere())")
        }
    }

    // MARK: Positions and errors

    private func peek(_ offset: Int = 0) -> UInt8? {
        i + offset < bytes.count ? bytes[i + offset] : nil
    }

    /// 1-based line and column (in Unicode scalars) of a byte offset.
    private func location(_ offset: Int) -> (line: Int, column: Int) {
        var lo = 0, hi = lineStarts.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if lineStarts[mid] <= offset { lo = mid } else { hi = mid - 1 }
        }
        let scalars = bytes[lineStarts[lo]..<min(offset, bytes.count)].reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        return (lo + 1, scalars + 1)
    }

    private func error(_ message: String, at offset: Int? = nil) -> TOMLError {
        let (line, column) = location(offset ?? i)
        return TOMLError(line: line, column: column, message)
    }

    /// What is at the current position, for "found …" in messages.
    private func describeHere() -> String {
        guard let b = peek() else { return "the end of the file" }
        if b == UInt8(ascii: "\n") || (b == UInt8(ascii: "\r") && peek(1) == UInt8(ascii: "\n")) { return "the end of the line" }
        if TOMLParser.isControl(b) { return "U+" + TOML.hex4(UInt32(b)) }
        var end = i + 1
        while end < bytes.count, bytes[end] & 0xC0 == 0x80 { end += 1 }
        return "'" + escapedForMessage(bytes: bytes[i..<end]) + "'"
    }
}
