@testable import SyncRunner

/// The streamed upload must send and key exactly what the in-memory conversion did.
@Suite struct WireFileTests {
    static func messages() -> [(String, [UInt8])] {
        var big = Array("From: a@x\nSubject: big\n\n".utf8)
        var generator = SeededGenerator(seed: 7)
        while big.count < 40_000 {
            let line = (0..<Int.random(in: 0...90, using: &generator)).map { _ in UInt8.random(in: 32...126, using: &generator) }
            big += line + (Bool.random(using: &generator) ? [13, 10] : [10])  // LF and CRLF lines mixed
            if Int.random(in: 0..<50, using: &generator) == 0 { big += [13] }  // a lone CR
        }
        return [
            ("with Message-ID", Array("From: a@x\nMessage-ID: <one@x>\nSubject: s\n\nbody\n".utf8)),
            ("CRLF already", Array("From: a@x\r\nMessage-ID: <two@x>\r\n\r\nbody\r\n".utf8)),
            ("no Message-ID, long body", big),
            ("Message-ID after a folded field", Array("From: a@x\nX-Long: one\n two\nMessage-Id:\n <three@x>\n\nbody".utf8)),
            ("headers only", Array("From: a@x\nMessage-ID: <four@x>\n".utf8)),
            ("starts with a blank line", Array("\nMessage-ID: <not-a-header@x>\n".utf8)),
            ("ends in CR", Array("From: a@x\n\nbody\r".utf8)),
            ("empty", []),
            ("X-TUID first", Array("X-TUID: abc123\nFrom: a@x\nMessage-ID: <five@x>\n\nbody\n".utf8)),
            ("X-TUID, no Message-ID", Array("From: a@x\r\nx-tuid: q\r\nX-OfflineIMAP: 1-2\r\n\r\nbody X-TUID: no\r\n".utf8)),
            ("X-TUID folded, headers only", Array("From: a@x\nX-TUID: q\n continued\n".utf8))
        ]
    }

    @Test func keysAndBytesMatchTheInMemoryConversion() throws {
        let dir = try TemporaryDirectory("mo-wire")
        defer { dir.remove() }
        for chunk in [1, 2, 3, 7, 4096, 1 << 18] {
            for (name, bytes) in Self.messages() where chunk >= 7 || bytes.count < 1000 {
                let path = dir.path + "/m"
                #expect(writeWhole(path, bytes))
                let wire = LineEndings.toCRLF(bytes)
                let file = try WireFile(path: path, chunkSize: chunk)
                #expect(file.key == MessageKeys.key(wire: wire), "\(name), chunk \(chunk)")
                #expect(file.wireSize == wire.count, "\(name), chunk \(chunk)")
                var streamed: [UInt8] = []
                try file.stream { streamed += $0 }
                #expect(streamed == wire, "\(name), chunk \(chunk)")
                // Pairing keys leave other syncers' headers out.
                let clean = MessageKeys.withoutForeignHeaders(bytes)
                let paired = try WireFile(path: path, dropForeignHeaders: true, chunkSize: chunk)
                #expect(paired.key == MessageKeys.key(wire: LineEndings.toCRLF(clean)), "\(name), chunk \(chunk)")
                #expect(paired.hadForeignHeaders == (clean != bytes), "\(name), chunk \(chunk)")
                #expect(paired.wireSize == wire.count, "\(name), chunk \(chunk)")  // it sends the file as it is
                var sent: [UInt8] = []
                try paired.stream { sent += $0 }
                #expect(sent == wire, "\(name), chunk \(chunk)")
            }
        }
    }

    @Test func aFileThatChangesBetweenThePassesFailsBeforeOversending() throws {
        let dir = try TemporaryDirectory("mo-wire")
        defer { dir.remove() }
        let path = dir.path + "/m"
        #expect(writeWhole(path, Array("From: a@x\n\nshort\n".utf8)))
        let file = try WireFile(path: path)
        // Rewritten in place (truncate + write), which Maildir clients never do: the open descriptor sees it.
        let fd = open(path, O_WRONLY | O_TRUNC)
        let longer = Array("From: a@x\n\nmuch longer now\n".utf8)
        _ = longer.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        var streamed = 0
        #expect(throws: (any Error).self) { try file.stream { streamed += $0.count } }
        #expect(streamed <= file.wireSize)
    }

    private func writeWhole(_ path: String, _ bytes: [UInt8]) -> Bool {
        if case .success = replaceFileAtomically(path, bytes) { return true }
        return false
    }
}
