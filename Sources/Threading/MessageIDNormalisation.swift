/// Message-ID extraction from raw header values, byte-for-byte as notmuch 0.37 does it
/// (`lib/message-id.c`: `_notmuch_message_id_parse`, `_notmuch_message_id_parse_strict`;
/// `lib/add-message.cc`: `parse_references`).
///
/// Input values are *unfolded* header values (CR/LF of folding removed). These functions are
/// deliberately small and self-contained: the MailMessage module parses headers too and may
/// replace them later, but whatever replaces them must keep notmuch's quirks listed here, or
/// thread partitions drift away from notmuch's:
/// - text outside `<...>` is skipped, so `In-Reply-To: Your message of ... <id@x>` gives `id@x`,
///   and ids *without* brackets are ignored entirely (`References: a@b c@d` links nothing);
/// - `(comments)` are skipped only before the `<` and right after it;
/// - an id with no closing `>` runs to the end of the value;
/// - a one-character id (`<a>`) is rejected (an off-by-one in notmuch);
/// - spaces and tabs inside an id are "collapsed" with notmuch's memmove bug: of a run of
///   blanks only every other one is removed (`<a  b>` gives `a b`, `<a b>` gives `ab`).
public enum MessageIDNormalisation {
    /// Every id in a References or In-Reply-To value, in header order, duplicates kept.
    ///
    /// notmuch feeds In-Reply-To through the same loop as References, so junk text and
    /// e-mail addresses in angle brackets inside In-Reply-To become (ghost) parents too.
    public static func ids(in headerValue: String) -> [String] {
        let bytes = Array(headerValue.utf8)
        var result: [String] = []
        var position = 0
        while position < bytes.count {
            let (id, next) = parseOne(bytes, from: position)
            if let id { result.append(id) }
            position = next
        }
        return result
    }

    /// The first id in `headerValue`, or nil (notmuch's `_notmuch_message_id_parse` once).
    public static func firstID(in headerValue: String) -> String? {
        let bytes = Array(headerValue.utf8)
        return parseOne(bytes, from: 0).id
    }

    /// The id of a value that is exactly one well-formed `<id>` (surrounding blanks allowed,
    /// none inside), else nil. notmuch prefers such an In-Reply-To as the display parent.
    public static func strictID(in headerValue: String) -> String? {
        let bytes = Array(headerValue.utf8)
        var s = 0
        while s < bytes.count, isSpace(bytes[s]) { s += 1 }
        guard s < bytes.count, bytes[s] == UInt8(ascii: "<") else { return nil }
        s += 1
        var end = s
        while end < bytes.count, bytes[end] != UInt8(ascii: ">") {
            if isSpace(bytes[end]) { return nil }
            end += 1
        }
        guard end < bytes.count else { return nil }
        var last = end + 1
        while last < bytes.count, isSpace(bytes[last]) { last += 1 }
        guard last == bytes.count else { return nil }
        // notmuch returns "" for "<>"; an empty id can name nothing, so nil here.
        guard end > s else { return nil }
        return string(bytes[s..<end])
    }

    /// A message's own id from its Message-ID value: the parsed id, else (not RFC-compliant,
    /// "better than no message-id at all") the whole value, else nil for an empty value; the
    /// caller then supplies a synthetic id such as ``SHA1/notmuchSyntheticMessageID(fileContents:)``.
    public static func messageID(fromHeader headerValue: String) -> String? {
        if headerValue.isEmpty { return nil }
        return firstID(in: headerValue) ?? headerValue
    }

    /// notmuch stores and reports ids longer than 189 bytes as `notmuch-sha1-<sha1 of the id>`
    /// (`NOTMUCH_MESSAGE_ID_MAX`, `_notmuch_message_id_compressed`), for a message's own id and
    /// for every id it references alike, so links still meet. Shorter ids are returned as is.
    public static func notmuchStoredID(_ id: String) -> String {
        id.utf8.count > maximumStoredLength ? "notmuch-sha1-" + SHA1.hexDigest(Array(id.utf8)) : id
    }

    /// `200 - sizeof("thread_id_")` in notmuch.
    public static let maximumStoredLength = 189

    // MARK: - notmuch's scanner

    /// One step of `_notmuch_message_id_parse`: the id found (or nil) and where to go on.
    /// The returned position is always > `start` unless the input is exhausted, so loops end.
    static func parseOne(_ b: [UInt8], from start: Int) -> (id: String?, next: Int) {
        var s = skipSpaceAndComments(b, start)
        // Unstructured text before the '<' is skipped.
        while s < b.count, b[s] != UInt8(ascii: "<") { s += 1 }
        guard s < b.count else { return (nil, b.count) }
        s += 1
        s = skipSpaceAndComments(b, s)
        var end = s
        while end < b.count, b[end] != UInt8(ascii: ">") { end += 1 }
        let next = end < b.count ? end + 1 : end
        // notmuch's inclusive `end` is decremented only past a '>', and it rejects end <= s,
        // which drops one-character ids (kept: it decides which ghosts exist).
        var last = end  // inclusive index of the last id byte in notmuch's terms
        if end > s, end < b.count { last = end - 1 }
        guard last > s else { return (nil, max(next, start + 1)) }
        let upper = min(last + 1, b.count)
        return (collapseBlanks(b[s..<upper]), max(next, start + 1))
    }

    /// notmuch's in-place "collapse whitespace" loop: after deleting a blank it advances past
    /// the byte that slid into its place, so that byte is kept even if it is a blank.
    static func collapseBlanks(_ id: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(id.count)
        var i = id.startIndex
        while i < id.endIndex {
            let c = id[i]
            if c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") {
                if i + 1 < id.endIndex { out.append(id[i + 1]) }
                i += 2
            } else {
                out.append(c)
                i += 1
            }
        }
        return string(out[...])
    }

    /// Skips blanks and nested RFC 822 comments, with `\` escaping any byte.
    static func skipSpaceAndComments(_ b: [UInt8], _ start: Int) -> Int {
        var s = start
        while s < b.count, isSpace(b[s]) || b[s] == UInt8(ascii: "(") {
            while s < b.count, isSpace(b[s]) { s += 1 }
            if s < b.count, b[s] == UInt8(ascii: "(") {
                var nesting = 1
                s += 1
                while s < b.count, nesting > 0 {
                    switch b[s] {
                    case UInt8(ascii: "("): nesting += 1
                    case UInt8(ascii: ")"): nesting -= 1
                    case UInt8(ascii: "\\"): if s + 1 < b.count { s += 1 }
                    default: break
                    }
                    s += 1
                }
            }
        }
        return s
    }

    /// C `isspace` in the C locale.
    static func isSpace(_ c: UInt8) -> Bool {
        c == 0x20 || (c >= 0x09 && c <= 0x0D)
    }

    static func string(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
