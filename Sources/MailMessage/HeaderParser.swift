#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One header field as it appeared: its name and the raw bytes after the colon (folding kept).
public struct HeaderField: Sendable, Equatable {
    /// The field name as written (case kept).
    public let name: String
    /// The whole field in the parsed bytes: its first line to the line end of its last continuation line
    /// (`HeaderEdit` removes fields by it).
    public let range: Range<Int>
    /// The raw value: every byte after the colon up to the end of the field, line breaks of folded
    /// lines included, the final line break excluded.
    public let rawValue: [UInt8]

    /// The value unfolded as GMime (hence notmuch) does it: leading and trailing blanks removed, every
    /// CR and LF removed (the blanks that follow a fold stay).
    public var unfoldedValue: [UInt8] { HeaderBlock.unfold(rawValue[...]) }

    /// The value unfolded and decoded for display: RFC 2047 encoded-words and raw 8-bit bytes to UTF-8.
    public var text: String { EncodedWords.decode(unfoldedValue) }
}

/// An RFC 5322 header block: fields in order, repeated fields kept, and where the body starts.
public struct HeaderBlock: Sendable, Equatable {
    /// Every well-formed field, in order.
    public let fields: [HeaderField]
    /// Offset of the first body byte in the parsed bytes (after the blank line), or the input's end.
    public let bodyOffset: Int
    /// True when the input began with an mbox `From ` line (skipped).
    public let hadMboxFromLine: Bool
    /// True when the first line was neither a header nor an mbox `From ` line: GMime (so notmuch)
    /// refuses such input as "not email". `fields` is then empty and `bodyOffset` is 0.
    public let startsWithGarbage: Bool

    public init(fields: [HeaderField], bodyOffset: Int, hadMboxFromLine: Bool = false, startsWithGarbage: Bool = false) {
        self.fields = fields
        self.bodyOffset = bodyOffset
        self.hadMboxFromLine = hadMboxFromLine
        self.startsWithGarbage = startsWithGarbage
    }

    /// All fields named `name` (ASCII case-insensitive), in order.
    public func fields(named name: String) -> [HeaderField] {
        fields.filter { $0.name.asciiCaseInsensitiveEquals(name) }
    }

    /// The first field named `name`; GMime's lookups (and notmuch's) use the first occurrence.
    public func first(_ name: String) -> HeaderField? {
        fields.first { $0.name.asciiCaseInsensitiveEquals(name) }
    }

    /// The decoded text of the first field named `name`.
    public subscript(name: String) -> String? { first(name)?.text }

    /// Parses the header block at the start of `bytes`.
    ///
    /// Lines end at LF (a CR before it is dropped); a line starting with a blank continues the
    /// previous field; a blank line ends the block. Lines that are not `name: value` are skipped,
    /// except a first line: an mbox `From ` line is skipped, anything else ends parsing (no headers).
    /// Linear in the size of the header block; stops at the blank line, so the body is never scanned.
    ///
    /// `strictStart: false` reads a first line that is neither a field nor an mbox `From ` line as a line
    /// that is not a field (dropped, the fields after it read): what a sender must do with the header a
    /// mail program handed it (`HeaderEdit`), where GMime's refusal would hide a Bcc further down.
    public static func parse(_ bytes: [UInt8], strictStart: Bool = true) -> HeaderBlock {
        parse(bytes[...], strictStart: strictStart)
    }

