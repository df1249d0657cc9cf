import MoCore

/// A parsed `Content-Type` or `Content-Disposition` value: the lower-cased token(s) and parameters.
public struct ContentType: Sendable, Equatable {
    /// Lower-cased media type (`text`), or for a disposition the disposition (`attachment`).
    public var type: String
    /// Lower-cased subtype (`plain`); empty for a disposition.
    public var subtype: String
    /// Parameters by lower-cased name, values fully decoded: quotes and escapes removed, RFC 2231
    /// continuations (`name*0*=`, `name*1=`) joined and charset-converted (`name*=utf-8''%E2%82%AC`),
    /// RFC 2047 encoded-words (which mailers put in `name=` / `filename=`) decoded.
    public var parameters: [String: String]

    public init(type: String, subtype: String, parameters: [String: String] = [:]) {
        self.type = type
        self.subtype = subtype
        self.parameters = parameters
    }

    /// `type/subtype`.
    public var mimeType: String { subtype.isEmpty ? type : "\(type)/\(subtype)" }

    /// The default of RFC 2045: `text/plain; charset=us-ascii`.
    public static let textPlain = ContentType(type: "text", subtype: "plain")

    /// Parses a Content-Type value; nil when there is no `type/subtype` (callers use the default).
    public static func parse<C: Collection>(_ value: C) -> ContentType? where C.Element == UInt8 {
        let a = Array(value)
        var i = 0
        let type = token(a, &i)
        skipBlanks(a, &i)
        guard !type.isEmpty, i < a.count, a[i] == UInt8(ascii: "/") else { return nil }
        i += 1
        skipBlanks(a, &i)
        let subtype = token(a, &i)
        guard !subtype.isEmpty else { return nil }
        return ContentType(type: type.lowercased(), subtype: subtype.lowercased(), parameters: parameters(a, &i))
    }

    /// Parses a Content-Disposition value (`attachment; filename=...`); `type` holds the disposition.
    public static func parseDisposition<C: Collection>(_ value: C) -> ContentType where C.Element == UInt8 {
        let a = Array(value)
        var i = 0
        skipBlanks(a, &i)
        let d = token(a, &i)
        return ContentType(type: d.lowercased(), subtype: "", parameters: parameters(a, &i))
    }

    static func skipBlanks(_ a: [UInt8], _ i: inout Int) {
        while i < a.count {
            let b = a[i]
            if b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n") { i += 1; continue }
            if b == UInt8(ascii: "(") {  // comment
                var depth = 0
                while i < a.count {
                    if a[i] == UInt8(ascii: "(") { depth += 1 }
                    if a[i] == UInt8(ascii: ")") { depth -= 1; if depth == 0 { i += 1; break } }
                    i += 1
                }
                continue
            }
            break
        }
    }

    /// An RFC 2045 token (bytes up to a blank or a tspecial), as a String.
    static func token(_ a: [UInt8], _ i: inout Int) -> String {
        skipBlanks(a, &i)
        let s = i
        while i < a.count {
            let b = a[i]
            if b <= 0x20 || b == 0x7F || b == UInt8(ascii: "/") || b == UInt8(ascii: ";") || b == UInt8(ascii: "=")
                || b == UInt8(ascii: "\"") || b == UInt8(ascii: "(") || b == UInt8(ascii: ",")
            {
                break
            }
            i += 1
        }
        return String(decoding: a[s..<i], as: UTF8.self)
    }

    /// One RFC 2231 section of a parameter.
    struct Section { var index: Int; var encoded: Bool; var value: [UInt8] }

