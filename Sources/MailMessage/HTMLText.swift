import MoCore

/// HTML to plain text for indexing: tags removed, `script`/`style` content skipped, comments
/// and CDATA skipped, character references decoded, block elements and `<br>` turned into line breaks.
/// Not a renderer; linear in the input; never fails on broken markup (an unclosed `<` ends the text).
public enum HTMLText {
    public static func plainText(_ html: String) -> String {
        let a = Array(html.utf8)
        var out = [UInt8]()
        out.reserveCapacity(a.count / 2)
        let n = a.count
        var i = 0
        var skipUntil: [UInt8]? = nil  // closing tag name whose content we skip
        while i < n {
            let b = a[i]
            if b == UInt8(ascii: "<") {
                // Comment / CDATA / doctype.
                if starts(a, i, "<!--") {
                    i = find(a, i + 4, "-->").map { $0 + 3 } ?? n
                    continue
                }
                if starts(a, i, "<![CDATA[") {
                    i = find(a, i + 9, "]]>").map { $0 + 3 } ?? n
                    continue
                }
                // Tag name.
                var j = i + 1
                var closing = false
                if j < n, a[j] == UInt8(ascii: "/") { closing = true; j += 1 }
                let nameStart = j
                while j < n, isNameByte(a[j]) { j += 1 }
                let name = a[nameStart..<j].map { $0 | 0x20 }
                if name.isEmpty && !(j < n && (a[j] == UInt8(ascii: "!") || a[j] == UInt8(ascii: "?"))) {
                    // A lone '<' (as in "a < b"): text.
                    if skipUntil == nil { out.append(b) }
                    i += 1
                    continue
                }
                let end = tagEnd(a, j)
                if let s = skipUntil {
                    if closing && name == s { skipUntil = nil }
                    i = end
                    continue
                }
                if !closing, name == Array("script".utf8) || name == Array("style".utf8) {
                    skipUntil = name
                } else if blockTags.contains(name) {
                    if out.last != UInt8(ascii: "\n") { out.append(UInt8(ascii: "\n")) }
                } else if out.last != UInt8(ascii: " ") && out.last != UInt8(ascii: "\n") && !out.isEmpty {
                    out.append(UInt8(ascii: " "))  // inline tags still separate words ("a<b>c</b>" → "a c")
                }
                i = end
                continue
            }
            if skipUntil != nil { i += 1; continue }
            if b == UInt8(ascii: "&") {
                let (decoded, next) = entity(a, i)
                out += decoded
                i = next
                continue
            }
            if b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\t") || b == UInt8(ascii: " ") {
                // Collapse white space as a browser does.
                if let l = out.last, l != UInt8(ascii: " ") && l != UInt8(ascii: "\n") { out.append(UInt8(ascii: " ")) }
                i += 1
                continue
            }
            out.append(b)
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    static let blockTags: Set<[UInt8]> = Set(
        [
            "p", "br", "div", "tr", "li", "ul", "ol", "table", "h1", "h2", "h3",
            "h4", "h5", "h6", "blockquote", "pre", "hr", "dd", "dt", "dl", "td", "th", "body", "html", "center", "form",
            "section", "article", "header", "footer"
        ].map { Array($0.utf8) })

    @inline(__always) static func isNameByte(_ b: UInt8) -> Bool {
        let l = b | 0x20
        return (l >= UInt8(ascii: "a") && l <= UInt8(ascii: "z")) || ASCII.isDigit(b)
    }

    static func starts(_ a: [UInt8], _ i: Int, _ s: String) -> Bool {
        let u = Array(s.utf8)
        guard i + u.count <= a.count else { return false }
        for k in 0..<u.count where (a[i + k] | (u[k] >= UInt8(ascii: "A") ? 0x20 : 0)) != (u[k] | (u[k] >= UInt8(ascii: "A") ? 0x20 : 0)) {
            return false
        }
        return true
    }

    static func find(_ a: [UInt8], _ from: Int, _ s: String) -> Int? {
        let u = Array(s.utf8)
        var i = from
        while i + u.count <= a.count {
            if a[i] == u[0], starts(a, i, s) { return i }
            i += 1
        }
        return nil
    }

    /// Index after the `>` closing a tag whose name ended at `j`; quoted attribute values may hold `>`.
    static func tagEnd(_ a: [UInt8], _ j: Int) -> Int {
        var i = j
        var quote: UInt8? = nil
        while i < a.count {
            let b = a[i]
            if let q = quote {
                if b == q { quote = nil }
            } else if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
                // Only an attribute value opens a quote (after '='); a stray quote does not.
                if i > 0, a[i - 1] == UInt8(ascii: "=") { quote = b }
            } else if b == UInt8(ascii: ">") {
                return i + 1
            }
            i += 1
        }
        return a.count
    }

