// Grammar of FETCH contents (RFC 3501 msg-att, RFC 7162 MODSEQ, RFC 3516 BINARY), parsed one attribute per unit
// so that a body literal can be streamed instead of buffered.

/// What one FETCH unit held.
enum FetchStep {
    case attribute(FetchAttribute)
    /// FLAGS, with the raw tokens of the list that were not flags (skipped).
    case flags([Flag], skipped: [[UInt8]])
    /// A body whose literal bytes follow in the stream (`size` of them).
    case bodyLiteral(FetchBodyStart)
    /// A body given inline (quoted string or NIL).
    case bodyInline(FetchBodyStart, [UInt8])
    /// The closing `)` and CRLF.
    case end
}

extension Cursor {
    // msg-att         = "(" (msg-att-dynamic / msg-att-static) *(SP (msg-att-dynamic / msg-att-static)) ")"
    /// The next attribute of a FETCH, or its end. Separating spaces are tolerated anywhere (also none, and
    /// one before the `)`), since servers differ.
    mutating func fetchStep() throws(ParseFailure) -> FetchStep {
        try skipSpaces()
        if try peek() == UInt8(ascii: ")") {
            pos += 1
            try crlf()
            return .end
        }
        let name = try keyword()
        switch name.count {
        // msg-att-static  =/ "UID" SP uniqueid
        case 3 where word(name, is: "UID"):
            try sp(); return .attribute(.uid(try number()))
        // msg-att-dynamic = "FLAGS" SP "(" [flag-fetch *(SP flag-fetch)] ")"
        case 5 where word(name, is: "FLAGS"):
            try sp()
            let (flags, skipped) = try flagList()
            return .flags(flags, skipped: skipped)
        // msg-att-static  =/ "INTERNALDATE" SP date-time
        case 12 where word(name, is: "INTERNALDATE"):
            try sp()
            let at = pos
            let text = try quoted()
            guard let date = InternalDate(text) else { pos = at; throw unexpected("a date-time") }
            return .attribute(.internalDate(date))
        // msg-att-static  =/ "RFC822.SIZE" SP number64
        case 11 where word(name, is: "RFC822.SIZE"):
            try sp(); return .attribute(.rfc822Size(try number64()))
        // fetch-mod-resp  = "MODSEQ" SP "(" permsg-modsequence ")"        ; RFC 7162
        case 6 where word(name, is: "MODSEQ"):
            try sp()
            try expect(UInt8(ascii: "("), "\"(\"")
            try skipSpaces()
            let m = try modSequence()
            try skipSpaces()
            try expect(UInt8(ascii: ")"), "\")\"")
            return .attribute(.modSeq(m))
        // msg-att-static  =/ "BODY" section ["<" number ">"] SP nstring
        // msg-att-static  =/ "BODY" SP body                               ; BODYSTRUCTURE without extensions
        case 4 where word(name, is: "BODY"):
            if try peek() == UInt8(ascii: "[") { return try bodySection(.body) }
            try sp()
            return .attribute(.other(name: "BODY", raw: array(try skipValue())))
        // msg-att-static  =/ "BINARY" section-binary ["<" number ">"] SP (nstring / literal8)     ; RFC 3516
        case 6 where word(name, is: "BINARY"):
            guard try peek() == UInt8(ascii: "[") else { throw unexpected("\"[\" after BINARY") }
            return try bodySection(.binary)
        // Gmail (Grammar+Gmail.swift): X-GM-MSGID, X-GM-THRID, X-GM-LABELS
        case 10 where word(name, is: "X-GM-MSGID"):
            try sp(); return .attribute(.gmailMessageID(try digits(max: UInt64.max, "X-GM-MSGID")))
        case 10 where word(name, is: "X-GM-THRID"):
            try sp(); return .attribute(.gmailThreadID(try digits(max: UInt64.max, "X-GM-THRID")))
        case 11 where word(name, is: "X-GM-LABELS"):
            try sp(); return .attribute(.gmailLabels(try gmailLabels()))
        // msg-att-static  =/ "RFC822" SP nstring / "RFC822.HEADER" SP nstring / "RFC822.TEXT" SP nstring
        case 6 where word(name, is: "RFC822"): return try bodyValue(.rfc822, section: "", origin: nil)
        case 13 where word(name, is: "RFC822.HEADER"): return try bodyValue(.rfc822Header, section: "", origin: nil)
        case 11 where word(name, is: "RFC822.TEXT"): return try bodyValue(.rfc822Text, section: "", origin: nil)
        default:
            // ENVELOPE, BODYSTRUCTURE, BINARY.SIZE[..], PREVIEW, SAVEDATE, EMAILID...: kept raw.
            var full = string(name).uppercased()
            if try peek() == UInt8(ascii: "[") {
                let s = pos
                _ = try sectionText()
                full += string(s..<pos)
            }
            try sp()
            return .attribute(.other(name: full, raw: array(try skipValue())))
        }
    }

