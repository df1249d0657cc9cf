#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Converts bytes in a named charset to a Swift `String`, through glibc `iconv` for everything but
/// UTF-8, US-ASCII and windows-1252/latin1 (done here: they are most mail and need no `iconv_open`).
///
/// Never fails: invalid sequences become U+FFFD; an unknown charset is read as UTF-8 with the
/// windows-1252 fallback of ``decodeUnlabelled(_:)``.
public enum Charset {
    /// Decodes `bytes` labelled with `label` (a MIME charset name, case-insensitive, maybe quoted or
    /// carrying an RFC 2231 language suffix such as `utf-8*en`).
    public static func decode<C: Collection>(_ bytes: C, label: String?) -> String where C.Element == UInt8 {
        let name = canonicalName(label)
        switch name {
        case nil, "UTF-8":
            return decodeUnlabelled(bytes)
        case "WINDOWS-1252":
            return decodeWindows1252(bytes)
        default:
            // ASCII bytes mean ASCII only in ASCII-compatible charsets (not ISO-2022-*, UTF-7, UTF-16...).
            if isASCII(bytes) && !statefulOrWide(name!) { return String(decoding: bytes, as: UTF8.self) }
            if let s = iconvDecode(Array(bytes), from: name!) { return s }
            return decodeUnlabelled(bytes)
        }
    }

