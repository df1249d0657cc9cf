// Grammar of Gmail's IMAP extensions (X-GM-EXT-1), as Google publishes them
// (developers.google.com/workspace/gmail/imap/imap-extensions, "IMAP Extensions"):
//
//   msg-att-static  =/ "X-GM-MSGID" SP mod-sequence-value       ; a message's id across the account (64-bit)
//   msg-att-static  =/ "X-GM-THRID" SP mod-sequence-value       ; its thread's id
//   msg-att-dynamic =/ "X-GM-LABELS" SP "(" [gm-label *(SP gm-label)] ")"
//   gm-label        = astring / "\" atom                        ; \Inbox \Sent \Draft \Important \Starred ...
//
// Labels are mailbox names: user labels come as astrings (quoted when they hold a space, a literal when
// Gmail likes), in modified UTF-7 like the names of LIST; system labels as `\` and an atom. A label is kept
// as its bytes (`\Inbox` with its backslash), for the store to decode.

extension Cursor {
    /// The list of an X-GM-LABELS attribute (see the grammar above). Bounded by `maxListLength` items and
    /// `maxAtomLength` per atom, like every list.
    mutating func gmailLabels() throws(ParseFailure) -> [[UInt8]] {
        try expect(UInt8(ascii: "("), "a label list")
        var labels: [[UInt8]] = []
        try skipSpaces()
        while try peek() != UInt8(ascii: ")") {
            try checkListLength(labels.count + 1)
            if p[pos] == UInt8(ascii: "\\") {
                let start = pos
                pos += 1
                _ = try atom()
                labels.append(array(start..<pos))
            } else {
                labels.append(try astring())
            }
            try skipSpaces()
        }
        pos += 1
        return labels
    }
}
