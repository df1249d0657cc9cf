import MoCore
import Testing

/// The one escaper of outside text for terminal lines (`TerminalText.swift`).
@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("clear \u{1B}[2J screen", "clear \\u{1B}[2J screen"),
        ("line\r\nbreak\tand tab", "line\\u{D}\\u{A}break\\u{9}and tab"),
        ("DEL \u{7F} and 8-bit CSI \u{9B}31m", "DEL \\u{7F} and 8-bit CSI \\u{9B}31m"),
        ("OSC \u{1B}]0;title\u{7}", "OSC \\u{1B}]0;title\\u{7}"),
        ("ünïcode, \u{A0}nbsp and 😀 stay", "ünïcode, \u{A0}nbsp and 😀 stay"),
        ("back\\slash kept", "back\\slash kept")
    ])
    func stringsAreEscaped(_ input: String, _ expected: String) {
        #expect(escapedForMessage(input) == expected)
        #expect(escapedForMessage(bytes: Array(input.utf8)) == expected)
        // Idempotent: an escaped text has nothing left to escape.
        #expect(escapedForMessage(expected) == expected)
    }

    @Test(arguments: [
        ([0x61, 0xFF, 0x62] as [UInt8], "a\\xFFb"),
        ([0xC3], "\\xC3"),  // cut short
        ([0xC0, 0xAF], "\\xC0\\xAF"),  // overlong "/"
        ([0xED, 0xA0, 0x80], "\\xED\\xA0\\x80"),  // a surrogate
        ([0xF4, 0x90, 0x80, 0x80], "\\xF4\\x90\\x80\\x80"),  // above U+10FFFF
        ([0xC2, 0x9B, 0x41], "\\u{9B}A"),  // C1 CSI, well formed
        ([0xE2, 0x82, 0xAC, 0x1B], "€\\u{1B}")
    ])
    func bytesAreEscaped(_ input: [UInt8], _ expected: String) {
        #expect(escapedForMessage(bytes: input) == expected)
    }

    @Test func quotedEscapesQuotesAndBackslashes() {
        #expect(quotedForMessage("a\"b\\c\u{1B}") == "\"a\\\"b\\\\c\\u{1B}\"")
        #expect(quotedForMessage(bytes: [0x22, 0xFE]) == "\"\\\"\\xFE\"")
    }

    @Test func jsonEscapesDELAndC1Too() {
        #expect(jsonQuoted("a\u{1B}\u{7F}\u{9B}") == "\"a\\u001b\\u007f\\u009b\"")
    }

    @Test func boundedListShowsTheFirstNamesThenACount() {
        #expect(boundedList([String]()) == "")
        #expect(boundedList(["b", "a"]) == "a, b")
        #expect(boundedList((1...12).map { "n\($0 + 10)" }) == "n11, n12, n13, n14, n15, n16, n17, n18, n19, n20 and 2 more")
        #expect(boundedList(["c", "b", "a"], shown: 2, separator: " ") == "a b and 1 more")
    }
}