    /// Decodes the character reference at `i` (an `&`); returns its UTF-8 and the index after it.
    /// Unknown or malformed references stay literal.
    static func entity(_ a: [UInt8], _ i: Int) -> ([UInt8], Int) {
        var j = i + 1
        let n = a.count
        if j < n, a[j] == UInt8(ascii: "#") {
            j += 1
            var hex = false
            if j < n, a[j] | 0x20 == UInt8(ascii: "x") { hex = true; j += 1 }
            var v: UInt32 = 0
            let start = j
            while j < n, j - start < 8 {
                if let d = ASCII.hexValue(a[j]), hex || d < 10 { v = v * (hex ? 16 : 10) + UInt32(d) } else { break }
                j += 1
            }
            guard j > start else { return ([a[i]], i + 1) }
            if j < n, a[j] == UInt8(ascii: ";") { j += 1 }
            if v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF) { v = 0xFFFD }
            // Numeric references in 128...159 mean windows-1252, as browsers read them.
            if v >= 0x80 && v < 0xA0 {
                return (Array(Charset.decodeWindows1252([UInt8(v)]).utf8), j)
            }
            return (Array(String(Unicode.Scalar(v)!).utf8), j)
        }
        let start = j
        while j < n, j - start < 10, isNameByte(a[j]) { j += 1 }
        let name = String(decoding: a[start..<j], as: UTF8.self)
        if let scalar = entities[name] {
            if j < n, a[j] == UInt8(ascii: ";") { j += 1 }
            return (Array(String(Unicode.Scalar(scalar)!).utf8), j)
        }
        return ([a[i]], i + 1)
    }

    static let entities: [String: UInt32] = [
        "amp": 38, "lt": 60, "gt": 62, "quot": 34, "apos": 39, "nbsp": 0x20, "copy": 169, "reg": 174,
        "trade": 0x2122, "hellip": 0x2026, "mdash": 0x2014, "ndash": 0x2013, "lsquo": 0x2018, "rsquo": 0x2019,
        "ldquo": 0x201C, "rdquo": 0x201D, "bull": 0x2022, "middot": 183, "euro": 0x20AC, "pound": 163, "yen": 165,
        "cent": 162, "sect": 167, "deg": 176, "plusmn": 177, "times": 215, "divide": 247, "laquo": 171, "raquo": 187,
        "iexcl": 161, "iquest": 191, "szlig": 223, "agrave": 224, "aacute": 225, "acirc": 226, "atilde": 227,
        "auml": 228, "aring": 229, "aelig": 230, "ccedil": 231, "egrave": 232, "eacute": 233, "ecirc": 234,
        "euml": 235, "igrave": 236, "iacute": 237, "icirc": 238, "iuml": 239, "ntilde": 241, "ograve": 242,
        "oacute": 243, "ocirc": 244, "otilde": 245, "ouml": 246, "oslash": 248, "ugrave": 249, "uacute": 250,
        "ucirc": 251, "uuml": 252, "yacute": 253, "yuml": 255, "Agrave": 192, "Aacute": 193, "Acirc": 194,
        "Atilde": 195, "Auml": 196, "Aring": 197, "AElig": 198, "Ccedil": 199, "Egrave": 200, "Eacute": 201,
        "Ecirc": 202, "Euml": 203, "Igrave": 204, "Iacute": 205, "Icirc": 206, "Iuml": 207, "Ntilde": 209,
        "Ograve": 210, "Oacute": 211, "Ocirc": 212, "Otilde": 213, "Ouml": 214, "Oslash": 216, "Ugrave": 217,
        "Uacute": 218, "Ucirc": 219, "Uuml": 220, "Yacute": 221, "shy": 0xAD, "ensp": 0x2002, "emsp": 0x2003,
        "thinsp": 0x2009, "zwnj": 0x200C, "zwj": 0x200D, "para": 182, "frac12": 189, "frac14": 188, "frac34": 190,
        "AMP": 38, "LT": 60, "GT": 62, "QUOT": 34, "NBSP": 0x20
    ]
}
