import MoCore

/// Why a parse attempt produced no event.
enum ParseFailure: Error {
    /// The unit is not all buffered yet; the attempt is abandoned and nothing is consumed.
    case incomplete
    case failed(IMAPParseError)
}

/// A read position over the parser's buffer during one parse attempt. Grammar functions (in `Grammar+*.swift`)
/// are methods on it; they advance `pos` or throw. On `.incomplete` the caller discards the cursor, so
/// grammar functions never need to undo anything.
///
/// Invariant: every check against a limit happens *before* a "need more bytes" is reported, so a limit is
/// refused as soon as the buffered bytes cross it, whatever the arrival pattern.
struct Cursor {
    let p: UnsafeBufferPointer<UInt8>
    var pos: Int
    let options: ResponseParser.Options
    /// Stream offset of buffer index 0, for error offsets.
    let streamBase: Int
    /// Current list nesting depth.
    var depth = 0
    /// Set when `.incomplete` is thrown inside an inline literal: the buffer must hold this many bytes first.
    var needUntil = 0

    init(_ p: UnsafeBufferPointer<UInt8>, at pos: Int, options: ResponseParser.Options, streamBase: Int) {
        self.p = p
        self.pos = pos
        self.options = options
        self.streamBase = streamBase
    }

    // MARK: - Primitives

    func fail(_ message: String, _ limit: IMAPParseError.Limit? = nil) -> ParseFailure {
        .failed(IMAPParseError(message, limit: limit, offset: streamBase + pos))
    }

    /// A grammar error naming what was expected and what came instead.
    func unexpected(_ expected: String) -> ParseFailure {
        let found = pos < p.count ? describeByte(p[pos]) : "end of data"
        return fail("malformed server response: expected \(expected), found \(found) at offset \(streamBase + pos)")
    }

    @inline(__always)
    func peek() throws(ParseFailure) -> UInt8 {
        guard pos < p.count else { throw .incomplete }
        return p[pos]
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8, _ what: String) throws(ParseFailure) {
        guard try peek() == byte else { throw unexpected(what) }
        pos += 1
    }

    /// SP; extra spaces are tolerated (several servers double them).
    mutating func sp() throws(ParseFailure) {
        try expect(UInt8(ascii: " "), "a space")
        while try peek() == UInt8(ascii: " ") { pos += 1 }
    }

    /// Skips spaces, if any.
    mutating func skipSpaces() throws(ParseFailure) {
        while try peek() == UInt8(ascii: " ") { pos += 1 }
    }

    /// CRLF; trailing spaces before it and a bare LF are tolerated.
    mutating func crlf() throws(ParseFailure) {
        try skipSpaces()
        if try peek() == UInt8(ascii: "\r") { pos += 1 }
        try expect(UInt8(ascii: "\n"), "the end of the line")
    }

    /// True if the next byte ends the line (CR or LF), not consuming it.
    func atEndOfLine() throws(ParseFailure) -> Bool {
        let b = try peek()
        return b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n")
    }

    mutating func enter() throws(ParseFailure) {
        depth += 1
        guard depth <= options.maxNestingDepth else {
            throw fail("server response nests lists deeper than \(options.maxNestingDepth) levels", .nestingDepth)
        }
    }
    mutating func leave() { depth -= 1 }

    func checkListLength(_ count: Int) throws(ParseFailure) {
        guard count <= options.maxListLength else {
            throw fail("server sent a list of more than \(options.maxListLength) items", .listLength)
        }
    }

