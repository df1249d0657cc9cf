import Testing
import MoCore

/// gzip through zlib: what gzip(1) writes reads back, members one after another read as one stream,
/// damage is an error (never a crash), and the output limit holds.
@Suite struct GzipTests {
    /// `printf 'hello\n' | gzip -n -c`.
    static let hello: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xe7, 0x02, 0x00,
        0x20, 0x30, 0x3a, 0x36, 0x06, 0x00, 0x00, 0x00
    ]

    @Test func readsWhatGzipWrites() throws {
        #expect(Gzip.isCompressed(Self.hello))
        #expect(try Gzip.decompress(Self.hello) == Array("hello\n".utf8))
        #expect(!Gzip.isCompressed(Array("From: a@b\n".utf8)) && !Gzip.isCompressed([0x1f]))
    }

    @Test(arguments: [0, 1, 100, 70000, 300_000])
    func roundTrip(size: Int) throws {
        let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 13) }
        let packed = try Gzip.compress(bytes)
        #expect(Gzip.isCompressed(packed))
        #expect(try Gzip.decompress(packed) == bytes)
    }

    @Test func zerosAfterTheLastMemberArePadding() throws {
        #expect(try Gzip.decompress(Self.hello + [UInt8](repeating: 0, count: 512)) == Array("hello\n".utf8))
        #expect(try Gzip.uncompressedIfCompressed(Array("plain".utf8)) == Array("plain".utf8))
    }

    @Test func membersInARowAreOneStream() throws {
        #expect(try Gzip.decompress(Self.hello + Self.hello) == Array("hello\nhello\n".utf8))
    }

    @Test(arguments: [10, 16, 25])
    func truncatedIsAnError(keep: Int) {
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(Array(Self.hello.prefix(keep))) }
    }

    @Test func corruptIsAnError() {
        var bad = Self.hello
        bad[12] ^= 0xff
        bad[20] ^= 0xff
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(bad) }
    }

    @Test func outputLimitHolds() throws {
        let packed = try Gzip.compress([UInt8](repeating: 0, count: 1 << 20))
        #expect(packed.count < 10_000)
        #expect(throws: Gzip.Failure.self) { try Gzip.decompress(packed, limit: 100_000) }
    }
}
