/// RFC 2047 encoded-words in unstructured header text, decoded the way GMime does it.
public enum EncodedWords {
    /// Decodes header text: `=?charset?B|Q?payload?=` words become UTF-8 (any charset `iconv` knows,
    /// RFC 2231 language suffix `charset*lang` ignored); whitespace between two encoded-words is dropped;
    /// runs of adjacent encoded-words of the same charset and encoding are joined before charset
    /// conversion (mailers split multibyte characters and `=XX` triplets across words); malformed
    /// words stay as written; other 8-bit bytes read as UTF-8, else windows-1252.
    public static func decode<C: Collection>(_ text: C) -> String where C.Element == UInt8 {
        let a = Array(text)
        // Fast path: nothing encoded, nothing 8-bit.
        if !contains(a, "=?") {
            return Charset.decodeUnlabelled(a)
        }
        return render(tokenize(a))
    }

    /// Decodes a `String` that may hold encoded-words.
    public static func decode(_ text: String) -> String { decode(Array(text.utf8)) }

    enum Token {
        case space([UInt8])
        case text([UInt8])
        case word(charset: String, encoding: UInt8, payload: [UInt8])
    }

    static func contains(_ a: [UInt8], _ needle: String) -> Bool {
        let n = Array(needle.utf8)
        guard a.count >= n.count else { return false }
        var i = 0
        while i + n.count <= a.count {
            if a[i] == n[0] && a[i + 1] == n[1] { return true }
            i += 1
        }
        return false
    }

    @inline(__always) static func isBlank(_ b: UInt8) -> Bool {
        b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n")
    }

    /// Tries to read an encoded-word at `i` (which holds `=?`); returns the token and the index after it.
    static func encodedWord(_ a: [UInt8], at i: Int) -> (Token, Int)? {
        let n = a.count
        var j = i + 2
        let csStart = j
        while j < n, a[j] != UInt8(ascii: "?") {
            if isBlank(a[j]) { return nil }
            j += 1
        }
        guard j + 2 < n, j > csStart else { return nil }
        let enc = a[j + 1] | 0x20  // lower-case
        guard enc == UInt8(ascii: "b") || enc == UInt8(ascii: "q"), a[j + 2] == UInt8(ascii: "?") else { return nil }
        let charset = String(decoding: a[csStart..<j], as: UTF8.self)
        let pStart = j + 3
        var k = pStart
        while k + 1 < n, !(a[k] == UInt8(ascii: "?") && a[k + 1] == UInt8(ascii: "=")) { k += 1 }
        guard k + 1 < n else { return nil }
        return (.word(charset: charset, encoding: enc, payload: Array(a[pStart..<k])), k + 2)
    }

    static func tokenize(_ a: [UInt8]) -> [Token] {
        var tokens = [Token]()
        var i = 0
        let n = a.count
        var text = [UInt8]()
        func flushText() {
            if !text.isEmpty { tokens.append(.text(text)); text.removeAll(keepingCapacity: true) }
        }
        while i < n {
            let b = a[i]
            if isBlank(b) {
                flushText()
                var j = i
                while j < n, isBlank(a[j]) { j += 1 }
                tokens.append(.space(Array(a[i..<j])))
                i = j
            } else if b == UInt8(ascii: "="), i + 1 < n, a[i + 1] == UInt8(ascii: "?"),
                let (tok, next) = encodedWord(a, at: i)
            {
                flushText()
                tokens.append(tok)
                i = next
            } else {
                text.append(b)
                i += 1
            }
        }
        flushText()
        return tokens
    }

    static func render(_ tokens: [Token]) -> String {
        var out = ""
        var i = 0
        let n = tokens.count
        var lastWasWord = false
        while i < n {
            switch tokens[i] {
            case .space(let s):
                // Whitespace between two encoded-words is dropped.
                if lastWasWord, i + 1 < n, case .word = tokens[i + 1] {
                    i += 1
                    continue
                }
                out += String(decoding: s, as: UTF8.self)
                i += 1
            case .text(let t):
                out += Charset.decodeUnlabelled(t)
                lastWasWord = false
                i += 1
            case .word(let cs, let enc, _):
                // Gather the run of words with this charset and encoding (skipping spaces between them).
                var bytes = [UInt8]()
                var qpPayload = [UInt8]()
                var j = i
                var lastWord = i
                while j < n {
                    if case .word(let c2, let e2, let p2) = tokens[j], c2 == cs, e2 == enc {
                        if enc == UInt8(ascii: "b") { bytes += TransferDecoding.base64(p2) } else { qpPayload += p2 }
                        lastWord = j
                        j += 1
                    } else if case .space = tokens[j], j + 1 < n, case .word(let c2, let e2, _) = tokens[j + 1],
                        c2 == cs, e2 == enc
                    {
                        j += 1
                    } else {
                        break
                    }
                }
                if enc == UInt8(ascii: "q") { bytes = TransferDecoding.quotedPrintable(qpPayload, underscoreIsSpace: true) }
                out += Charset.decode(bytes, label: cs)
                lastWasWord = true
                i = lastWord + 1
            }
        }
        return out
    }
}
