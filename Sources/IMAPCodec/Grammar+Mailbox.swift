// Grammar of mailbox data: LIST/LSUB and STATUS.

extension Cursor {
    // mailbox         = "INBOX" / astring
    mutating func mailbox() throws(ParseFailure) -> MailboxName {
        MailboxName(wire: try astring())
    }

    // mailbox-list    = "(" [mbx-list-flags] ")" SP (DQUOTE QUOTED-CHAR DQUOTE / nil) SP mailbox
    //                   [SP mbox-list-extended]                                           ; RFC 5258
    // mbx-list-flags  = *(mbx-list-oflag SP) mbx-list-sflag *(SP mbx-list-oflag) / mbx-list-oflag *(SP mbx-list-oflag)
    mutating func mailboxList() throws(ParseFailure) -> ListResponse {
        try expect(UInt8(ascii: "("), "\"(\"")
        var attributes: [MailboxAttribute] = []
        try skipSpaces()
        while try peek() != UInt8(ascii: ")") {
            try checkListLength(attributes.count + 1)
            // mbx-list-oflag = "\Noinferiors" / child-mbox-flag / "\Subscribed" / "\Remote" / flag-extension
            let start = pos
            if try peek() == UInt8(ascii: "\\") { pos += 1 }
            _ = try atom()
            attributes.append(MailboxAttribute(string(start..<pos)))
            try skipSpaces()
        }
        pos += 1
        try sp()
        var delimiter: UInt8?
        if try !nilToken() {
            let d = try quoted()
            guard d.count == 1 else { throw unexpected("a one-character hierarchy delimiter") }
            delimiter = d[0]
        }
        try sp()
        let name = try mailbox()
        var items: [ListResponse.ExtendedItem] = []
        try skipSpaces()
        if try peek() == UInt8(ascii: "(") {
            // mbox-list-extended = "(" [mbox-list-extended-item *(SP mbox-list-extended-item)] ")"
            // mbox-list-extended-item = mbox-list-extended-item-tag SP tagged-ext-val
            try enter()
            pos += 1
            try skipSpaces()
            while try peek() != UInt8(ascii: ")") {
                try checkListLength(items.count + 1)
                let tag = try astring()
                try sp()
                let value = try skipValue()
                items.append(.init(name: String(decoding: tag, as: UTF8.self).uppercased(), raw: array(value)))
                try skipSpaces()
            }
            pos += 1
            leave()
        }
        return ListResponse(attributes: attributes, delimiter: delimiter, mailbox: name, extendedItems: items)
    }

    // mailbox-data    =/ "STATUS" SP mailbox SP "(" [status-att-list] ")"
    // status-att-list = status-att-val *(SP status-att-val)
    // status-att-val  = "MESSAGES" SP number / "UIDNEXT" SP nz-number / "UIDVALIDITY" SP nz-number /
    //                   "UNSEEN" SP number / "RECENT" SP number / "HIGHESTMODSEQ" SP mod-sequence-valzer /
    //                   "SIZE" SP number64                                           ; RFC 7162, RFC 8438
    mutating func statusResponse() throws(ParseFailure) -> StatusResponse {
        var status = StatusResponse(mailbox: try mailbox())
        try sp()
        try expect(UInt8(ascii: "("), "\"(\"")
        var count = 0
        try skipSpaces()
        while try peek() != UInt8(ascii: ")") {
            count += 1
            try checkListLength(count)
            let name = try atom()
            try sp()
            switch name.count {
            case 8 where word(name, is: "MESSAGES"): status.messages = try number()
            case 7 where word(name, is: "UIDNEXT"): status.uidNext = try number()
            case 11 where word(name, is: "UIDVALIDITY"): status.uidValidity = try number()
            case 6 where word(name, is: "UNSEEN"): status.unseen = try number()
            case 6 where word(name, is: "RECENT"): status.recent = try number()
            case 13 where word(name, is: "HIGHESTMODSEQ"): status.highestModSeq = try modSequence()
            case 4 where word(name, is: "SIZE"): status.size = try number64()
            default: _ = try skipValue()
            }
            try skipSpaces()
        }
        pos += 1
        return status
    }
}
