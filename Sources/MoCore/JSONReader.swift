/// The one JSON reader (RFC 8259), for what servers send: OAuth2 token and discovery responses, and JMAP.
/// Strict: one value and nothing after it but whitespace, no comments, no trailing commas, strings valid
/// UTF-8 with their escapes checked (a lone surrogate is an error), numbers as the grammar says. Limits are
/// options, so hostile input costs what the caller allows. Whole input, no I/O: a response body is bounded
/// before it is read.
///
///     value  = object / array / string / number / "true" / "false" / "null"
///     object = "{" ws [ string ws ":" ws value *( ws "," ws string ws ":" ws value ) ] ws "}"
///     array  = "[" ws [ value *( ws "," ws value ) ] ws "]"
///     number = [ "-" ] ( "0" / digit1-9 *digit ) [ "." 1*digit ] [ ( "e" / "E" ) [ "+" / "-" ] 1*digit ]
public struct JSONReader {
    public struct Limits: Sendable {
        /// Objects and arrays nested deeper than this are refused (the reader recurses once per level).
        public var depth = 64
        /// Members of one object, or items of one array.
        public var items = 100_000
        public init() {}
    }

    /// Why input is not JSON, and the byte offset where that was found.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public init(offset: Int, reason: String) {
            self.offset = offset
            self.reason = reason
        }
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    public static func parse(_ bytes: [UInt8], limits: Limits = Limits()) throws(Problem) -> JSONValue {
        var reader = JSONReader(bytes: bytes, limits: limits)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.pos == bytes.count else { throw reader.fail("unexpected bytes after the value") }
        return value
    }

    private let bytes: [UInt8]
    private let limits: Limits
    private var pos = 0

    private init(bytes: [UInt8], limits: Limits) {
        self.bytes = bytes
        self.limits = limits
    }

    private func fail(_ reason: String) -> Problem { Problem(offset: pos, reason: reason) }

    private mutating func skipSpace() {
        while pos < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[pos]) { pos += 1 }
    }

    private mutating func expect(_ literal: String, _ value: JSONValue) throws(Problem) -> JSONValue {
        let l = Array(literal.utf8)
        guard bytes.count - pos >= l.count, Array(bytes[pos..<pos + l.count]) == l else { throw fail("unexpected character") }
        pos += l.count
        return value
    }

    private mutating func value(depth: Int) throws(Problem) -> JSONValue {
        guard pos < bytes.count else { throw fail("unexpected end of input") }
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw fail("unexpected character")
        }
    }

    /// `{ member *( "," member ) }`, or `{}`.
    private mutating func object(depth: Int) throws(Problem) -> JSONValue {
        var fields: [(String, JSONValue)] = []
        try container(depth: depth, close: "}", noun: "members") { (r: inout JSONReader) throws(Problem) in
            guard r.pos < r.bytes.count, r.bytes[r.pos] == UInt8(ascii: "\"") else { throw r.fail("expected a member name") }
            let key = try r.string()
            r.skipSpace()
            guard r.pos < r.bytes.count, r.bytes[r.pos] == UInt8(ascii: ":") else { throw r.fail("expected \":\"") }
            r.pos += 1
            r.skipSpace()
            fields.append((key, try r.value(depth: depth)))
            return fields.count
        }
        return .object(fields)
    }

    /// `[ value *( "," value ) ]`, or `[]`.
    private mutating func array(depth: Int) throws(Problem) -> JSONValue {
        var items: [JSONValue] = []
        try container(depth: depth, close: "]", noun: "items") { (r: inout JSONReader) throws(Problem) in
            items.append(try r.value(depth: depth))
            return items.count
        }
        return .array(items)
    }

    /// The frame both containers share: the depth limit, the opening byte, then `element` (which returns
    /// how many it has read, for the item limit) until `close`, with "," between.
    private mutating func container(
        depth: Int, close: Unicode.Scalar, noun: String, element: (inout JSONReader) throws(Problem) -> Int
    ) throws(Problem) {
        guard depth <= limits.depth else { throw fail("nested deeper than \(limits.depth) levels") }
        let closing = UInt8(ascii: close)
        pos += 1
        skipSpace()
        if pos < bytes.count, bytes[pos] == closing { pos += 1; return }
        while true {
            skipSpace()
            guard try element(&self) <= limits.items else { throw fail("more than \(limits.items) \(noun)") }
            skipSpace()
            guard pos < bytes.count else { throw fail("unexpected end of input") }
            if bytes[pos] == closing { pos += 1; return }
            guard bytes[pos] == UInt8(ascii: ",") else { throw fail("expected \",\" or \"\(close)\"") }
            pos += 1
        }
    }

    /// A string, `pos` at its opening quote; unescaped bytes must be valid UTF-8 and not controls.
    private mutating func string() throws(Problem) -> String {
        pos += 1
        var out: [UInt8] = []
        while true {
            guard pos < bytes.count else { throw fail("unterminated string") }
            let b = bytes[pos]
            switch b {
            case UInt8(ascii: "\""):
                pos += 1
                guard let s = String(validating: out, as: UTF8.self) else { throw fail("string is not valid UTF-8") }
                return s
            case UInt8(ascii: "\\"):
                pos += 1
                guard pos < bytes.count else { throw fail("unterminated string") }
                let e = bytes[pos]
                pos += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard bytes.count - pos >= 2, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u")
                        else { throw fail("lone surrogate") }
                        pos += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw fail("lone surrogate")
                    }
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default:
                    throw fail("unknown escape")
                }
            case 0x00..<0x20:
                throw fail("control character in a string")
            default:
                // The run of plain bytes up to the next quote, backslash or control byte, in one append
                // (a JMAP blob's base64 is megabytes of them).
                let start = pos
                pos += 1
                while pos < bytes.count {
                    let c = bytes[pos]
                    if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 { break }
                    pos += 1
                }
                out.append(contentsOf: bytes[start..<pos])
            }
        }
    }

    private mutating func hex4() throws(Problem) -> UInt32 {
        guard bytes.count - pos >= 4 else { throw fail("short \\u escape") }
        var v: UInt32 = 0
        for b in bytes[pos..<pos + 4] {
            guard let d = ASCII.hexValue(b) else { throw fail("bad \\u escape") }
            v = v << 4 | UInt32(d)
        }
        pos += 4
        return v
    }

    /// A number: `.int` when it is an integer that fits 64 bits, else `.number` with its text.
    private mutating func number() throws(Problem) -> JSONValue {
        let start = pos
        func digits() -> Int {
            let s = pos
            while pos < bytes.count, ASCII.isDigit(bytes[pos]) { pos += 1 }
            return pos - s
        }
        if bytes[pos] == UInt8(ascii: "-") { pos += 1 }
        guard pos < bytes.count, ASCII.isDigit(bytes[pos]) else { throw fail("expected a digit") }
        if bytes[pos] == UInt8(ascii: "0") { pos += 1 } else { _ = digits() }
        var integral = true
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            pos += 1
            integral = false
            guard digits() > 0 else { throw fail("expected a digit after \".\"") }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E") {
            pos += 1
            integral = false
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard digits() > 0 else { throw fail("expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        if integral, let n = Int64(text) { return .int(n) }
        return .number(text)
    }
}

extension JSONValue {
    /// The first member named `key` of an object; nil for a missing member or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let fields) = self else { return nil }
        return fields.first { $0.0 == key }?.1
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var intValue: Int64? {
        if case .int(let n) = self { return n }
        return nil
    }
}
