/// RFC 4648 base64 with padding, for SASL payloads (IMAP AUTHENTICATE, SMTP AUTH): short strings, so
/// speed does not matter. MIME bodies use `MailMessage.TransferDecoding.base64`, a lenient decoder that
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

    /// Decodes, ignoring `=`, spaces and line ends; nil on any other byte outside the alphabet.
    public static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var acc: UInt32 = 0, bits = 0
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = c - 65
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = c - 97 + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - 48 + 52
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            case UInt8(ascii: "="), UInt8(ascii: " "), UInt8(ascii: "\r"), UInt8(ascii: "\n"): continue
            default: return nil
            }
            acc = acc << 6 | UInt32(v); bits += 6
            if bits >= 8 { bits -= 8; out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits))) }
        }
        return out
    }
}
