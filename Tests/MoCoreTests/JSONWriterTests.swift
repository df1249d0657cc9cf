import Foundation
import Testing
import MoCore

/// The one JSON writer: escaping of every string, layout, the document's version, and the version check.
@Suite struct JSONWriterTests {
    @Test(arguments: [
        ("plain", "\"plain\""),
        ("say \"hi\"", "\"say \\\"hi\\\"\""),
        ("C:\\dir\\", "\"C:\\\\dir\\\\\""),
        ("a\nb\rc\td", "\"a\\nb\\rc\\td\""),
        ("\u{0}\u{1}\u{1F}", "\"\\u0000\\u0001\\u001f\""),
        ("esc\u{1B}[2J bell\u{7}", "\"esc\\u001b[2J bell\\u0007\""),
        ("del\u{7F}", "\"del\\u007f\""),
        ("c1\u{80}\u{85}\u{9B}\u{9F}", "\"c1\\u0080\\u0085\\u009b\\u009f\""),
        // Not C1: U+00A0 (C2 A0) and U+0100 (C4 80, a continuation byte in C1's range after another lead).
        ("\u{A0}\u{100}é", "\"\u{A0}\u{100}é\""),
        ("non-BMP 😀 𝄞", "\"non-BMP 😀 𝄞\""),
        ("", "\"\"")
    ])
    func stringsAreEscaped(_ input: String, _ expected: String) throws {
        #expect(jsonQuoted(input) == expected)
        // And every one reads back as the same string in a strict parser.
        let back = try JSONSerialization.jsonObject(with: Data(("[" + jsonQuoted(input) + "]").utf8)) as? [String]
        #expect(back == [input])
    }

    @Test func everyScalarBelowA0RoundTrips() throws {
        let all = String(String.UnicodeScalarView((0...0xA0).compactMap(Unicode.Scalar.init)))
        let quoted = jsonQuoted(all)
        #expect(!quoted.unicodeScalars.contains { isTerminalControl($0) })
        let back = try JSONSerialization.jsonObject(with: Data(("[" + quoted + "]").utf8)) as? [String]
        #expect(back == [all])
    }

    @Test func valuesKeepKeyOrder() {
        let v: JSONValue = ["b": 1, "a": [true, false, .null], "s": "x\"y", "n": .int(-5), "o": [:], "e": []]
        #expect(v.text == #"{"b":1,"a":[true,false,null],"s":"x\"y","n":-5,"o":{},"e":[]}"#)
        #expect(JSONValue.strings(["k\u{1B}"]).text == #"["k\u001b"]"#)
    }

    /// Keys go through the escaper too.
    @Test func keysAreEscaped() {
        #expect(JSONValue.object([("a\"b", .null)]).text == #"{"a\"b":null}"#)
    }

    func document(_ body: (inout JSONWriter) -> Void) -> String {
        final class Sink: @unchecked Sendable { var bytes: [UInt8] = []; var chunks = 0 }
        let sink = Sink()
        var w = JSONWriter {
            sink.bytes += $0; sink.chunks += 1
        }
        w.beginDocument()
        body(&w)
        w.endDocument()
        return String(decoding: sink.bytes, as: UTF8.self)
    }

    @Test func documentsStartWithTheVersion() {
        #expect(document { _ in } == "{\"format_version\":\(JSONFormat.version)}\n")
        #expect(document { $0.field("dry_run", false) } == "{\"format_version\":1,\"dry_run\":false}\n")
    }

    @Test func listsOfResultsHaveOneElementPerLine() {
        let text = document { w in
            w.key("results")
            w.beginArray(onePerLine: true)
            w.write(["id": "a"])
            w.write(["id": "b"])
            w.endArray()
        }
        #expect(text == "{\"format_version\":1,\"results\":[\n{\"id\":\"a\"},\n{\"id\":\"b\"}\n]}\n")
        let empty = document { w in
            w.key("results")
            w.beginArray(onePerLine: true)
            w.endArray()
        }
        #expect(empty == "{\"format_version\":1,\"results\":[\n]}\n")
    }

    /// A long listing reaches the sink in chunks as it is written, and the chunks make one valid document.
    @Test func longListsStream() throws {
        final class Sink: @unchecked Sendable { var bytes: [UInt8] = []; var chunks = 0 }
        let sink = Sink()
        var w = JSONWriter {
            sink.bytes += $0; sink.chunks += 1
        }
        w.beginDocument()
        w.key("results")
        w.beginArray(onePerLine: true)
        for i in 0..<20_000 { w.write(["n": .int(i), "s": .string("text \(i)")]) }
        #expect(sink.chunks > 1)
        w.endArray()
        w.endDocument()
        let parsed = try JSONSerialization.jsonObject(with: Data(sink.bytes)) as? [String: Any]
        #expect((parsed?["results"] as? [Any])?.count == 20_000)
        #expect(parsed?["format_version"] as? Int == 1)
    }

    @Test func onlySupportedVersionsPass() throws {
        try JSONFormat.check(nil)
        try JSONFormat.check(JSONFormat.version)
        #expect(throws: GenericError(.usage, "--format-version 2: not supported (supported: 1)")) { try JSONFormat.check(2) }
        #expect(throws: GenericError.self) { try JSONFormat.check(0) }
    }
}
