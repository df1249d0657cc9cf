import MoCore

/// Content-Transfer-Encoding decoders. Tolerant by design: they never fail, and work in one pass.
public enum TransferDecoding {
    /// The transfer encodings a MIME part can declare; unknown names read as `.identity`.
    public enum Encoding: Sendable, Equatable {
        case identity, base64, quotedPrintable, uuencode

        /// Parses a Content-Transfer-Encoding value (`7bit`, `8bit`, `binary`, `base64`, `quoted-printable`).
        public init(header: String?) {
            let v = (header ?? "").trimmingASCIIWhitespaceAndQuotes().lowercased()
            switch v {
            case "base64": self = .base64
            case "quoted-printable", "quoted_printable", "qp": self = .quotedPrintable
            case "x-uuencode", "uuencode", "x-uue": self = .uuencode
            default: self = .identity
            }
        }
    }

    /// Decodes `bytes` with `encoding`.
    public static func decode(_ bytes: ArraySlice<UInt8>, _ encoding: Encoding) -> [UInt8] {
        switch encoding {
        case .identity, .uuencode: return Array(bytes)
        case .base64: return base64(bytes)
        case .quotedPrintable: return quotedPrintable(bytes)
        }
    }

    /// The decoded length without decoding (for attachment sizes): exact for base64, the input size otherwise.
    public static func decodedSize(_ bytes: ArraySlice<UInt8>, _ encoding: Encoding) -> Int {
        switch encoding {
        case .base64:
            var n = 0
            for b in bytes where base64Value[Int(b)] != 0xFF { n += 1 }
            return n / 4 * 3 + [0, 0, 1, 2][n % 4]
        case .quotedPrintable: return quotedPrintable(bytes).count
        default: return bytes.count
        }
    }

    static let base64Value: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            t[Int(c)] = UInt8(i)
        }
        // URL-safe alphabet too: some broken mailers use it.
        t[Int(UInt8(ascii: "-"))] = 62
        t[Int(UInt8(ascii: "_"))] = 63
        return t
    }()

    /// Base64 that skips every byte outside the alphabet (line breaks, spaces, junk, `=` padding) and
    /// decodes a trailing group of 2 or 3 symbols as if padded. A lone trailing symbol is dropped.
    public static func base64<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count / 4 * 3 + 3)
        var acc: UInt32 = 0
        var n = 0
        base64Value.withUnsafeBufferPointer { table in
            for b in bytes {
                let v = table[Int(b)]
                if v == 0xFF { continue }
                acc = (acc << 6) | UInt32(v)
                n += 1
                if n == 4 {
                    out.append(UInt8(truncatingIfNeeded: acc >> 16))
                    out.append(UInt8(truncatingIfNeeded: acc >> 8))
                    out.append(UInt8(truncatingIfNeeded: acc))
                    acc = 0
                    n = 0
                }
            }
        }
        if n == 2 {
            out.append(UInt8(truncatingIfNeeded: acc >> 4))
        } else if n == 3 {
            out.append(UInt8(truncatingIfNeeded: acc >> 10))
            out.append(UInt8(truncatingIfNeeded: acc >> 2))
        }
        return out
    }

    /// Quoted-printable: `=XX` (either case) decoded, `=` before a line end (even with trailing blanks)
    /// is a soft break, any other `=` stays literal. With `underscoreIsSpace` (RFC 2047 "Q"), `_` → space.
    public static func quotedPrintable<C: Collection>(_ bytes: C, underscoreIsSpace: Bool = false) -> [UInt8]
    where C.Element == UInt8 {
        let a = Array(bytes)
        var out = [UInt8]()
        out.reserveCapacity(a.count)
        var i = 0
        let n = a.count
        while i < n {
            let b = a[i]
            if b == UInt8(ascii: "=") {
                if i + 2 < n, let h = ASCII.hexValue(a[i + 1]), let l = ASCII.hexValue(a[i + 2]) {
                    out.append(h << 4 | l)
                    i += 3
                    continue
                }
                // Soft line break: "=" [blanks] (CRLF | LF | end of input).
                var j = i + 1
                while j < n, a[j] == UInt8(ascii: " ") || a[j] == UInt8(ascii: "\t") { j += 1 }
                if j == n { i = j; continue }
                if a[j] == UInt8(ascii: "\n") { i = j + 1; continue }
                if a[j] == UInt8(ascii: "\r") {
                    i = (j + 1 < n && a[j + 1] == UInt8(ascii: "\n")) ? j + 2 : j + 1
                    continue
                }
                out.append(b)
                i += 1
            } else if underscoreIsSpace && b == UInt8(ascii: "_") {
                out.append(UInt8(ascii: " "))
                i += 1
            } else {
                out.append(b)
                i += 1
            }
        }
        return out
    }
}
