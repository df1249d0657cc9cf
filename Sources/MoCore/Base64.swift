/// RFC 4648 base64 with padding, for SASL payloads (IMAP AUTHENTICATE, SMTP AUTH), HTTP Basic, and JMAP
/// blobs (`Blob/get`: megabytes, so decoding is one table-driven pass). MIME bodies use
/// `MailMessage.TransferDecoding.base64`, a lenient decoder that
/// skips junk, which is another contract.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i < input.count {
            let b0 = input[i], b1 = i + 1 < input.count ? input[i + 1] : 0, b2 = i + 2 < input.count ? input[i + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(i + 1 < input.count ? alphabet[Int((b1 & 0x0f) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(i + 2 < input.count ? alphabet[Int(b2 & 0x3f)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes, ignoring `=`, spaces and line ends; nil on any other byte outside the alphabet. One pass
    /// over the UTF-8 bytes with a table: JMAP's `Blob/get` hands over megabytes of it.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { input -> [UInt8]? in
            var out: [UInt8] = []
            out.reserveCapacity(input.count / 4 * 3 + 3)
            var acc: UInt32 = 0, bits = 0
            for c in input {
                let v = table[Int(c)]
                if v >= 64 {
                    if v == skip { continue }
                    return nil
                }
                acc = acc << 6 | UInt32(v)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
                }
            }
            return out
        }
    }

    private static let skip: UInt8 = 0xFE
    /// Each byte's value in the alphabet; `skip` for `=`, space, CR and LF; 0xFF for any other.
    private static let table: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        for c in "= \r\n".utf8 { t[Int(c)] = skip }
        return t
    }()
}
