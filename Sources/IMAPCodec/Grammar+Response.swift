import MoCore

// Grammar of whole responses (RFC 3501 §9 unless noted). One call parses one *unit*: a complete response,
// or (for FETCH) only its `* n FETCH (` opening; FETCH contents are in Grammar+Fetch.swift.

extension Cursor {
    // response        = *(continue-req / response-data) response-done
    /// One response, or the opening of a FETCH (returned as `.fetchStart`).
    mutating func response() throws(ParseFailure) -> ResponseEvent {
        switch try peek() {
        case UInt8(ascii: "+"): return try continueReq()
        case UInt8(ascii: "*"): return try responseData()
        default: return .tagged(try responseTagged())
        }
    }

    // continue-req    = "+" SP (resp-text / base64) CRLF
    /// Kept raw. A missing SP (`+\r\n`, sent by some servers) is tolerated.
    mutating func continueReq() throws(ParseFailure) -> ResponseEvent {
        try expect(UInt8(ascii: "+"), "\"+\"")
        if try peek() == UInt8(ascii: " ") { pos += 1 }
        let start = pos
        while try !atEndOfLine() { pos += 1 }
        let raw = array(start..<pos)
        try crlf()
        return .continuation(raw)
    }

    // response-tagged = tag SP resp-cond-state CRLF
    // tag             = 1*<any ASTRING-CHAR except "+">
    mutating func responseTagged() throws(ParseFailure) -> TaggedResponse {
        let tag = try run("a tag") { (isAtomChar($0) || $0 == UInt8(ascii: "]")) && $0 != UInt8(ascii: "+") }
        try sp()
        let name = try keyword()
        let status: ResponseStatus
        if word(name, is: "OK") {
            status = .ok
        } else if word(name, is: "NO") {
            status = .no
        } else if word(name, is: "BAD") {
            status = .bad
        } else {
            pos = name.lowerBound; throw unexpected("OK, NO or BAD")
        }
        let text = try respText()
        try crlf()
        return TaggedResponse(tag: string(tag), status: status, text: text)
    }

    // resp-text       = ["[" resp-text-code "]" SP] text
    /// Lenient: the SP before the text, and the text itself, may be missing (`* OK [READ-WRITE]`); a `[` that does
    /// not start a well-formed code is taken as text.
    mutating func respText() throws(ParseFailure) -> ResponseText {
        try skipSpaces()
        var code: ResponseCode?
        if try peek() == UInt8(ascii: "[") {
            let save = pos
            do throws(ParseFailure) {
                pos += 1
                code = try respTextCode()
                try expect(UInt8(ascii: "]"), "\"]\"")
            } catch .failed(let e) where e.limit == nil {
                pos = save
                code = nil
            }
            try skipSpaces()
        }
        return ResponseText(code: code, text: try text())
    }