    static func parameters(_ a: [UInt8], _ i: inout Int) -> [String: String] {
        var plain = [String: [UInt8]]()
        var sections = [String: [Section]]()
        var order = [String]()
        let n = a.count
        while i < n {
            // Find the next ';' (junk before it is ignored).
            while i < n, a[i] != UInt8(ascii: ";") { i += 1 }
            guard i < n else { break }
            i += 1
            skipBlanks(a, &i)
            let nameStart = i
            while i < n, a[i] != UInt8(ascii: "="), a[i] != UInt8(ascii: ";"), a[i] > 0x20 { i += 1 }
            var rawName = String(decoding: a[nameStart..<i], as: UTF8.self).lowercased()
            skipBlanks(a, &i)
            guard i < n, a[i] == UInt8(ascii: "="), !rawName.isEmpty else { continue }
            i += 1
            skipBlanks(a, &i)
            var value = [UInt8]()
            if i < n, a[i] == UInt8(ascii: "\"") {
                i += 1
                while i < n, a[i] != UInt8(ascii: "\"") {
                    if a[i] == UInt8(ascii: "\\"), i + 1 < n { i += 1 }
                    if a[i] != UInt8(ascii: "\r") && a[i] != UInt8(ascii: "\n") { value.append(a[i]) }
                    i += 1
                }
                if i < n { i += 1 }
            } else {
                // Unquoted: up to ';' (blanks inside kept, trailing blanks trimmed): broken mailers
                // write `name=My File.pdf`.
                while i < n, a[i] != UInt8(ascii: ";") {
                    if a[i] != UInt8(ascii: "\r") && a[i] != UInt8(ascii: "\n") { value.append(a[i]) }
                    i += 1
                }
                // A trailing RFC 822 comment is not part of the value: `format=flowed (comment)`.
                if value.last == UInt8(ascii: ")"), let open = value.firstIndex(of: UInt8(ascii: "(")), open > 0,
                    value[open - 1] == UInt8(ascii: " ") || value[open - 1] == UInt8(ascii: "\t")
                {
                    value.removeSubrange(open...)
                }
                while let l = value.last, l == UInt8(ascii: " ") || l == UInt8(ascii: "\t") { value.removeLast() }
            }
            // RFC 2231: name*, name*N, name*N*.
            var encoded = false
            var index = -1
            if rawName.hasSuffix("*") { encoded = true; rawName.removeLast() }
            if let star = rawName.lastIndex(of: "*"), let k = Int(rawName[rawName.index(after: star)...]) {
                index = k
                rawName = String(rawName[..<star])
            } else if encoded {
                index = 0
            }
            if index >= 0 {
                if sections[rawName] == nil && plain[rawName] == nil { order.append(rawName) }
                sections[rawName, default: []].append(Section(index: index, encoded: encoded, value: value))
            } else {
                if plain[rawName] == nil && sections[rawName] == nil { order.append(rawName) }
                if plain[rawName] == nil { plain[rawName] = value }
            }
        }
        var out = [String: String]()
        for name in order {
            if let secs = sections[name] {
                // RFC 2231 wins over a plain duplicate (mailers send both for old readers).
                out[name] = joinSections(secs.sorted { $0.index < $1.index })
            } else if let v = plain[name] {
                out[name] = EncodedWords.decode(v)
            }
        }
        return out
    }

    static func joinSections(_ secs: [Section]) -> String {
        var charset: String? = nil
        var bytes = [UInt8]()
        for (k, s) in secs.enumerated() {
            var v = s.value[...]
            if k == 0 && s.encoded {
                // charset'language'value
                if let q1 = v.firstIndex(of: UInt8(ascii: "'")) {
                    let rest = v[(q1 + 1)...]
                    if let q2 = rest.firstIndex(of: UInt8(ascii: "'")) {
                        charset = String(decoding: v[..<q1], as: UTF8.self)
                        v = v[(q2 + 1)...]
                    }
                }
            }
            bytes += s.encoded ? percentDecode(v) : Array(v)
        }
        if charset == nil || charset!.isEmpty { return EncodedWords.decode(bytes) }
        return Charset.decode(bytes, label: charset)
    }

    static func percentDecode(_ v: ArraySlice<UInt8>) -> [UInt8] {
        var out = [UInt8]()
        var i = v.startIndex
        while i < v.endIndex {
            if v[i] == UInt8(ascii: "%"), i + 2 < v.endIndex,
                let h = ASCII.hexValue(v[i + 1]), let l = ASCII.hexValue(v[i + 2])
            {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(v[i])
                i += 1
            }
        }
        return out
    }
}