    // msg-att-dynamic = "FLAGS" SP "(" [flag-fetch *(SP flag-fetch)] ")"
    // flag-fetch      = flag / "\Recent"
    // flag-list       = "(" [flag *(SP flag)] ")"                      ; FLAGS and PERMANENTFLAGS (flag-perm)
    /// A flag list, lenient where that cannot hurt: a token that is not a flag (a lone `\`, `\Seen\`, a `]`)
    /// is skipped and returned raw, so one bad flag neither fails every run nor hides the good ones. The
    /// list's shape stays strict: tokens end at SP or `)`, and a `(`, quote, literal or line end where a flag
    /// should start is an error, since the end of the list could no longer be found reliably.
    mutating func flagList() throws(ParseFailure) -> (flags: [Flag], skipped: [[UInt8]]) {
        try expect(UInt8(ascii: "("), "a flag list")
        var flags: [Flag] = [], skipped: [[UInt8]] = []
        try skipSpaces()
        while try peek() != UInt8(ascii: ")") {
            try checkListLength(flags.count + skipped.count + 1)
            switch p[pos] {
            case UInt8(ascii: "("), UInt8(ascii: "\""), UInt8(ascii: "{"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                throw unexpected("a flag")
            default: break
            }
            let start = pos
            while true {
                let b = try peek()
                if b == UInt8(ascii: " ") || b == UInt8(ascii: ")") || b == UInt8(ascii: "(") || b == UInt8(ascii: "\r")
                    || b == UInt8(ascii: "\n")
                {
                    break
                }
                pos += 1
                guard pos - start <= options.maxAtomLength else {
                    throw fail("server sent an atom longer than \(options.maxAtomLength) bytes", .atomLength)
                }
            }
            if let flag = Self.flag(bytes(start..<pos)) { flags.append(flag) } else { skipped.append(array(start..<pos)) }
            try skipSpaces()
        }
        pos += 1
        return (flags, skipped)
    }

    /// `token` as a flag (`\*`, or an optional backslash and an atom), or nil.
    static func flag(_ token: UnsafeBufferPointer<UInt8>) -> Flag? {
        if token.count == 2 && token[0] == UInt8(ascii: "\\") && token[1] == UInt8(ascii: "*") { return .wildcard }
        let backslash = token.first == UInt8(ascii: "\\")
        let name = UnsafeBufferPointer(rebasing: token[(backslash ? 1 : 0)...])
        guard !name.isEmpty, name.allSatisfy(isAtomChar) else { return nil }
        return Flag.make(backslash: backslash, name: name)
    }

    // section         = "[" [section-spec] "]"
    // section-spec    = section-msgtext / (section-part ["." section-text])
    // section-binary  = "[" [section-part] "]"
    // header-list     = "(" header-fld-name *(SP header-fld-name) ")"
    /// Consumes `[...]` and returns the text between the brackets. Header lists may hold quoted strings or
    /// literals, so a `]` inside them does not end the section.
    mutating func sectionText() throws(ParseFailure) -> Range<Int> {
        try expect(UInt8(ascii: "["), "\"[\"")
        let start = pos
        while true {
            switch try peek() {
            case UInt8(ascii: "]"):
                pos += 1
                return start..<pos - 1
            case UInt8(ascii: "("): _ = try skipValue()
            case UInt8(ascii: "\""): _ = try quoted()
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"): throw unexpected("\"]\"")
            default:
                pos += 1
                guard pos - start <= options.maxAtomLength else {
                    throw fail("server sent a section longer than \(options.maxAtomLength) bytes", .atomLength)
                }
            }
        }
    }

    mutating func bodySection(_ kind: FetchBodyStart.Kind) throws(ParseFailure) -> FetchStep {
        let section = string(try sectionText())
        var origin: UInt32?
        if try peek() == UInt8(ascii: "<") {
            pos += 1
            origin = try number()
            try expect(UInt8(ascii: ">"), "\">\"")
        }
        return try bodyValue(kind, section: section, origin: origin)
    }

    /// SP (nstring / literal8) after a body attribute's name. A literal's bytes are left in the stream.
    mutating func bodyValue(_ kind: FetchBodyStart.Kind, section: String, origin: UInt32?) throws(ParseFailure) -> FetchStep {
        try sp()
        switch try peek() {
        case UInt8(ascii: "{"), UInt8(ascii: "~"):
            let (size, binary) = try literalHeader(limit: options.maxLiteralSize, limitKind: .literalSize)
            return .bodyLiteral(
                FetchBodyStart(
                    kind: kind, section: section, origin: origin, size: size,
                    isBinaryLiteral: binary))
        case UInt8(ascii: "\""):
            let bytes = try quoted()
            return .bodyInline(FetchBodyStart(kind: kind, section: section, origin: origin, size: bytes.count), bytes)
        default:
            guard try nilToken() else { throw unexpected("a string, a literal or NIL") }
            return .bodyInline(FetchBodyStart(kind: kind, section: section, origin: origin, size: 0, isNil: true), [])
        }
    }
}