    // resp-text-code  = "ALERT" / "BADCHARSET" [SP "(" charset *(SP charset) ")" ] / capability-data / "PARSE" /
    //                   "PERMANENTFLAGS" SP "(" [flag-perm *(SP flag-perm)] ")" / "READ-ONLY" / "READ-WRITE" /
    //                   "TRYCREATE" / "UIDNEXT" SP nz-number / "UIDVALIDITY" SP nz-number / "UNSEEN" SP nz-number /
    //                   atom [SP 1*<any TEXT-CHAR except "]">]
    // resp-text-code  =/ "HIGHESTMODSEQ" SP mod-sequence-value / "NOMODSEQ" / "MODIFIED" SP sequence-set / "CLOSED"
    //                                                                                              ; RFC 7162
    // resp-code-apnd  = "APPENDUID" SP nz-number SP append-uid                                     ; RFC 4315
    // resp-code-copy  = "COPYUID" SP nz-number SP uid-set SP uid-set
    // resp-text-code  =/ "UIDNOTSTICKY"
    // resp-text-code  =/ "NOTIFICATIONOVERFLOW" / unsupported-events-code                        ; RFC 5465
    /// A known code whose arguments do not parse becomes `.other` (the connection survives a server quirk; the
    /// caller simply does not get that datum). Limit violations are never swallowed this way.
    mutating func respTextCode() throws(ParseFailure) -> ResponseCode {
        let name = try keyword()
        let afterName = pos
        do throws(ParseFailure) {
            if let code = try knownCode(name) {
                guard try peek() == UInt8(ascii: "]") else { throw unexpected("\"]\"") }
                return code
            }
        } catch .failed(let e) where e.limit == nil {
            pos = afterName
        }
        // atom [SP 1*<any TEXT-CHAR except "]">]
        try skipSpaces()
        let start = pos
        while true {
            let b = try peek()
            if b == UInt8(ascii: "]") { break }
            if b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n") { throw unexpected("\"]\"") }
            pos += 1
        }
        return .other(name: string(name).uppercased(), text: string(start..<pos))
    }

    private mutating func knownCode(_ name: Range<Int>) throws(ParseFailure) -> ResponseCode? {
        switch name.count {
        case 5 where word(name, is: "ALERT"): return .alert
        case 5 where word(name, is: "PARSE"): return .parse
        case 6 where word(name, is: "CLOSED"): return .closed
        case 6 where word(name, is: "UNSEEN"): try sp(); return .unseen(try number())
        case 7 where word(name, is: "UIDNEXT"): try sp(); return .uidNext(try number())
        case 7 where word(name, is: "COPYUID"):
            try sp(); let v = try number()
            try sp(); let src = try sequenceSet()
            try sp(); let dst = try sequenceSet()
            return .copyUID(uidValidity: v, source: src, destination: dst)
        case 8 where word(name, is: "NOMODSEQ"): return .noModSeq
        case 8 where word(name, is: "MODIFIED"): try sp(); return .modified(try sequenceSet())
        case 9 where word(name, is: "READ-ONLY"): return .readOnly
        case 9 where word(name, is: "TRYCREATE"): return .tryCreate
        case 9 where word(name, is: "APPENDUID"):
            try sp(); let v = try number()
            try sp(); return .appendUID(uidValidity: v, uids: try sequenceSet())
        case 10 where word(name, is: "READ-WRITE"): return .readWrite
        case 10 where word(name, is: "BADCHARSET"):
            var charsets: [String] = []
            if try peek() == UInt8(ascii: " ") {
                try sp()
                try expect(UInt8(ascii: "("), "\"(\"")
                while try peek() != UInt8(ascii: ")") {
                    try checkListLength(charsets.count + 1)
                    charsets.append(String(decoding: try astring(), as: UTF8.self))
                    try skipSpaces()
                }
                pos += 1
            }
            return .badCharset(charsets)
        case 10 where word(name, is: "CAPABILITY"): return .capability(try capabilities())
        case 11 where word(name, is: "UIDVALIDITY"): try sp(); return .uidValidity(try number())
        case 12 where word(name, is: "UIDNOTSTICKY"): return .uidNotSticky
        case 13 where word(name, is: "HIGHESTMODSEQ"): try sp(); return .highestModSeq(try modSequence())
        case 14 where word(name, is: "PERMANENTFLAGS"): try sp(); return .permanentFlags(try flagList().flags)
        case 8 where word(name, is: "BADEVENT"): try sp(); return .badEvent(try badEvents())
        case 20 where word(name, is: "NOTIFICATIONOVERFLOW"): return .notificationOverflow
        default: return nil
        }
    }

    // capability-data = "CAPABILITY" *(SP capability) SP "IMAP4rev1" *(SP capability)
    // capability      = ("AUTH=" auth-type) / atom
    /// The capabilities after the keyword, up to the end of the line or a `]`. IMAP4rev1 is not required.
    mutating func capabilities() throws(ParseFailure) -> [Capability] {
        var caps: [Capability] = []
        while true {
            try skipSpaces()
            let b = try peek()
            if b == UInt8(ascii: "]") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n") { return caps }
            try checkListLength(caps.count + 1)
            caps.append(Capability(string(try atom())))
        }
    }

    // response-data   = "*" SP (resp-cond-state / resp-cond-bye / mailbox-data / message-data / capability-data /
    //                   enable-data) CRLF
    // message-data    = nz-number SP ("EXPUNGE" / ("FETCH" SP msg-att))
    // mailbox-data    =/ number SP "EXISTS" / number SP "RECENT"
    mutating func responseData() throws(ParseFailure) -> ResponseEvent {
        try expect(UInt8(ascii: "*"), "\"*\"")
        try sp()
        let first = try peek()
        if ASCII.isDigit(first) {
            let n = try number()
            try sp()
            let name = try keyword()
            let result: UntaggedResponse
            if word(name, is: "FETCH") {
                try sp()
                try expect(UInt8(ascii: "("), "\"(\" after FETCH")
                return .fetchStart(sequenceNumber: n)
            } else if word(name, is: "EXISTS") {
                result = .exists(n)
            } else if word(name, is: "RECENT") {
                result = .recent(n)
            } else if word(name, is: "EXPUNGE") {
                result = .expunge(n)
            } else {
                // An unknown numeric response: keep the rest raw.
                try skipSpaces()
                let raw = try restOfResponse()
                result = .other(name: string(name).uppercased(), raw: array(raw))
            }
            try crlf()
            return .untagged(result)
        }
        let name = try keyword()
        let result: UntaggedResponse
        switch name.count {
        case 2 where word(name, is: "OK"): result = .ok(try respText())
        case 2 where word(name, is: "NO"): result = .no(try respText())
        case 3 where word(name, is: "BAD"): result = .bad(try respText())
        case 3 where word(name, is: "BYE"): result = .bye(try respText())
        case 7 where word(name, is: "PREAUTH"): result = .preauth(try respText())
        case 10 where word(name, is: "CAPABILITY"): result = .capability(try capabilities())
        case 7 where word(name, is: "ENABLED"): result = .enabled(try capabilities())
        case 4 where word(name, is: "LIST"): try sp(); result = .list(try mailboxList())
        case 4 where word(name, is: "LSUB"): try sp(); result = .lsub(try mailboxList())
        case 6 where word(name, is: "STATUS"): try sp(); result = .status(try statusResponse())
        // mailbox-data    =/ "FLAGS" SP flag-list
        case 5 where word(name, is: "FLAGS"): try sp(); result = .flags(try flagList().flags)  // a token that is not a flag is dropped
        case 6 where word(name, is: "SEARCH"): result = try searchResponse()
        case 7 where word(name, is: "ESEARCH"): result = .esearch(try esearchResponse())
        case 8 where word(name, is: "VANISHED"): result = try vanished()
        // Namespace-Response = "NAMESPACE" SP Namespace SP Namespace SP Namespace   ; RFC 2342, kept raw
        case 9 where word(name, is: "NAMESPACE"):
            try skipSpaces()
            result = .namespace(raw: array(try restOfResponse()))
        default:
            try skipSpaces()
            result = .other(name: string(name).uppercased(), raw: array(try restOfResponse()))
        }
        try crlf()
        return .untagged(result)
    }

    // expunged-resp   = "VANISHED" [SP "(EARLIER)"] SP known-uids     ; RFC 7162
    mutating func vanished() throws(ParseFailure) -> UntaggedResponse {
        try sp()
        var earlier = false
        if try peek() == UInt8(ascii: "(") {
            pos += 1
            let w = try keyword()
            guard word(w, is: "EARLIER") else { pos = w.lowerBound; throw unexpected("EARLIER") }
            try expect(UInt8(ascii: ")"), "\")\"")
            try sp()
            earlier = true
        }
        return .vanished(earlier: earlier, uids: try sequenceSet())
    }
}
