import Testing
@testable import SMTPClient

/// The reply parser, fed whole and one byte at a time: both must give the same replies.
struct ReplyParserTests {
    static func parseAll(_ text: String, byteByByte: Bool, limits: SMTPReplyParser.Limits = .init()) throws -> [SMTPReply] {
        var parser = SMTPReplyParser(limits: limits)
        var replies: [SMTPReply] = []
        let bytes = Array(text.utf8)
        let pieces: [[UInt8]] = byteByByte ? bytes.map { [$0] } : [bytes]
        for piece in pieces {
            parser.append(piece)
            while let reply = try parser.next() { replies.append(reply) }
        }
        return replies
    }

    static let transcript =
        "220 smtp.mo.test ESMTP\r\n"
        + "250-smtp.mo.test\r\n250-PIPELINING\r\n250-SIZE 60000000\r\n250 ENHANCEDSTATUSCODES\r\n"
        + "550 5.1.1 <x@y>: Recipient address rejected: User unknown\r\n"
        + "354\r\n"
        + "250 2.0.0 Ok: queued as ABC\n"  // bare LF is tolerated

    @Test(arguments: [false, true]) func transcriptParses(byteByByte: Bool) throws {
        let replies = try Self.parseAll(Self.transcript, byteByByte: byteByByte)
        #expect(
            replies == [
                SMTPReply(code: 220, lines: ["smtp.mo.test ESMTP"]),
                SMTPReply(code: 250, lines: ["smtp.mo.test", "PIPELINING", "SIZE 60000000", "ENHANCEDSTATUSCODES"]),
                SMTPReply(code: 550, lines: ["5.1.1 <x@y>: Recipient address rejected: User unknown"]),
                SMTPReply(code: 354, lines: [""]),
                SMTPReply(code: 250, lines: ["2.0.0 Ok: queued as ABC"])
            ])
        #expect(replies[2].enhancedStatus == EnhancedStatusCode(statusClass: 5, subject: 1, detail: 1))
        #expect(replies[2].description == "550 5.1.1 <x@y>: Recipient address rejected: User unknown")
        #expect(replies[2].isPermanentFailure && replies[3].isIntermediate && replies[4].isSuccess)
        #expect(replies[0].enhancedStatus == nil)
    }

    @Test func incompleteReplyWaitsForMore() throws {
        var parser = SMTPReplyParser()
        parser.append(Array("250-first\r\n250 sec".utf8))
        #expect(try parser.next() == nil)
        #expect(parser.hasBufferedInput)
        parser.append(Array("ond\r\n".utf8))
        #expect(try parser.next() == SMTPReply(code: 250, lines: ["first", "second"]))
        #expect(!parser.hasBufferedInput)
    }

    @Test(arguments: [
        "hello\r\n", "25\r\n", "250x\r\n", "650 no\r\n", "250-a\r\n251 b\r\n"
    ]) func malformedRepliesAreErrors(_ text: String) {
        #expect(throws: SMTPReplyParser.ParseError.self) { _ = try Self.parseAll(text, byteByByte: false) }
    }

    @Test func lineLengthAndLineCountAreLimited() {
        let limits = SMTPReplyParser.Limits(maxLineLength: 64, maxLines: 3)
        let long = "250 " + String(repeating: "x", count: 100) + "\r\n"
        #expect(throws: SMTPReplyParser.ParseError.self) { _ = try Self.parseAll(long, byteByByte: true, limits: limits) }
        // No line end at all: refused once the limit is passed, not buffered forever.
        var parser = SMTPReplyParser(limits: limits)
        parser.append(Array(repeating: UInt8(ascii: "2"), count: 65))
        #expect(throws: SMTPReplyParser.ParseError.self) { _ = try parser.next() }
        let many = String(repeating: "250-x\r\n", count: 5) + "250 end\r\n"
        #expect(throws: SMTPReplyParser.ParseError.self) { _ = try Self.parseAll(many, byteByByte: false, limits: limits) }
    }

    @Test func enhancedStatusCodesAreParsedStrictly() {
        #expect(SMTPReply(code: 250, lines: ["2.1.0 Ok"]).enhancedStatus?.description == "2.1.0")
        #expect(SMTPReply(code: 451, lines: ["4.7.1 try later"]).enhancedStatus?.description == "4.7.1")
        #expect(SMTPReply(code: 550, lines: ["2.1.0 class mismatch"]).enhancedStatus == nil)
        #expect(SMTPReply(code: 550, lines: ["5.1 not three parts"]).enhancedStatus == nil)
        #expect(SMTPReply(code: 550, lines: ["5.1.1234 too long"]).enhancedStatus == nil)
        #expect(SMTPReply(code: 550, lines: ["5.1.1"]).enhancedStatus?.description == "5.1.1")
    }
}
