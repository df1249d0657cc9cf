import Testing
import MoCore

struct LineEndingsTests {
    @Test(arguments: [
        ("a\r\nb\r\n", "a\nb\n"),
        ("a\rb\r\n", "a\rb\n"),
        ("\r\n\r\n", "\n\n"),
        ("no newline", "no newline"),
        ("ends in CR\r", "ends in CR\r"),
        ("bare\nLF\r\n", "bare\nLF\n"),
        ("", "")
    ])
    func crlfToLFWholeAndByteByByte(wire: String, file: String) {
        let input = Array(wire.utf8)
        #expect(LineEndings.toLF(input) == Array(file.utf8))
        var converter = CRLFToLF()
        var out: [UInt8] = []
        for b in input { converter.convert([b], into: &out) }
        converter.finish(into: &out)
        #expect(out == Array(file.utf8))
    }

    @Test func roundTripsAndWireSize() {
        let file = Array("From: a\nSubject: b\n\nbody\n".utf8)
        let wire = LineEndings.toCRLF(file)
        #expect(wire == Array("From: a\r\nSubject: b\r\n\r\nbody\r\n".utf8))
        #expect(LineEndings.toLF(wire) == file)
        #expect(file.withUnsafeBytes { LineEndings.wireSize($0) } == wire.count)
        #expect(LineEndings.toCRLF(Array("x\r\ny\n".utf8)) == Array("x\r\ny\r\n".utf8))
    }
}

struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    ])
    func vectors(input: String, digest: String) {
        #expect(SHA256.hex(Array(input.utf8)) == digest)
        var s = SHA256()
        for b in input.utf8 { s.update([b]) }
        #expect(s.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() == digest)
    }

    @Test func million() {
        #expect(
            SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
