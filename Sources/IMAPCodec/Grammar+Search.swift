// Grammar of search results: SEARCH and ESEARCH.

extension Cursor {
    // mailbox-data    =/ "SEARCH" *(SP nz-number) [SP "(" "MODSEQ" SP mod-sequence-value ")"]   ; RFC 7162
    /// The numbers are not capped by `maxListLength` (a SEARCH may legitimately name every message);
    /// `maxLineLength` bounds them.
    mutating func searchResponse() throws(ParseFailure) -> UntaggedResponse {
        var numbers: [UInt32] = []
        var modSeq: ModSequence?
        while true {
            try skipSpaces()
            let b = try peek()
            if b == UInt8(ascii: "\r") || b == UInt8(ascii: "\n") { break }
            if b == UInt8(ascii: "("), modSeq == nil {
                pos += 1
                let w = try atom()
                guard word(w, is: "MODSEQ") else { pos = w.lowerBound; throw unexpected("MODSEQ") }
                try sp()
                modSeq = try modSequence()
                try expect(UInt8(ascii: ")"), "\")\"")
                continue
            }
            numbers.append(try number())
        }
        return .search(numbers, modSeq: modSeq)
    }

    // esearch-response  = "ESEARCH" [search-correlator] [SP "UID"] *(SP search-return-data)     ; RFC 4731
    // search-correlator = SP "(" "TAG" SP tag-string ")"
    // search-return-data = "MIN" SP nz-number / "MAX" SP nz-number / "ALL" SP sequence-set /
    //                      "COUNT" SP number / search-ret-data-ext
    // search-ret-data-ext = search-modifier-name SP search-return-value   ; e.g. "MODSEQ" SP mod-sequence-value
    mutating func esearchResponse() throws(ParseFailure) -> ESearchResponse {
        var r = ESearchResponse()
        try skipSpaces()
        if try peek() == UInt8(ascii: "(") {
            pos += 1
            let w = try atom()
            guard word(w, is: "TAG") else { pos = w.lowerBound; throw unexpected("TAG") }
            try sp()
            r.tag = String(decoding: try string(), as: UTF8.self)
            try expect(UInt8(ascii: ")"), "\")\"")
        }
        var count = 0
        while true {
            try skipSpaces()
            if try atEndOfLine() { return r }
            count += 1
            try checkListLength(count)
            let name = try atom()
            if word(name, is: "UID") { r.uid = true; continue }
            try sp()
            switch name.count {
            case 3 where word(name, is: "MIN"): r.min = try number()
            case 3 where word(name, is: "MAX"): r.max = try number()
            case 3 where word(name, is: "ALL"): r.all = try sequenceSet()
            case 5 where word(name, is: "COUNT"): r.count = try number()
            case 6 where word(name, is: "MODSEQ"): r.modSeq = try modSequence()
            default: _ = try skipValue()
            }
        }
    }
}
