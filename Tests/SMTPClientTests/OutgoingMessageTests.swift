import Testing
@testable import SMTPClient

struct OutgoingMessageTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func bccIsRemovedWithItsContinuationLines() {
        let message =
            "From: a@mo.test\r\nBcc: hidden@mo.test,\r\n  other@mo.test\r\nTo: b@mo.test\r\n"
            + "bcc: x@mo.test\r\nResent-Bcc: r@mo.test\r\nSubject: s\r\n\r\nBcc: in the body stays\r\n"
        #expect(
            Self.text(OutgoingMessage.removingBcc(Array(message.utf8)))
                == "From: a@mo.test\r\nTo: b@mo.test\r\nSubject: s\r\n\r\nBcc: in the body stays\r\n")
        let none = Array("From: a@mo.test\n\nbody\n".utf8)
        #expect(OutgoingMessage.removingBcc(none) == none)
        // A Bcc as the last header line before the blank line.
        #expect(Self.text(OutgoingMessage.removingBcc(Array("To: a@x\nBcc: b@x\n\nbody\n".utf8))) == "To: a@x\n\nbody\n")
    }

    @Test func recipientsComeFromToCcAndBccOnly() {
        let message = """
            From: Me <me@mo.test>
            To: "Doe, John" <john@mo.test>, plain@mo.test (a comment, with comma),
             Team: one@mo.test, Two <two@mo.test>;
            Cc: undisclosed-recipients:;
            CC: <cc@mo.test>, JOHN@mo.test
            Reply-To: not-a-recipient@mo.test
            Bcc: hidden@mo.test
            Subject: To: nobody@mo.test

            To: body@mo.test

            """
        #expect(
            OutgoingMessage.recipients(fromHeadersOf: Array(message.utf8))
                == ["john@mo.test", "plain@mo.test", "one@mo.test", "two@mo.test", "cc@mo.test", "hidden@mo.test"])
    }

    @Test func addressListEdgeCases() {
        #expect(OutgoingMessage.addressSpecs(in: "\"a>b\" <x@y>") == ["x@y"])
        #expect(OutgoingMessage.addressSpecs(in: "<@route,@r2:x@y>") == ["x@y"])
        #expect(OutgoingMessage.addressSpecs(in: "\"quoted local\"@y") == ["\"quoted local\"@y"])
        #expect(OutgoingMessage.addressSpecs(in: "Name <\"a b\"@c>, \"a b\"@c") == ["\"a b\"@c"])
        #expect(OutgoingMessage.addressSpecs(in: "(only a comment)") == [])
        #expect(OutgoingMessage.addressSpecs(in: "müller@bücher.example") == ["müller@bücher.example"])
    }

    @Test func dateAndMessageIDAreAddedWhenMissing() {
        let message = Array("From: Me <me@mo.test>\nSubject: s\n\nbody\n".utf8)
        let out = Self.text(
            OutgoingMessage.addingMissingDateAndMessageID(
                message, fallbackDomain: "fallback.test",
                now: 1_700_000_000))
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == "From: Me <me@mo.test>")
        #expect(lines[1] == "Subject: s")
        #expect(lines[2].hasPrefix("Date: ") && lines[2].contains(" Nov 2023 "))
        #expect(lines[3].hasPrefix("Message-ID: <") && lines[3].hasSuffix("@mo.test>"))
        #expect(Array(lines[4...]) == ["", "body", ""])

        // Present fields are kept; nothing is added.
        let complete = Array("Date: Mon, 1 Jan 2024 00:00:00 +0000\r\nMessage-Id: <x@y>\r\n\r\nb\r\n".utf8)
        #expect(OutgoingMessage.addingMissingDateAndMessageID(complete, fallbackDomain: "f") == complete)

        // CRLF messages get CRLF lines; no From means the fallback domain.
        let crlf = Self.text(
            OutgoingMessage.addingMissingDateAndMessageID(
                Array("Date: x\r\n\r\nb\r\n".utf8),
                fallbackDomain: "fallback.test"))
        #expect(crlf.hasPrefix("Date: x\r\nMessage-ID: <") && crlf.hasSuffix("@fallback.test>\r\n\r\nb\r\n"))

        // Headers only, last line unterminated: a line end and the blank line are supplied.
        let bare = Self.text(
            OutgoingMessage.addingMissingDateAndMessageID(
                Array("Date: x\nSubject: s".utf8),
                fallbackDomain: "f.test"))
        #expect(bare.hasPrefix("Date: x\nSubject: s\nMessage-ID: <") && bare.hasSuffix("@f.test>\n\n"))
    }

    @Test func messageIDsAreUnique() {
        let ids = (0..<1000).map { _ in OutgoingMessage.newMessageID(domain: "mo.test") }
        #expect(Set(ids).count == 1000)
        #expect(ids[0].hasPrefix("<") && ids[0].hasSuffix("@mo.test>") && !ids[0].contains(" "))
    }

    @Test func dateFormat() {
        let date = OutgoingMessage.rfc5322Date(0)
        // "Thu, 1 Jan 1970 00:00:00 +0000" in UTC; the weekday and zone depend on the local zone.
        #expect(date.wholeMatch(of: /[A-Z][a-z]{2}, \d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}/) != nil)
    }
}
