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
        ("", ""),
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
