import Testing
@testable import MailMessage

private func b(_ s: String) -> [UInt8] { Array(s.utf8) }

@Suite struct HeaderTests {
    @Test("folding, CRLF/LF, repeats, case-insensitive lookup", arguments: ["\n", "\r\n"])
    func basics(eol: String) {
        let raw = ["From: a@b", "Subject: one", "\t two", "X-A: 1", "x-a: 2", "", "body"].joined(separator: eol)
        let h = HeaderBlock.parse(b(raw))
        #expect(h.fields.count == 4)
        #expect(h["subject"] == "one\t two")
        #expect(h.fields(named: "X-A").map(\.text) == ["1", "2"])
        #expect(Array(b(raw)[h.bodyOffset...]) == b("body"))
    }

    @Test func mboxFromLineSkipped() {
        let h = HeaderBlock.parse(b("From someone  Sat Feb  5 09:19:10 2022\nSubject: s\n\nx"))
        #expect(h.hadMboxFromLine && h["Subject"] == "s")
        #expect(HeaderBlock.parse(b(">From x\nSubject: s\n\n")).hadMboxFromLine)
    }

    @Test func garbageAndBrokenLines() {
        // A first line that is not a header: no headers (GMime refuses such input).
        let g = HeaderBlock.parse(b("hello world\nSubject: x\n\n"))
        #expect(g.startsWithGarbage && g.fields.isEmpty && g.bodyOffset == 0)
        // Later lines without a colon are dropped; a name with inner blanks is not a field.
        let h = HeaderBlock.parse(b("Subject: a\nno colon here\nBad Name: v\nTo : t\n\nb"))
        #expect(h.fields.map(\.name) == ["Subject", "To"])
        #expect(h["to"] == "t")
    }

    @Test func bareCRAnd8BitBytes() {
        var raw = b("Subject: caf")
        raw += [0xE9, 0x0D, 0x20, 0x78]  // latin1 é, bare CR
        raw += b("\nX-U: \u{00E9}t\u{00E9}\n\n")
        let h = HeaderBlock.parse(raw)
        #expect(h["Subject"] == "café x")
        #expect(h["X-U"] == "été")
    }

    @Test func noBlankLineAndEmpty() {
        #expect(HeaderBlock.parse([UInt8]()).fields.isEmpty)
        let h = HeaderBlock.parse(b("Subject: only headers"))
        #expect(h["Subject"] == "only headers" && h.bodyOffset == 21)
    }

    /// Hostile sizes, read whole: a quadratic step would take hours here (a CI run's limit catches it).
    /// No wall-clock bound: timings belong in bench/, and a loaded machine made a bound of seconds flaky.
    @Test("hostile: 50 MB without headers or line breaks, and a 5 MB folded header")
    func hostile() {
        let big = [UInt8](repeating: UInt8(ascii: "a"), count: 50 << 20)
        let m = ParsedMessage.parse(big)
        #expect(!m.looksLikeMail)
        // One header line of 5 MB, and 200k folded continuation lines.
        var long = b("Subject: ") + [UInt8](repeating: UInt8(ascii: "x"), count: 5 << 20) + b("\n")
        for _ in 0..<200_000 { long += b(" y\n") }
        long += b("\nbody")
        let h = HeaderBlock.parse(long)
        #expect(h.fields.count == 1 && h.bodyOffset == long.count - 4)
    }
}

@Suite struct EncodedWordTests {
    @Test(arguments: [
        ("=?utf-8?Q?caf=C3=A9?=", "café"),
        ("=?ISO-8859-1?B?Y2Fm6Q==?=", "café"),
        ("=?iso-8859-1?q?a_b?= =?iso-8859-1?q?_c?=", "a b c"),  // whitespace between words dropped
        ("=?utf-8?Q?a?=\r\n =?utf-8?Q?b?= c", "ab c"),
        ("x =?utf-8?Q?a?= y", "x a y"),
        ("=?utf-8?B?w6k=?==?utf-8?B?w6k=?=", "éé"),  // adjacent, no space
        ("=?utf-8?Q?=E2=82?= =?utf-8?Q?=AC?=", "€"),  // character split across words
        ("=?utf-8*en?Q?hello?=", "hello"),  // RFC 2231 language
        ("=?koi8-r?B?8NLJ18XU?=", "Привет"),
        ("=?iso-2022-jp?B?GyRCJDckOCRfGyhC?=", "しじみ"),
        ("=?big5?Q?=A7K=B6O?=", "免費"),
        ("=?gb2312?B?1tDOxA==?=", "中文"),
        ("=?shift_jis?B?k/qWe4zq?=", "日本語"),
        ("=?euc-kr?B?x9Gxub7u?=", "한국어"),
        ("=?windows-1251?Q?=CF=F0=E8?=", "При"),
        ("=?utf-7?Q?+AOk-t+AOk-?=", "été"),
        ("=?utf-8?Q?broken", "=?utf-8?Q?broken"),  // malformed stays
        ("=?utf-8?X?abc?=", "=?utf-8?X?abc?="),
        ("=?bogus-charset?Q?abc?=", "abc"),
        ("plain text", "plain text")
    ])
    func decode(input: String, expected: String) {
        #expect(EncodedWords.decode(input) == expected)
    }
}

/// Encoding a phrase or a Subject as GMime does (checked against Debian's notmuch 0.37 reply): one run
/// from the first word needing it to the last, blanks inside, so it decodes back to the same text.
@Suite struct EncodePhraseTests {
    @Test(arguments: [
        ("Jörg Müller", "=?iso-8859-1?b?SvZyZyBN/GxsZXI=?="),
        ("snow ☃ man", "snow =?utf-8?b?4piD?= man"),
        ("Re: àßç", "Re: =?iso-8859-1?b?4N/n?="),
        ("àß çé plain ü", "=?iso-8859-1?b?4N8g5+kgcGxhaW4g/A==?="),
        ("Jörg Müller ☃", "=?utf-8?b?SsO2cmcgTcO8bGxlciDimIM=?="),
        ("Plain Name", "Plain Name"),
        ("Anna Åkesson Svensson Lindqvist", "Anna =?iso-8859-1?q?=C5kesson?= Svensson Lindqvist")
    ])
    func asGMime(text: String, encoded: String) {
        #expect(EncodedWords.encodePhrase(text) == encoded)
        #expect(EncodedWords.decode(encoded) == text)
    }

    @Test func longRunsSplitBetweenCharacters() {
        let text = String(repeating: "äö☃ ", count: 40) + "end"
        let encoded = EncodedWords.encodePhrase(text)
        let words = encoded.split(separator: " ")
        #expect(words.count > 1 && words.allSatisfy { $0.count <= 75 || $0 == "end" })
        #expect(EncodedWords.decode(encoded) == text)
    }
}