    /// Parses the header block at the start of `slice`; offsets are in the slice's base array indices.
    public static func parse(_ slice: ArraySlice<UInt8>, strictStart: Bool = true) -> HeaderBlock {
        if slice.isEmpty { return HeaderBlock(fields: [], bodyOffset: slice.startIndex) }
        var fields = [HeaderField]()
        let start = slice.startIndex, end = slice.endIndex
        var pos = start
        var hadFrom = false
        // Current field: name and raw value range.
        var curName: String? = nil
        var valStart = 0, valEnd = 0
        var fieldStart = 0, fieldEnd = 0

        func flush() {
            if let n = curName {
                fields.append(HeaderField(name: n, range: fieldStart..<fieldEnd, rawValue: Array(slice[valStart..<valEnd])))
            }
            curName = nil
        }

        var first = true
        return slice.withUnsafeBufferPointer { buf -> HeaderBlock in
            let base = buf.baseAddress!
            @inline(__always) func at(_ i: Int) -> UInt8 { base[i - start] }
            // End of the line starting at `i`: index of its LF, or `end`.
            func lineEnd(_ i: Int) -> Int {
                if i >= end { return end }
                if let p = memchr(base + (i - start), 0x0A, end - i) {
                    return i + (UnsafeRawPointer(p) - UnsafeRawPointer(base + (i - start)))
                }
                return end
            }
            while pos < end {
                let lf = lineEnd(pos)
                var contentEnd = lf
                if contentEnd > pos, at(contentEnd - 1) == UInt8(ascii: "\r") { contentEnd -= 1 }
                let next = lf < end ? lf + 1 : end
                if contentEnd == pos {
                    // Blank line: end of headers.
                    flush()
                    return HeaderBlock(fields: fields, bodyOffset: next, hadMboxFromLine: hadFrom)
                }
                let c0 = at(pos)
                if (c0 == UInt8(ascii: " ") || c0 == UInt8(ascii: "\t")), curName != nil {
                    valEnd = contentEnd  // continuation: the value grows over the fold
                    fieldEnd = next
                    pos = next
                    first = false
                    continue
                }
                // A field line: name, optional blanks, colon. Names hold no blanks or controls.
                var i = pos
                var nameEnd = -1
                var sawBlank = false
                while i < contentEnd {
                    let b = at(i)
                    if b == UInt8(ascii: ":") { nameEnd = i; break }
                    if b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") {
                        sawBlank = true
                    } else if sawBlank || b < 0x21 || b == 0x7F {
                        break
                    }
                    i += 1
                }
                if nameEnd > pos {
                    flush()
                    var ne = nameEnd
                    while ne > pos, at(ne - 1) == UInt8(ascii: " ") || at(ne - 1) == UInt8(ascii: "\t") { ne -= 1 }
                    curName = String(decoding: slice[pos..<ne], as: UTF8.self)
                    valStart = nameEnd + 1
                    valEnd = contentEnd
                    fieldStart = pos
                    fieldEnd = next
                } else if first {
                    // GMime also skips a munged ">From " first line.
                    let f = contentEnd - pos >= 1 && at(pos) == UInt8(ascii: ">") ? pos + 1 : pos
                    if contentEnd - f >= 5, slice[f..<f + 5].elementsEqual("From ".utf8) {
                        hadFrom = true
                    } else if !strictStart {
                        // Not a field: dropped, as any later such line is.
                    } else {
                        return HeaderBlock(fields: [], bodyOffset: start, startsWithGarbage: true)
                    }
                } else {
                    flush()  // not a field: dropped, and it cannot be continued
                }
                first = false
                pos = next
            }
            flush()
            return HeaderBlock(fields: fields, bodyOffset: end, hadMboxFromLine: hadFrom)
        }
    }

    /// GMime's `g_mime_utils_header_unfold`: trim blanks (space, tab, CR, LF) at both ends, drop CR and LF.
    static func unfold(_ raw: ArraySlice<UInt8>) -> [UInt8] {
        var s = raw.startIndex, e = raw.endIndex
        @inline(__always) func lwsp(_ b: UInt8) -> Bool {
            b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n")
        }
        while s < e, lwsp(raw[s]) { s += 1 }
        while e > s, lwsp(raw[e - 1]) { e -= 1 }
        var out = [UInt8]()
        out.reserveCapacity(e - s)
        for b in raw[s..<e] where b != UInt8(ascii: "\r") && b != UInt8(ascii: "\n") { out.append(b) }
        return out
    }
}

extension String {
    func asciiCaseInsensitiveEquals(_ other: String) -> Bool {
        let a = utf8, b = other.utf8
        guard a.count == b.count else { return false }
        for (x, y) in zip(a, b) {
            let lx = (x >= UInt8(ascii: "A") && x <= UInt8(ascii: "Z")) ? x | 0x20 : x
            let ly = (y >= UInt8(ascii: "A") && y <= UInt8(ascii: "Z")) ? y | 0x20 : y
            if lx != ly { return false }
        }
        return true
    }
}
