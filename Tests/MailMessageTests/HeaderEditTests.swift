import MailMessage
import Testing

/// A sender's edits of a header section, through `HeaderBlock` (the one reader of header sections).
@Suite struct HeaderEditTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func fieldsCarryTheirWholeRangeContinuationLinesIncluded() {
        let message = Array("From: a@x\r\nTo: b@x,\r\n  c@x\r\nSubject: s\r\n\r\nbody\r\n".utf8)
        let to = HeaderBlock.parse(message).first("To")!
        #expect(Self.text(Array(message[to.range])) == "To: b@x,\r\n  c@x\r\n")
    }

    /// A first line that is not a field would make GMime (and the indexer's strict read) see no header at
    /// all; a sender still finds, and removes, the Bcc below it.
    @Test func anOddFirstLineDoesNotHideABcc() {
        let message = Array("odd first line\nTo: a@x\nBcc: hidden@x\n\nbody\n".utf8)
        #expect(HeaderBlock.parse(message).startsWithGarbage)
        #expect(Self.text(HeaderEdit.removing(["Bcc"], from: message)) == "odd first line\nTo: a@x\n\nbody\n")
        #expect(HeaderEdit.value("bcc", in: message) == "hidden@x")
    }

    @Test func addedFieldsTakeTheMessagesLineEndAndCloseAnOpenSection() {
        #expect(Self.text(HeaderEdit.adding(["Date: d"], to: Array("To: a@x\r\n\r\nb\r\n".utf8))) == "To: a@x\r\nDate: d\r\n\r\nb\r\n")
        #expect(Self.text(HeaderEdit.adding(["Date: d"], to: Array("To: a@x".utf8))) == "To: a@x\nDate: d\n\n")
        #expect(Self.text(HeaderEdit.adding(["Date: d"], to: Array("\r\nbody".utf8))) == "Date: d\r\n\r\nbody")
        #expect(HeaderEdit.adding([], to: Array("To: a@x\n\nb".utf8)) == Array("To: a@x\n\nb".utf8))
    }

    @Test func valueIsUnfoldedAndNotDecoded() {
        let message = Array("Subject: =?utf-8?q?caf=C3=A9?=\n  again\nFrom: x@y\n\n".utf8)
        #expect(HeaderEdit.value("SUBJECT", in: message) == "=?utf-8?q?caf=C3=A9?=  again")
        #expect(HeaderEdit.value("Cc", in: message) == nil)
    }
}
