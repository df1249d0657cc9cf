#if canImport(Glibc)
    import Glibc
#endif
import MailMessage
import MoCore

/// One message as `notmuch show` and `notmuch reply` print it (notmuch-show.c, mime-node.c): what the
/// index knows (id, files, date, tags, whether the query matched it) and, read from its file, the MIME
/// tree that `format_part_sprinter` and `format_part_text` walk.
///
/// Part numbers are notmuch's: depth first, 0 for the message itself, 1 for its top part. An embedded
/// `message/rfc822` part k is followed by its message's top part k+1 (mo's tree holds that message as
/// the part's one child, which is both the message and its top part, as in notmuch's nodes).
public struct ShownMessage {
    public var id: String
    public var matched: Bool
    /// Absolute paths, the index's order.
    public var files: [String]
    public var date: Int64
    public var tags: [String]
    /// The indexed From (decoded), for the text format's summary line.
    public var from: String
    /// `--duplicate=N` (1-based): the file shown; 0 for the first.
    public var duplicate = 0
    /// It carries a tag of `search.exclude_tags`.
    public var excluded = false

    public init(id: String, matched: Bool, files: [String], date: Int64, tags: [String], from: String) {
        self.id = id
        self.matched = matched
        self.files = files
        self.date = date
        self.tags = tags
        self.from = from
    }

    /// The file shown: the `duplicate`th, else the first.
    public var file: String? { duplicate > 0 ? (duplicate <= files.count ? files[duplicate - 1] : nil) : files.first }

    /// The file's bytes and MIME tree; a failure names the file as notmuch does.
    public func open() -> Result<Body, OpenFailure> {
        guard let path = file else { return .failure(OpenFailure(message: "Error: Cannot get message filename.\n")) }
        switch readMessageFile(path) {
        case .success(let bytes): return .success(Body(bytes: bytes, root: MIMEParser.parse(bytes)))
        case .failure(let e):
            return .failure(OpenFailure(message: "Error opening \(path): \(errnoDescription(e.code))\n"))
        }
    }

    public struct OpenFailure: Error { public let message: String }

    /// A message's bytes and MIME tree, with notmuch's part numbers.
    public struct Body {
        public let bytes: [UInt8]
        public let root: MIMEPart
        /// With `--verify`: each `multipart/signed` part's signatures (`SignatureCheck`), by the part's
        /// first byte.
        public var signatures: [Int: [SignatureStatus]] = [:]

        public init(bytes: [UInt8], root: MIMEPart) {
            self.bytes = bytes
            self.root = root
        }

        /// Checks the message's PGP/MIME signatures (one gpg run each; the first 16, so a hostile message
        /// cannot start gpg without end).
        public mutating func verifySignatures() {
            var found: [Int: [SignatureStatus]] = [:]
            func walk(_ p: MIMEPart) {
                guard found.count < 16 else { return }
                if let s = SignatureCheck.verify(p, in: bytes) { found[p.range.lowerBound] = s }
                p.children.forEach(walk)
            }
            walk(root)
            signatures = found
        }

        /// The part numbered `n` (1 and up), or nil past the last.
        public func part(_ n: Int) -> MIMEPart? {
            var k = 0
            func walk(_ p: MIMEPart) -> MIMEPart? {
                k += 1
                if k == n { return p }
                for c in p.children { if let hit = walk(c) { return hit } }
                return nil
            }
            return n >= 1 ? walk(root) : nil
        }

