import MoCore
import Testing

@Suite struct JSONReaderTests {
    static func read(_ s: String) throws(JSONReader.Problem) -> JSONValue { try JSONReader.parse(Array(s.utf8)) }

    @Test func valuesOfEveryKind() throws {
        let v = try Self.read(#" {"a": [1, -2, 3.5, 1e3, true, false, null], "b": {"c": "d\n\u00e9\ud83d\ude00\/"}} "#)
        #expect(v["a"] == .array([.int(1), .int(-2), .number("3.5"), .number("1e3"), .bool(true), .bool(false), .null]))
        #expect(v["b"]?["c"]?.stringValue == "d\né😀/")
        #expect(v["missing"] == nil && v["a"]?["x"] == nil)
        #expect(try Self.read("[]") == .array([]) && Self.read("{}") == .object([]))
        #expect(try Self.read("9223372036854775808") == .number("9223372036854775808"))
    }

    /// What a server may send that is not JSON: each refused with the offset where it was found.
    @Test(arguments: [
        ("", 0, "unexpected end of input"),
        ("{\"a\":1,}", 7, "expected a member name"),
        ("[1,]", 3, "unexpected character"),
        ("01", 1, "unexpected bytes after the value"),
        ("{\"a\" 1}", 5, "expected \":\""),
        ("\"\\ud800\"", 7, "lone surrogate"),
        ("\"\\udc00x\"", 7, "lone surrogate"),
        ("\"a\u{01}\"", 2, "control character in a string"),
        ("\"\\x\"", 3, "unknown escape"),
        ("[1 2]", 3, "expected \",\" or \"]\""),
        ("tru", 0, "unexpected character"),
        ("-", 1, "expected a digit"),
        ("1.", 2, "expected a digit after \".\""),
        ("{} x", 3, "unexpected bytes after the value"),
        ("\"abc", 4, "unterminated string")
    ])
    func refused(_ text: String, _ offset: Int, _ reason: String) {
        #expect(throws: JSONReader.Problem(offset: offset, reason: reason)) { try Self.read(text) }
    }

    @Test func invalidUTF8AndLimits() {
        #expect(throws: JSONReader.Problem.self) { try JSONReader.parse([0x22, 0xFF, 0x22]) }
        var limits = JSONReader.Limits()
        limits.depth = 3
        #expect(throws: JSONReader.Problem.self) { try JSONReader.parse(Array("[[[[1]]]]".utf8), limits: limits) }
        #expect(throws: Never.self) { try JSONReader.parse(Array("[[[1]]]".utf8), limits: limits) }
        limits.items = 2
        #expect(throws: JSONReader.Problem.self) { try JSONReader.parse(Array("[1,2,3]".utf8), limits: limits) }
        // Thousands of "[" are refused, not a stack overflow.
        #expect(throws: JSONReader.Problem.self) { try JSONReader.parse(Array(repeating: UInt8(ascii: "["), count: 100_000)) }
    }

    /// What the writer writes, the reader reads back.
    @Test func roundTrip() throws {
        let v: JSONValue = ["s": "\u{1B}[2J\u{85}é", "n": 42, "a": [true, .null], "o": [:]]
        #expect(try JSONReader.parse(Array(v.text.utf8)) == v)
    }
}
