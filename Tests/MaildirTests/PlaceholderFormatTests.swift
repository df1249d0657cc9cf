import Testing
@testable import Maildir

/// The placeholder's bytes (`Placeholder.render`) and its mark read back (`Placeholder.size`).
@Suite struct PlaceholderFormatTests {
    @Test func renderedFromAServerHeaderSection() {
        let header = Array("Subject: big\r\nMessage-ID: <b@x>\r\n\r\n".utf8)
        let bytes = Placeholder.render(header: header, size: 5_242_880, limit: 2 << 20)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("X-Mo-Placeholder: 5242880\nSubject: big\nMessage-ID: <b@x>\n\n[mo-sync: this message is "))
        #expect(!text.contains("\r"))
        #expect(Placeholder.size(firstBytes: bytes) == 5_242_880)
    }

    @Test func aSectionWithoutItsBlankLineGetsOne() {
        let text = String(decoding: Placeholder.render(header: Array("Subject: x\n".utf8), size: 9, limit: 1), as: UTF8.self)
        #expect(text.hasPrefix("X-Mo-Placeholder: 9\nSubject: x\n\n[mo-sync:"))
    }

    @Test(
        arguments: [
            ("X-Mo-Placeholder: 12\nSubject: x\n", 12), ("X-Mo-Placeholder: 12\r\n", 12), ("X-Mo-Placeholder: \n", nil),
            ("X-Mo-Placeholder: 12a\n", nil), ("Subject: x\nX-Mo-Placeholder: 12\n", nil), ("x-mo-placeholder: 12\n", nil),
            ("X-Mo-Placeholder: 9999999999999999\n", nil)
        ] as [(String, Int?)])
    func theMarkIsTheFirstLineOnly(_ text: String, _ size: Int?) {
        #expect(Placeholder.size(firstBytes: Array(text.utf8)) == size)
    }
}