    func bytes(_ r: Range<Int>) -> UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: p[r]) }
    func string(_ r: Range<Int>) -> String { String(decoding: bytes(r), as: UTF8.self) }
    func array(_ r: Range<Int>) -> [UInt8] { Array(bytes(r)) }
    func word(_ r: Range<Int>, is upper: StaticString) -> Bool { equalsIgnoringCase(bytes(r), upper) }

    // MARK: - Atoms

    /// Scans 1 or more bytes accepted by `accept`, refusing runs longer than `maxAtomLength`.
    @inline(__always)
    mutating func run(_ what: String, _ accept: (UInt8) -> Bool) throws(ParseFailure) -> Range<Int> {
        let start = pos
        let limit = min(p.count, start + options.maxAtomLength + 1)
        while pos < limit, accept(p[pos]) { pos += 1 }
        if pos - start > options.maxAtomLength {
            throw fail("server sent an atom longer than \(options.maxAtomLength) bytes", .atomLength)
        }
        if pos == p.count { throw .incomplete }  // the run may continue
        guard pos > start else { throw unexpected(what) }
        return start..<pos
    }

    // atom            = 1*ATOM-CHAR
    mutating func atom() throws(ParseFailure) -> Range<Int> { try run("an atom", isAtomChar) }

    // ASTRING-CHAR    = ATOM-CHAR / resp-specials
    mutating func astringAtom() throws(ParseFailure) -> Range<Int> {
        try run("an atom") { isAtomChar($0) || $0 == UInt8(ascii: "]") }
    }

    /// An atom not containing `[` (names of FETCH attributes and response codes, which a `[` may follow).
    mutating func keyword() throws(ParseFailure) -> Range<Int> {
        try run("a keyword") { isAtomChar($0) && $0 != UInt8(ascii: "[") }
    }

    // MARK: - Numbers

    /// 1*DIGIT up to `max`; overflow is refused at the first digit that crosses it.
    mutating func digits(max: UInt64, _ what: String) throws(ParseFailure) -> UInt64 {
        let start = pos
        var v: UInt64 = 0
        while true {
            guard pos < p.count else { throw .incomplete }
            let b = p[pos]
            guard ASCII.isDigit(b) else { break }
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(b - UInt8(ascii: "0")))
            guard !o1, !o2, s <= max else {
                throw fail("server sent a \(what) larger than \(max)", .number)
            }
            v = s
            pos += 1
        }
        guard pos > start else { throw unexpected(what) }
        return v
    }

    // number          = 1*DIGIT  ; unsigned 32-bit integer
    mutating func number() throws(ParseFailure) -> UInt32 {
        UInt32(try digits(max: UInt64(UInt32.max), "number"))
    }

    // nz-number       = digit-nz *DIGIT
    mutating func nzNumber() throws(ParseFailure) -> UInt32 {
        let at = pos
        let n = try number()
        guard n > 0 else { pos = at; throw unexpected("a non-zero number") }
        return n
    }

    // number64        = 1*DIGIT  ; unsigned 63-bit integer (RFC 9051)
    mutating func number64() throws(ParseFailure) -> UInt64 {
        try digits(max: UInt64(Int64.max), "number")
    }

    // mod-sequence-value = 1*DIGIT ; positive unsigned 63-bit integer (RFC 7162; 0 tolerated as valzer)
    mutating func modSequence() throws(ParseFailure) -> ModSequence {
        ModSequence(unchecked: try digits(max: UInt64(Int64.max), "mod-sequence"))
    }

    // MARK: - Strings

    // quoted          = DQUOTE *QUOTED-CHAR DQUOTE
    // QUOTED-CHAR     = <any TEXT-CHAR except quoted-specials> / "\" quoted-specials
    /// The unescaped contents. Any escaped byte is taken literally (lenient); CR and LF are refused.
    mutating func quoted() throws(ParseFailure) -> [UInt8] {
        try expect(UInt8(ascii: "\""), "a quoted string")
        let start = pos
        var escapes = false
        while true {
            guard pos - start <= options.maxAtomLength else {
                throw fail("server sent a quoted string longer than \(options.maxAtomLength) bytes", .atomLength)
            }
            let b = try peek()
            if b == UInt8(ascii: "\"") { break }
            if b == UInt8(ascii: "\\") {
                escapes = true
                pos += 1
                let e = try peek()
                if e == UInt8(ascii: "\r") || e == UInt8(ascii: "\n") { throw unexpected("an escaped character") }
            } else if b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n") {
                throw unexpected("a closing quote")
            }
            pos += 1
        }
        let end = pos
        pos += 1
        if !escapes { return array(start..<end) }
        var out: [UInt8] = []
        out.reserveCapacity(end - start)
        var i = start
        while i < end {
            if p[i] == UInt8(ascii: "\\") { i += 1 }
            out.append(p[i]); i += 1
        }
        return out
    }

    // literal         = "{" number64 ["+"] "}" CRLF *CHAR8
    // literal8        = "~{" number64 "}" CRLF *OCTET       ; RFC 3516
    /// The header of a literal; returns its size and whether it was a binary literal. A size above `limit`
    /// is refused before any of its bytes are awaited.
    mutating func literalHeader(limit: Int, limitKind: IMAPParseError.Limit) throws(ParseFailure) -> (size: Int, binary: Bool) {
        var binary = false
        if try peek() == UInt8(ascii: "~") { binary = true; pos += 1 }
        try expect(UInt8(ascii: "{"), "a literal")
        // The size is checked digit by digit, so an absurd size is refused before its last digit arrives.
        let start = pos
        var n: UInt64 = 0
        while true {
            guard pos < p.count else {
                if n > UInt64(limit) {
                    throw fail("server announced a literal of at least \(n) bytes; the limit is \(limit)", limitKind)
                }
                throw .incomplete
            }
            let b = p[pos]
            guard ASCII.isDigit(b) else { break }
            let (m, o1) = n.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(b - UInt8(ascii: "0")))
            guard !o1, !o2 else {
                throw fail("server announced a literal of more than \(UInt64.max) bytes; the limit is \(limit)", limitKind)
            }
            n = s
            pos += 1
        }
        guard pos > start else { throw unexpected("a literal size") }
        guard n <= UInt64(limit) else {
            throw fail("server announced a literal of \(n) bytes; the limit is \(limit)", limitKind)
        }
        if try peek() == UInt8(ascii: "+") { pos += 1 }  // "{n+}" is client syntax, tolerated
        try expect(UInt8(ascii: "}"), "\"}\"")
        if try peek() == UInt8(ascii: "\r") { pos += 1 }
        try expect(UInt8(ascii: "\n"), "the end of the line after a literal size")
        return (Int(n), binary)
    }

    /// An inline (buffered) literal's header and contents.
    mutating func inlineLiteral() throws(ParseFailure) -> Range<Int> {
        let (size, _) = try literalHeader(limit: options.maxInlineLiteralSize, limitKind: .inlineLiteralSize)
        guard p.count - pos >= size else { needUntil = pos + size; throw .incomplete }
        pos += size
        return pos - size..<pos
    }

    // string          = quoted / literal
    mutating func string() throws(ParseFailure) -> [UInt8] {
        switch try peek() {
        case UInt8(ascii: "\""): return try quoted()
        case UInt8(ascii: "{"), UInt8(ascii: "~"): return array(try inlineLiteral())
        default: throw unexpected("a string")
        }
    }

    // astring         = 1*ASTRING-CHAR / string
    mutating func astring() throws(ParseFailure) -> [UInt8] {
        switch try peek() {
        case UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "~"): return try string()
        default: return array(try astringAtom())
        }
    }

    /// True (and consumed) if the next token is the atom `NIL`.
    mutating func nilToken() throws(ParseFailure) -> Bool {
        let b = try peek()
        guard b == UInt8(ascii: "N") || b == UInt8(ascii: "n") else { return false }
        let save = pos
        let r = try atom()
        if word(r, is: "NIL") { return true }
        pos = save
        return false
    }

    // nstring         = string / nil
    mutating func nstring() throws(ParseFailure) -> [UInt8]? {
        if try nilToken() { return nil }
        return try string()
    }

    /// Text up to (not including) the end of the line, decoded leniently.
    // text            = 1*TEXT-CHAR
    mutating func text() throws(ParseFailure) -> String {
        let start = pos
        while true {
            let b = try peek()
            if b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n") { break }
            pos += 1
        }
        return string(start..<pos)
    }

    // MARK: - Flags

    // flag-list       = "(" [flag *(SP flag)] ")"
    // flag            = "\Answered" / "\Flagged" / "\Deleted" / "\Seen" / "\Draft" / flag-keyword / flag-extension
    // flag-perm       = flag / "\*"
    // flag-keyword    = atom
    // flag-extension  = "\" atom
    // Flag lists (FETCH FLAGS, FLAGS, PERMANENTFLAGS) are parsed by `flagList` in Grammar+Fetch.swift.

    // MARK: - Sets

    // sequence-set / uid-set (see UIDSet.parse)
    mutating func sequenceSet() throws(ParseFailure) -> UIDSet {
        let start = pos
        let limit = min(p.count, start + options.maxLineLength)
        while pos < limit {
            let b = p[pos]
            guard ASCII.isDigit(b) || b == UInt8(ascii: ":") || b == UInt8(ascii: ",") || b == UInt8(ascii: "*") else { break }
            pos += 1
        }
        if pos == p.count { throw .incomplete }
        guard let (set, end) = UIDSet.parse(p, from: start), end == pos else {
            pos = start
            throw unexpected("a sequence set")
        }
        return set
    }

    // MARK: - Generic values

    /// Skips one value of any shape (atom, number, string, literal, NIL, `\flag`, nested list) and returns its
    /// raw extent. Used for data kept raw (ENVELOPE, BODYSTRUCTURE, unknown attributes and items).
    mutating func skipValue() throws(ParseFailure) -> Range<Int> {
        let start = pos
        switch try peek() {
        case UInt8(ascii: "("):
            try enter()
            pos += 1
            var count = 0
            try skipSpaces()
            while try peek() != UInt8(ascii: ")") {
                count += 1
                try checkListLength(count)
                _ = try skipValue()
                try skipSpaces()
            }
            pos += 1
            leave()
        case UInt8(ascii: "\""): _ = try quoted()
        case UInt8(ascii: "{"), UInt8(ascii: "~"): _ = try inlineLiteral()
        case UInt8(ascii: "\\"):
            pos += 1
            if try peek() == UInt8(ascii: "*") { pos += 1 } else { _ = try atom() }
        default:
            _ = try run("a value") { isAtomChar($0) || $0 == UInt8(ascii: "]") }
        }
        return start..<pos
    }

    /// The raw rest of a response up to (not including) its final CRLF, following literals announced at line
    /// ends. Used for responses kept raw (NAMESPACE, unknown ones).
    mutating func restOfResponse() throws(ParseFailure) -> Range<Int> {
        let start = pos
        while true {
            let b = try peek()
            if b != UInt8(ascii: "\r") && b != UInt8(ascii: "\n") { pos += 1; continue }
            // A line ending in "{digits}" (or "{digits+}", "~{digits}") announces a literal.
            var j = pos - 1
            guard j >= start, p[j] == UInt8(ascii: "}") else { return start..<pos }
            j -= 1
            if j >= start, p[j] == UInt8(ascii: "+") { j -= 1 }
            var k = j
            while k >= start, ASCII.isDigit(p[k]) { k -= 1 }
            guard k < j, k >= start, p[k] == UInt8(ascii: "{") else { return start..<pos }
            pos = k > start && p[k - 1] == UInt8(ascii: "~") ? k - 1 : k
            _ = try inlineLiteral()
        }
    }
}

func describeByte(_ b: UInt8) -> String {
    switch b {
    case UInt8(ascii: "\r"): "CR"
    case UInt8(ascii: "\n"): "LF"
    case 0x21...0x7E: "\"\(Character(Unicode.Scalar(b)))\""
    default: "byte 0x" + String(b, radix: 16)
    }
}