        /// A part's bytes as notmuch's raw format prints them: a leaf's body with its transfer encoding
        /// undone; an embedded message whole (its header block and body); a multipart with its own header
        /// fields and body; the top multipart of a message (the root, or an embedded message's) with only
        /// its `Content-*` fields, as GMime keeps the others on the message.
        public func raw(_ p: MIMEPart) -> [UInt8] {
            if p.children.isEmpty { return p.decodedBody(in: bytes) }
            let inner = p.contentType.type == "message" ? p.children[0] : p
            guard inner.range == p.range, p.range.lowerBound == root.range.lowerBound || isEmbeddedTop(p) else {
                let start = min(inner.headers.fields.first?.range.lowerBound ?? inner.bodyRange.lowerBound, inner.bodyRange.lowerBound)
                return Array(bytes[start..<inner.bodyRange.upperBound])
            }
            var out: [UInt8] = []
            var lineEnd: [UInt8] = [UInt8(ascii: "\n")]
            for f in p.headers.fields where f.name.lowercased().hasPrefix("content-") {
                out += bytes[f.range]
                if out.last != UInt8(ascii: "\n") {
                    out += lineEnd
                } else if out.dropLast().last == UInt8(ascii: "\r") {
                    lineEnd = [13, 10]
                }
            }
            return out + lineEnd + bytes[p.bodyRange]
        }

        /// `p` is the top part of an embedded message (the child of a `message/rfc822` part).
        func isEmbeddedTop(_ p: MIMEPart) -> Bool {
            func walk(_ x: MIMEPart) -> Bool {
                if x.contentType.type == "message", x.children.first?.range == p.range { return true }
                return x.children.contains(where: walk)
            }
            return walk(root)
        }

        /// A text part as notmuch shows it: transfer decoding, the charset to UTF-8, CRLF to LF.
        public func text(_ p: MIMEPart) -> String {
            let s = p.text(in: bytes)
            return s.contains("\r\n") ? s.replacing("\r\n", with: "\n") : s
        }
    }
}

/// Message headers as notmuch prints them (`format_headers_sprinter`, the text format's header block):
/// the subject and From decoded as written, the address lists re-formatted as GMime formats them, the
/// date in the zone it was written in.
public enum ShownHeaders {
    /// `Subject`, `From`, `To`?, `Cc`?, `Bcc`?, `Reply-To`?, `Date`, in notmuch's order.
    public static func fields(_ h: HeaderBlock) -> [(String, String)] {
        var out = [("Subject", h["Subject"] ?? ""), ("From", h["From"] ?? "")]
        for name in ["To", "Cc", "Bcc", "Reply-To"] {
            if let list = addressList(h, name) { out.append((name, list)) }
        }
        out.append(("Date", date(h)))
        return out
    }

    /// GMime's `internet_address_list_to_string`: `Name <a@b>` (the name quoted when it holds a
    /// special), `a@b` without a name, `, ` between; nil when the header is absent or empty.
    public static func addressList(_ h: HeaderBlock, _ name: String) -> String? {
        let list = h.fields(named: name).flatMap { AddressParser.parse($0.rawValue) }
        guard !list.isEmpty else { return nil }
        return list.map(format).joined(separator: ", ")
    }

    /// The first mailbox of From (`_extract_email_address`), for the mbox format's `From ` line.
    public static func firstAddress(_ h: HeaderBlock) -> String? {
        h.first("From").flatMap { AddressParser.parse($0.rawValue).first?.address }
    }

    public static func format(_ a: MailAddress) -> String {
        guard let name = a.name, !name.isEmpty else { return a.address }
        return "\(quotedName(name)) <\(a.address)>"
    }

    /// A display name in double quotes when it holds a special (`()<>@,;:\".[]`).
    public static func quotedName(_ name: String) -> String {
        let specials = Set("()<>@,;:\\\".[]")
        guard name.contains(where: { specials.contains($0) }) else { return name }
        return "\"" + name.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }

    /// `Tue, 05 Jan 2010 15:43:56 -0000` style (`%a, %d %b %Y %H:%M:%S %z`), in the header's own zone;
    /// the epoch when the header has no date, as notmuch prints it.
    public static func date(_ h: HeaderBlock) -> String {
        guard let value = h.first("Date")?.unfoldedValue, let (seconds, zone) = DateParser.parseWithZone(value) else {
            return "Thu, 01 Jan 1970 00:00:00 +0000"
        }
        var t = time_t(seconds + Int64(zone))
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let sign = zone < 0 ? "-" : "+", z = abs(zone) / 60
        let zoneText = sign + two(Int32(z / 60)) + two(Int32(z % 60))
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) \(zoneText)"
    }
}
