import Testing
@testable import MailMessage

/// mboxrd quoting, fed whole and byte by byte (a line start may be split anywhere).
@Suite struct MboxrdTests {
    /// Lines quoting leaves alone: not `>*From ` at a line start.
    static let unquoted = """
        Fro
        From
        >>>
        Fromage is not From the start.
         From indented.
        last line without newline
        """
    static let message = Array(
        """
        From: Alice <alice@example.com>
        Subject: From here

        From the start.
        >From quoted once.
        >>From twice.
        \(unquoted)
        """.utf8)
    static let quoted = Array(
        """
        From: Alice <alice@example.com>
        Subject: From here

        >From the start.
        >>From quoted once.
        >>>From twice.
        \(unquoted)


        """.utf8)

    func encoded(_ chunks: [[UInt8]]) -> [UInt8] {
        var e = MboxrdEncoder(), out: [UInt8] = []
        for c in chunks { e.encode(c, into: &out) }
        e.finish(into: &out)
        return out
    }

    @Test func whole() { #expect(encoded([Self.message]) == Self.quoted) }

    @Test func byteByByte() { #expect(encoded(Self.message.map { [$0] }) == Self.quoted) }

    @Test func splitAtEveryOffset() {
        for cut in 0...Self.message.count {
            #expect(encoded([Array(Self.message[..<cut]), Array(Self.message[cut...])]) == Self.quoted, "cut at \(cut)")
        }
    }

    @Test func aMessageEndingInANewlineGetsOnlyTheEmptyLine() {
        #expect(encoded([Array("a\nFrom b\n".utf8)]) == Array("a\n>From b\n\n".utf8))
    }

    @Test func separator() {
        #expect(
            MboxrdEncoder.separator(sender: "alice@example.com", date: 1_795_521_600)
                == Array("From alice@example.com Tue Nov 24 12:00:00 2026\n".utf8))
        #expect(MboxrdEncoder.asctime(1_794_135_901) == "Sun Nov  8 11:05:01 2026")
        #expect(MboxrdEncoder.separator(sender: "a b", date: 0) == Array("From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n".utf8))
    }
}