    /// Decodes bytes of no declared charset (raw 8-bit headers, unknown labels): UTF-8 when they are
    /// valid UTF-8, else windows-1252 (a superset of the printable latin1 most such bytes are).
    public static func decodeUnlabelled<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        if let s = validUTF8(bytes) {
            // Unlabelled Japanese mail is often ISO-2022-JP: 7-bit, so valid UTF-8, with ESC $ B shifts.
            if bytes.contains(0x1B), looksISO2022JP(bytes), let j = iconvDecode(Array(bytes), from: "ISO-2022-JP-2") {
                return j
            }
            return s
        }
        return decodeWindows1252(bytes)
    }

    /// The `iconv` name for a MIME label, or nil for UTF-8 / ASCII / empty / unknown labels.
    /// Labels map to the superset real mailers mean (GB2312 → GB18030, ks_c_5601 → CP949, ...).
    static func canonicalName(_ label: String?) -> String? {
        guard var l = label?.lowercased() else { return nil }
        l = l.trimmingASCIIWhitespaceAndQuotes()
        if let star = l.firstIndex(of: "*") { l = String(l[..<star]) }  // RFC 2231 language tag
        switch l {
        case "", "utf-8", "utf8", "us-ascii", "ascii", "ansi_x3.4-1968", "646", "us", "x-unknown",
            "unknown", "unknown-8bit", "x-user-defined", "default", "charset", "none", "8bit", "7bit":
            return nil
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "windows-1252", "cp1252",
            "x-cp1252", "iso-8859-1:1987", "cp819", "ibm819":
            return "WINDOWS-1252"
        case "gb2312", "gbk", "x-gbk", "cp936", "euc-cn", "x-euc-cn", "gb_2312-80", "csgb2312", "chinese":
            return "GB18030"
        case "ks_c_5601-1987", "ks_c_5601", "ksc5601", "euc-kr", "x-euc-kr", "korean", "cp949", "uhc":
            return "CP949"
        case "shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis", "windows-31j", "cp932":
            return "CP932"
        case "iso-2022-jp", "csiso2022jp", "iso-2022-jp-1":
            return "ISO-2022-JP-2"  // superset; also decodes the JIS X 0212 some mailers emit
        case "big5", "x-big5", "big-5", "cn-big5", "csbig5", "big5-hkscs":
            return "BIG5-HKSCS"
        case "iso-8859-8-i", "iso-8859-8-e":
            return "ISO-8859-8"
        case "iso-8859-6-i", "iso-8859-6-e":
            return "ISO-8859-6"
        case "unicode-1-1-utf-7", "x-unicode-2-0-utf-7", "utf-7", "utf7":
            return "UTF-7"
        case "x-mac-roman", "mac", "macintosh", "macroman", "x-mac":
            return "MACINTOSH"
        case "koi8-r", "koi8r", "cskoi8r": return "KOI8-R"
        case "koi8-u", "koi8u": return "KOI8-U"
        case "tis-620", "windows-874", "iso-8859-11": return "CP874"
        default:
            return l.uppercased()
        }
    }

    static func statefulOrWide(_ name: String) -> Bool {
        name.hasPrefix("ISO-2022") || name.hasPrefix("UTF-7") || name.hasPrefix("UTF-16") || name.hasPrefix("UTF-32")
            || name.hasPrefix("UCS") || name == "HZ" || name.hasPrefix("HZ-")
    }

    static func looksISO2022JP<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        var it = bytes.makeIterator()
        var prev2: UInt8 = 0, prev1: UInt8 = 0
        while let b = it.next() {
            if prev2 == 0x1B && prev1 == UInt8(ascii: "$") && (b == UInt8(ascii: "B") || b == UInt8(ascii: "@")) { return true }
            prev2 = prev1
            prev1 = b
        }
        return false
    }

    @inline(__always)
    static func isASCII<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        for b in bytes where b >= 0x80 { return false }
        return true
    }

    /// The string if `bytes` are valid UTF-8, else nil.
    static func validUTF8<C: Collection>(_ bytes: C) -> String? where C.Element == UInt8 {
        String(validating: bytes, as: UTF8.self)
    }

    // windows-1252 0x80...0x9F; the rest is latin1. Undefined slots map to their C1 control, as browsers do.
    private static let cp1252High: [UInt32] = [
        0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,
        0x017D, 0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A,
        0x0153, 0x9D, 0x017E, 0x0178
    ]

    static func decodeWindows1252<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out = String.UnicodeScalarView()
        for b in bytes {
            let v: UInt32 = (b >= 0x80 && b < 0xA0) ? cp1252High[Int(b - 0x80)] : UInt32(b)
            out.append(Unicode.Scalar(v)!)
        }
        return String(out)
    }

    /// Converts with glibc `iconv`; nil when iconv does not know `name`. Invalid or truncated input
    /// sequences become U+FFFD and conversion goes on one byte later.
    static func iconvDecode(_ input: [UInt8], from name: String) -> String? {
        let cd = iconv_open("UTF-8", name)
        if cd == nil || cd == iconv_t(bitPattern: -1) { return nil }
        defer { iconv_close(cd) }
        var out = [UInt8]()
        out.reserveCapacity(input.count * 2 + 16)
        var chunk = [UInt8](repeating: 0, count: max(256, min(input.count * 4, 1 << 20)))
        let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]
        input.withUnsafeBufferPointer { inBuf in
            var inPtr = UnsafeMutablePointer<CChar>(
                mutating: UnsafeRawPointer(inBuf.baseAddress!)
                    .assumingMemoryBound(to: CChar.self))
            var inLeft = inBuf.count
            chunk.withUnsafeMutableBufferPointer { outBuf in
                let outBase = UnsafeMutableRawPointer(outBuf.baseAddress!).assumingMemoryBound(to: CChar.self)
                var flushing = false
                while true {
                    var outPtr: UnsafeMutablePointer<CChar>? = outBase
                    var outLeft = outBuf.count
                    let rc: Int
                    if flushing {
                        rc = iconv(cd, nil, nil, &outPtr, &outLeft)
                    } else {
                        var ip: UnsafeMutablePointer<CChar>? = inPtr
                        rc = iconv(cd, &ip, &inLeft, &outPtr, &outLeft)
                        inPtr = ip!
                    }
                    let produced = outBuf.count - outLeft
                    out.append(contentsOf: UnsafeRawBufferPointer(start: outBase, count: produced))
                    if rc == -1 {
                        let e = errno
                        if e == E2BIG { continue }
                        if e == EILSEQ || e == EINVAL {
                            out.append(contentsOf: replacement)
                            if inLeft > 0 { inPtr += 1; inLeft -= 1 }
                            if inLeft == 0 { flushing = true }
                            continue
                        }
                        break
                    }
                    if flushing { break }
                    if inLeft == 0 { flushing = true }
                }
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension String {
    func trimmingASCIIWhitespaceAndQuotes() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\"" || f == "'" || f == "\r" || f == "\n" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\"" || l == "'" || l == "\r" || l == "\n" { s.removeLast() }
        return String(s)
    }
}
