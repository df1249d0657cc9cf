// Grammar of the NOTIFY extension's response codes (RFC 5465 §8). Its notifications themselves are ordinary
// responses (STATUS, LIST, EXISTS, EXPUNGE, VANISHED, FETCH), parsed by the general grammar.

extension Cursor {
    // unsupported-events-code = "BADEVENT" SP "(" event *(SP event) ")"
    // event           = message-event / mailbox-event / user-event / event-ext
    // message-event   = ( "MessageNew" [SP "(" fetch-att *(SP fetch-att) ")" ] ) / "MessageExpunge" /
    //                   "FlagChange" / "AnnotationChange"
    // event-ext       = atom
    /// The events in the list, as the server spelled them (a MessageNew fetch list, if any, is skipped).
    mutating func badEvents() throws(ParseFailure) -> [String] {
        try expect(UInt8(ascii: "("), "\"(\"")
        var events: [String] = []
        try skipSpaces()
        while try peek() != UInt8(ascii: ")") {
            try checkListLength(events.count + 1)
            events.append(string(try atom()))
            try skipSpaces()
            if try peek() == UInt8(ascii: "(") {
                _ = try skipValue()
                try skipSpaces()
            }
        }
        pos += 1
        return events
    }
}
