/// SHA-1 (FIPS 180-4), small and dependency-free. Used only for notmuch-compatible synthetic and
/// compressed Message-IDs, never for security.
public struct SHA1: Sendable {
    private var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
    private var buffer = [UInt8]()
    private var length: UInt64 = 0

    public init() { buffer.reserveCapacity(64) }

    /// Feeds bytes.
    public mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        length &+= UInt64(bytes.count)
        let handled: Void? = bytes.withContiguousStorageIfAvailable { buf in absorb(buf) }
        if handled == nil { Array(bytes).withUnsafeBufferPointer { absorb($0) } }
    }

    private mutating func absorb(_ input: UnsafeBufferPointer<UInt8>) {
        var i = 0
        let n = input.count
        // Top up a partial block, then hash whole blocks straight from the input.
        if !buffer.isEmpty {
            let take = min(64 - buffer.count, n)
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: input[0..<take]))
            i = take
            if buffer.count == 64 {
                buffer.withUnsafeBufferPointer { compress($0.baseAddress!) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        while n - i >= 64 {
            compress(input.baseAddress! + i)
            i += 64
        }
        if i < n { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: input[i..<n])) }
    }

    /// The 20-byte digest.
    public mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var pad: [UInt8] = [0x80]
        while (buffer.count + pad.count) % 64 != 56 { pad.append(0) }
        for i in (0..<8).reversed() { pad.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        let savedLength = length
        update(pad)
        length = savedLength
        var out = [UInt8]()
        for w in [h.0, h.1, h.2, h.3, h.4] {
            out += [UInt8(w >> 24), UInt8(truncatingIfNeeded: w >> 16), UInt8(truncatingIfNeeded: w >> 8), UInt8(truncatingIfNeeded: w)]
        }
        return out
    }

    /// Lower-case hex SHA-1 of `bytes` (as `g_checksum_get_string` prints it).
    public static func hexDigest<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var s = SHA1()
        s.update(bytes)
        return s.finalizeHex()
    }

    /// The digest as 40 lower-case hex digits.
    public mutating func finalizeHex() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for b in finalize() { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func compress(_ block: UnsafePointer<UInt8>) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { w in
            for i in 0..<16 {
                let j = i * 4
                w[i] = UInt32(block[j]) << 24 | UInt32(block[j + 1]) << 16 | UInt32(block[j + 2]) << 8 | UInt32(block[j + 3])
            }
            for i in 16..<80 {
                let x = w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]
                w[i] = (x << 1) | (x >> 31)
            }
            var (a, b, c, d, e) = h
            for i in 0..<80 {
                let f: UInt32, k: UInt32
                switch i {
                case 0..<20: f = (b & c) | (~b & d); k = 0x5A82_7999
                case 20..<40: f = b ^ c ^ d; k = 0x6ED9_EBA1
                case 40..<60: f = (b & c) | (b & d) | (c & d); k = 0x8F1B_BCDC
                default: f = b ^ c ^ d; k = 0xCA62_C1D6
                }
                let t = ((a << 5) | (a >> 27)) &+ f &+ e &+ k &+ w[i]
                e = d
                d = c
                c = (b << 30) | (b >> 2)
                b = a
                a = t
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
    }
}
