#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// One node of a message's MIME tree. Offsets refer to the bytes the tree was parsed from.
public struct MIMEPart: Sendable, Equatable {
    /// The part's own header block (for the root: the message's headers).
    public var headers: HeaderBlock
    /// Its Content-Type, or the default (`text/plain`; `message/rfc822` inside multipart/digest).
    public var contentType: ContentType
    /// Its Content-Disposition, if any (`type` holds `attachment` / `inline`).
    public var disposition: ContentType?
    /// The declared Content-Transfer-Encoding.
    public var transferEncoding: TransferDecoding.Encoding
    /// The encoded body (after the header block), in the parsed bytes' indices.
    public var bodyRange: Range<Int>
    /// Sub-parts of a multipart, or the one embedded message of a message/rfc822 part.
    public var children: [MIMEPart]
    /// Nesting depth (root 0).
    public var depth: Int
    /// The whole entity, its header block and body, in the parsed bytes' indices: for a part of a
    /// multipart, without the line break before the next boundary (what RFC 3156 signs).
    public var range: Range<Int> = 0..<0

    /// The attachment's file name: Content-Disposition `filename`, else Content-Type `name`
    /// (both with RFC 2231 and RFC 2047 forms decoded).
    public var filename: String? {
        if let f = disposition?.parameters["filename"], !f.isEmpty { return f }
        if let f = contentType.parameters["name"], !f.isEmpty { return f }
        return nil
    }

    /// An attachment: a leaf with `Content-Disposition: attachment`, or one with a file name.
    public var isAttachment: Bool {
        guard children.isEmpty, contentType.type != "multipart" else { return false }
        return disposition?.type == "attachment" || filename != nil
    }

    /// The body with its transfer encoding undone.
    public func decodedBody(in bytes: [UInt8]) -> [UInt8] {
        TransferDecoding.decode(bytes[bodyRange], transferEncoding)
    }

    /// Decoded size in bytes (base64 is counted, not decoded).
    public func decodedSize(in bytes: [UInt8]) -> Int {
        TransferDecoding.decodedSize(bytes[bodyRange], transferEncoding)
    }

    /// A text part's content as a String: transfer decoding, then the `charset` parameter through iconv.
    public func text(in bytes: [UInt8]) -> String {
        Charset.decode(decodedBody(in: bytes), label: contentType.parameters["charset"])
    }

    /// Every part, depth first, this one included.
    public var allParts: [MIMEPart] {
        var out = [self]
        for c in children { out += c.allParts }
        return out
    }
}

/// Builds the MIME tree of a message.
public enum MIMEParser {
    /// Deeper nesting is not parsed (the part stays a leaf): bounds work and stack on hostile input.
    public static let maxDepth = 32

    /// Parses the whole message in `bytes`.
    public static func parse(_ bytes: [UInt8]) -> MIMEPart {
        parseEntity(bytes, bytes.startIndex..<bytes.endIndex, depth: 0, inDigest: false)
    }

    /// Parses the entity (header block + body) in `range`.
    static func parseEntity(
        _ bytes: [UInt8], _ range: Range<Int>, depth: Int, inDigest: Bool,
        headers known: HeaderBlock? = nil
    ) -> MIMEPart {
        let headers = known ?? HeaderBlock.parse(bytes[range])
        let bodyStart = max(range.lowerBound, min(headers.bodyOffset, range.upperBound))
        let body = bodyStart..<range.upperBound
        var ct =
            headers.first("Content-Type").flatMap { ContentType.parse($0.unfoldedValue) }
            ?? (inDigest ? ContentType(type: "message", subtype: "rfc822") : .textPlain)
        let disp = headers.first("Content-Disposition").map { ContentType.parseDisposition($0.unfoldedValue) }
        let cte = TransferDecoding.Encoding(header: headers.first("Content-Transfer-Encoding")?.text)
        var children = [MIMEPart]()

        if depth < maxDepth {
            if ct.type == "multipart" {
                if let boundary = ct.parameters["boundary"], !boundary.isEmpty,
                    let ranges = splitMultipart(bytes, body, boundary: Array(boundary.utf8))
                {
                    let digest = ct.subtype == "digest"
                    for r in ranges {
                        children.append(parseEntity(bytes, r, depth: depth + 1, inDigest: digest))
                    }
                } else {
                    // No boundary parameter, or no boundary line: read the body as text.
                    ct = ContentType(type: "text", subtype: "plain", parameters: ct.parameters)
                }
            } else if ct.type == "message" && (ct.subtype == "rfc822" || ct.subtype == "global")
                && cte == .identity && !body.isEmpty
            {
                children.append(parseEntity(bytes, body, depth: depth + 1, inDigest: false))
            }
        }
        return MIMEPart(
            headers: headers, contentType: ct, disposition: disp, transferEncoding: cte,
            bodyRange: body, children: children, depth: depth, range: range)
    }

    /// The part ranges of a multipart body: the text between boundary lines. A boundary line is
    /// `--boundary` followed only by blanks, or by `--` (the close). The line break before a boundary
    /// belongs to it. Preamble and epilogue are dropped. Without a close, the last part runs to the
    /// end (truncated mail). Nil when no boundary line exists at all.
    static func splitMultipart(_ bytes: [UInt8], _ body: Range<Int>, boundary: [UInt8]) -> [Range<Int>]? {
        if body.isEmpty || bytes.isEmpty { return nil }
        var parts = [Range<Int>]()
        var partStart: Int? = nil
        var pos = body.lowerBound
        let end = body.upperBound
        let bl = boundary.count
        return bytes.withUnsafeBufferPointer { buf -> [Range<Int>]? in
            let base = buf.baseAddress!
            while pos < end {
                var lf = end
                if let p = memchr(base + pos, 0x0A, end - pos) {
                    lf = UnsafeRawPointer(p) - UnsafeRawPointer(base)
                }
                var lineEnd = lf
                if lineEnd > pos, base[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
                let next = lf < end ? lf + 1 : end
                if lineEnd - pos >= 2 + bl, base[pos] == UInt8(ascii: "-"), base[pos + 1] == UInt8(ascii: "-"),
                    memcmp(base + pos + 2, boundary, bl) == 0
                {
                    var k = pos + 2 + bl
                    var closing = false
                    if k + 2 <= lineEnd, base[k] == UInt8(ascii: "-"), base[k + 1] == UInt8(ascii: "-") { closing = true; k += 2 }
                    var onlyBlanks = true
                    while k < lineEnd {
                        if base[k] != UInt8(ascii: " ") && base[k] != UInt8(ascii: "\t") { onlyBlanks = false; break }; k += 1
                    }
                    if onlyBlanks {
                        if let s = partStart {
                            // The part ends before the line break that precedes this boundary line.
                            var e = pos
                            if e > s, base[e - 1] == UInt8(ascii: "\n") { e -= 1; if e > s, base[e - 1] == UInt8(ascii: "\r") { e -= 1 } }
                            parts.append(s..<max(s, e))
                        }
                        if closing { return parts }
                        partStart = next
                    }
                }
                pos = next
            }
            if let s = partStart { parts.append(s..<end) }  // no close boundary: truncated
            return partStart == nil ? nil : parts
        }
    }
}
