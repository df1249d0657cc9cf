import Testing
@testable import Maildir

struct MaildirKeywordsTests {
    @Test func parseAssignRender() {
        var k = MaildirKeywords(parsing: Array("0 $Label1\n2 work\nbad line\n30 out-of-range\n1 \n".utf8))
        #expect(k.letter(for: "$Label1") == MaildirFlags(letter: UInt8(ascii: "a")))
        #expect(k.letter(for: "WORK") == MaildirFlags(letter: UInt8(ascii: "c")))
        #expect(k.keyword(for: UInt8(ascii: "c")) == "work")
        #expect(k.keyword(for: UInt8(ascii: "b")) == nil)
        #expect(k.assignLetter(for: "urgent") == MaildirFlags(letter: UInt8(ascii: "b")))
        #expect(String(decoding: k.rendered, as: UTF8.self) == "0 $Label1\n1 urgent\n2 work\n")
    }

    @Test func atMost26() {
        var k = MaildirKeywords()
        for i in 0..<26 { #expect(k.assignLetter(for: "k\(i)") != nil) }
        #expect(k.assignLetter(for: "one-too-many") == nil)
        #expect(k.letter(for: "k25") == MaildirFlags(letter: UInt8(ascii: "z")))
    }
}
