import Testing
@testable import SMTPClient

/// Dot-stuffing and line-end normalisation, whole and in every chunking.
struct DataEncoderTests {
    static let table: [(String, String)] = [
        ("", ".\r\n"),
        ("a", "a\r\n.\r\n"),
        ("a\r\n", "a\r\n.\r\n"),
        ("a\nb\n", "a\r\nb\r\n.\r\n"),  // bare LF
        ("a\rb", "a\r\nb\r\n.\r\n"),  // bare CR
        ("a\r", "a\r\n.\r\n"),  // CR at the end
        ("a\r\r\nb", "a\r\n\r\nb\r\n.\r\n"),
        (".\n", "..\r\n.\r\n"),  // a lone dot would end DATA
        ("..x\r\n.y\n", "...x\r\n..y\r\n.\r\n"),
        ("a\n.\nb", "a\r\n..\r\nb\r\n.\r\n"),
        ("x.\n .\n", "x.\r\n .\r\n.\r\n"),  // dots not at line start stay
        ("\n\n", "\r\n\r\n.\r\n"),
        ("é\n", "é\r\n.\r\n")
    ]

    @Test(arguments: table.indices) func wholeMessage(_ i: Int) {
        let (input, expected) = Self.table[i]
        #expect(String(decoding: SMTPDataEncoder.encodeAll(Array(input.utf8)), as: UTF8.self) == expected)
    }

    @Test(arguments: table.indices) func everySplitGivesTheSameBytes(_ i: Int) {
        let (input, expected) = Self.table[i]
        let bytes = Array(input.utf8)
        for cut in 0...bytes.count {
            var encoder = SMTPDataEncoder()
            var out: [UInt8] = []
            encoder.encode(Array(bytes[..<cut]), into: &out)
            encoder.encode(Array(bytes[cut...]), into: &out)
            encoder.finish(into: &out)
            #expect(String(decoding: out, as: UTF8.self) == expected, "cut at \(cut)")
        }
        // One byte at a time.
        var encoder = SMTPDataEncoder()
        var out: [UInt8] = []
        for b in bytes { encoder.encode([b], into: &out) }
        encoder.finish(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == expected)
    }

    @Test func scanCountsWireSizeAndEightBit() {
        #expect(MessageScan(Array("a\nb\n".utf8)).wireSize == 6)
        #expect(MessageScan(Array("a\r\nb\r\n".utf8)).wireSize == 6)
        #expect(MessageScan(Array("a\rb".utf8)).wireSize == 6)  // a CRLF b CRLF
        let plain = MessageScan(Array("Subject: x\n\nbody\n".utf8))
        #expect(!plain.has8Bit && !plain.headerHas8Bit)
        let body8 = MessageScan(Array("Subject: x\n\nbödy\n".utf8))
        #expect(body8.has8Bit && !body8.headerHas8Bit)
        let header8 = MessageScan(Array("Subject: ä\r\n\r\nbody\r\n".utf8))
        #expect(header8.has8Bit && header8.headerHas8Bit)
        // Without leading dots, the stream is the scanned size plus the terminator ".\r\n".
        for text in ["a\nb\n", "x\r\r\n", "a\r", "é\r\n\r\n", "no end"] {
            let bytes = Array(text.utf8)
            #expect(MessageScan(bytes).wireSize + 3 == SMTPDataEncoder.encodeAll(bytes).count, "\(text.debugDescription)")
        }
    }
}
