/// Message-ID parsing that reproduces notmuch 0.37 byte for byte (lib/message-id.c,
/// lib/add-message.cc), so ids and thread links agree with a notmuch database built from the same mail.
///
/// notmuch reads each header through GMime first: the value is unfolded (ends trimmed, CR/LF removed)
/// and RFC 2047-decoded; callers here pass ``HeaderField/text``, which does the same.
public enum MessageID {
    /// `_notmuch_message_id_parse`: skip blanks and (nested, `\`-escaped) comments, skip any text up to
    /// `<`, skip blanks/comments again, take everything up to `>` (or the end), then delete blanks
    /// inside the id. Returns the id (nil when there is no `<`, or it is empty) and the index after it.
    ///
    /// The deletion copies notmuch's loop exactly: after removing a space or tab it steps past the
    /// byte that moved into its place, so a run of N blanks keeps N/2 of them
    /// (`<a@        .>` → `a@    .`); the oracle's ids show this.
    public static func parse(_ s: [UInt8], from start: Int = 0) -> (id: String?, next: Int) {
        let n = s.count
        var i = start
        if i >= n { return (nil, n) }
        skipSpaceAndComments(s, &i)
        while i < n, s[i] != UInt8(ascii: "<") { i += 1 }
        if i >= n { return (nil, n) }
        i += 1
        skipSpaceAndComments(s, &i)
        var end = i
        while end < n, s[end] != UInt8(ascii: ">") { end += 1 }
        let next = end < n ? end + 1 : end
        // notmuch: `if (end > s && *end == '>') end--; if (end <= s) return NULL;` then copies s...end
        // inclusive (strndup stops at the terminating NUL when there was no '>'). So "<a>" (one byte) is
        // rejected, as in notmuch.
        var e = end
        if e > i && e < n { e -= 1 }
        if e <= i { return (nil, next) }
        let hi = e < n ? e : n - 1
        var id = Array(s[i...hi])
        collapseBlanks(&id)
        return (String(decoding: id, as: UTF8.self), next)
    }

    /// notmuch's in-place blank deletion (see ``parse(_:from:)``).
    static func collapseBlanks(_ id: inout [UInt8]) {
        guard id.contains(UInt8(ascii: " ")) || id.contains(UInt8(ascii: "\t")) else { return }
        var out = [UInt8]()
        out.reserveCapacity(id.count)
        var r = 0
        while r < id.count {
            if id[r] == UInt8(ascii: " ") || id[r] == UInt8(ascii: "\t") {
                // Deleted; the byte that slides into its place is kept unexamined.
                if r + 1 < id.count { out.append(id[r + 1]) }
                r += 2
            } else {
                out.append(id[r])
                r += 1
            }
        }
        id = out
    }

    /// C `isspace` in the C locale.
    @inline(__always) static func isSpace(_ b: UInt8) -> Bool { b == UInt8(ascii: " ") || (b >= 0x09 && b <= 0x0D) }

    static func skipSpaceAndComments(_ s: [UInt8], _ i: inout Int) {
        let n = s.count
        while i < n, isSpace(s[i]) || s[i] == UInt8(ascii: "(") {
            while i < n, isSpace(s[i]) { i += 1 }
            if i < n, s[i] == UInt8(ascii: "(") {
                var nesting = 1
                i += 1
                while i < n, nesting > 0 {
                    switch s[i] {
                    case UInt8(ascii: "("): nesting += 1
                    case UInt8(ascii: ")"): nesting -= 1
                    case UInt8(ascii: "\\"): if i + 1 < n { i += 1 }
                    default: break
                    }
                    i += 1
                }
            }
        }
    }

    /// `_notmuch_message_id_parse_strict`: exactly one `<id>` with no blanks inside, blanks around it
    /// allowed, nothing else. Used only to decide whether In-Reply-To "looks sane".
    public static func parseStrict(_ text: String) -> String? {
        let s = cString(text)
        let n = s.count
        var i = 0
        while i < n, isSpace(s[i]) { i += 1 }
        guard i < n, s[i] == UInt8(ascii: "<") else { return nil }
        i += 1
        var end = i
        while end < n, s[end] != UInt8(ascii: ">") {
            if isSpace(s[end]) { return nil }
            end += 1
        }
        guard end < n else { return nil }
        var k = end + 1
        while k < n, isSpace(s[k]) { k += 1 }
        guard k == n else { return nil }
        return String(decoding: s[i..<end], as: UTF8.self)
    }

    /// The Message-ID notmuch gives a message from its header text: the parsed id, or, when the
    /// header has no `<...>`, the whole (unfolded, decoded) header text. Nil for a missing or empty
    /// header: notmuch then uses ``ParsedMessage/syntheticMessageID(for:)``.
    public static func fromHeader(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        let bytes = cString(text)
        if let id = parse(bytes).id { return id }
        return text
    }

    /// notmuch's `parse_references`: every id in `text`, in order, except those equal to `selfID`
    /// (messages that reference themselves exist). Duplicates are kept here; notmuch puts them in a set.
    public static func parseList(_ text: String?, excluding selfID: String? = nil) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        let bytes = cString(text)
        var out = [String]()
        var i = 0
        while i < bytes.count {
            let (id, next) = parse(bytes, from: i)
            if let id, id != selfID { out.append(id) }
            if next <= i { break }  // cannot happen (parse always advances); guards the loop anyway
            i = next
        }
        return out
    }

    /// The bytes C code would see: up to the first NUL.
    static func cString(_ text: String) -> [UInt8] {
        let u = Array(text.utf8)
        if let z = u.firstIndex(of: 0) { return Array(u[..<z]) }
        return u
    }

    /// notmuch stores ids longer than this many bytes as ``compressed(_:)`` (NOTMUCH_MESSAGE_ID_MAX =
    /// 200 - sizeof("thread_id_")); `notmuch search --output=messages` then prints the compressed form.
    public static let notmuchMaxLength = 189

    /// `_notmuch_message_id_compressed`: `notmuch-sha1-` + SHA-1 of the id *including its NUL terminator*.
    public static func compressed(_ id: String) -> String {
        var bytes = Array(id.utf8)
        bytes.append(0)
        return "notmuch-sha1-" + SHA1.hexDigest(bytes)
    }

    /// The key notmuch files a message under: `id` itself, or ``compressed(_:)`` when too long.
    public static func notmuchKey(_ id: String) -> String {
        id.utf8.count > notmuchMaxLength ? compressed(id) : id
    }

    /// A Message-ID as one token for line-oriented listings (`mo-index --output message-ids`, the notmuch
    /// oracle files): `%` → `%25`, space → `%20`, tab → `%09`, CR → `%0D`, LF → `%0A`.
    public static func listingEscaped(_ id: String) -> String {
        guard
            id.utf8.contains(where: {
                $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r")
                    || $0 == UInt8(ascii: "\n")
            })
        else { return id }
        var out = ""
        for ch in id.unicodeScalars {
            switch ch {
            case "%": out += "%25"
            case " ": out += "%20"
            case "\t": out += "%09"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(ch)
            }
        }
        return out
    }
}
