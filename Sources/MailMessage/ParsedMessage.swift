import MoCore

/// An attachment found in a message.
public struct Attachment: Sendable, Equatable {
    /// Decoded file name (Content-Disposition `filename` or Content-Type `name`), if any.
    public var filename: String?
    /// Lower-cased `type/subtype`.
    public var mimeType: String
    /// Decoded size in bytes.
    public var size: Int

    public init(filename: String?, mimeType: String, size: Int) {
        self.filename = filename
        self.mimeType = mimeType
        self.size = size
    }
}

/// Everything the indexer needs from one message file, parsed from its bytes.
///
/// Parsing never throws and never traps: broken input gives empty or partial fields.
public struct ParsedMessage: Sendable {
    /// The top-level header block.
    public var headers: HeaderBlock
    /// The MIME tree (its root carries `headers`).
    public var root: MIMEPart
    /// Decoded Subject ("" when absent).
    public var subject: String
    public var from: [MailAddress]
    public var to: [MailAddress]
    public var cc: [MailAddress]
    public var bcc: [MailAddress]
    public var replyTo: [MailAddress]
    /// Date header as seconds since the epoch; nil when missing or unparseable.
    public var date: Int64?
    /// The Message-ID as notmuch derives it (see ``MessageID``); nil when the header is missing or
    /// empty. Use ``id`` for the id notmuch would file the message under.
    public var messageID: String?
    /// Every id in In-Reply-To, in order (notmuch's parse; the message's own id excluded).
    public var inReplyTo: [String]
    /// Every id in References, in order (the message's own id excluded).
    public var references: [String]
    /// The parent notmuch records (its `replyto` term), following notmuch 0.37
    /// `_notmuch_database_link_message_to_parents`:
    /// 1. In-Reply-To if it is exactly one `<id>` with no blanks ("strict" parse);
    /// 2. else the last id of References;
    /// 3. else the *last* id parsed from In-Reply-To (notmuch's comment says "first", but the code
    ///    returns the last one `parse_references` saw).
    /// Threading itself does not depend on this choice: notmuch links a message to *every* id of
    /// References and In-Reply-To (``threadLinks``).
    public var parentID: String?
    /// The List-Id header's id (`<list.example.org>` → `list.example.org`), else its text.
    public var listID: String?
    /// Text of the body: text/plain parts, text/html converted to text, embedded messages; attachments
    /// excluded. At most ``bodyTextLimit`` bytes. Which alternatives of a multipart/alternative it holds
    /// is the ``BodyText`` the message was parsed with.
    public var bodyText: String
    /// Attachments, in MIME order.
    public var attachments: [Attachment]
    /// Lower-cased MIME types of all parts, depth first (root included).
    public var mimeTypes: [String]
    /// False where notmuch refuses the file as "not email": the first line is neither a header
    /// nor an mbox `From ` line, or From, Subject and To are all empty.
    public var looksLikeMail: Bool
    /// The id notmuch files the message under: ``messageID``, or the synthetic
    /// `notmuch-sha1-<SHA-1 of the file>` when there is none.
    public var id: String

    /// Upper bound of ``bodyText`` in UTF-8 bytes (bounds memory on huge messages).
    public static let bodyTextLimit = 1 << 20

    /// Every id this message links to for threading, as notmuch links them (References then
    /// In-Reply-To, duplicates removed, own id excluded).
    public var threadLinks: [String] {
        var seen = Set<String>()
        return (references + inReplyTo).filter { seen.insert($0).inserted }
    }

    /// notmuch's id for a message without Message-ID: `notmuch-sha1-` + SHA-1 (hex) of the whole file,
    /// mbox `From ` line included. Stable: depends on the bytes only.
    public static func syntheticMessageID(for bytes: [UInt8]) -> String {
        "notmuch-sha1-" + SHA1.hexDigest(bytes)
    }

    /// True when a line after the first starts with `From `. notmuch parses a file that begins with
    /// `From ` as mbox, where such a line starts the next message; a file holding more than one
    /// message is then refused as not email (only single-message mboxes are indexed).
    static func hasLaterFromLine(_ bytes: [UInt8]) -> Bool {
        let pattern = Array("\nFrom ".utf8)
        var i = 0
        let n = bytes.count
        while i + pattern.count <= n {
            if bytes[i] == UInt8(ascii: "\n"), bytes[i + 1] == UInt8(ascii: "F"), bytes[i + 2] == UInt8(ascii: "r"),
                bytes[i + 3] == UInt8(ascii: "o"),
                bytes[i + 4] == UInt8(ascii: "m"), bytes[i + 5] == UInt8(ascii: " ")
            {
                return true
            }
            i += 1
        }
        return false
    }

    /// Which alternatives of a multipart/alternative go into ``bodyText``.
    public enum BodyText: Sendable {
        /// Every alternative, as notmuch 0.37 indexes them (`_index_mime_part` walks every part): a
        /// phrase that only the HTML rendering holds is still found.
        case search
        /// One rendering, for a reader: the plain text if present, else HTML, else the last one.
        case reading
    }

    /// Reads and parses a file; nil when it cannot be read.
    public static func parse(contentsOfFile path: String, bodyText: BodyText = .search) -> ParsedMessage? {
        guard case .success(let bytes) = readMessageFile(path) else { return nil }
        return parse(bytes, bodyText: bodyText)
    }

    /// Parses a message (RFC 5322 + MIME) from its bytes.
    public static func parse(_ bytes: [UInt8], bodyText mode: BodyText = .search) -> ParsedMessage {
        let headers = HeaderBlock.parse(bytes)
        let root = MIMEParser.parseEntity(bytes, 0..<bytes.count, depth: 0, inDigest: false, headers: headers)

        func addresses(_ name: String) -> [MailAddress] {
            headers.fields(named: name).flatMap { AddressParser.parse($0.rawValue) }
        }
        let subject = headers["Subject"] ?? ""
        let from = addresses("From"), to = addresses("To")
        let fromText = headers["From"] ?? "", toText = headers["To"] ?? ""
        let looksLikeMail =
            !headers.startsWithGarbage && !(fromText.isEmpty && subject.isEmpty && toText.isEmpty)
            && !(headers.hadMboxFromLine && hasLaterFromLine(bytes))

        let messageID = MessageID.fromHeader(headers["Message-ID"])
        let id = messageID ?? syntheticMessageID(for: bytes)
        let irtText = headers["In-Reply-To"]
        let inReplyTo = MessageID.parseList(irtText, excluding: id)
        let references = MessageID.parseList(headers["References"], excluding: id)
        var parentID: String? = nil
        if let t = irtText, let strict = MessageID.parseStrict(t) {
            parentID = strict  // notmuch does not exclude the own id on this path
        } else {
            parentID = references.last ?? inReplyTo.last
        }
        var listID: String? = nil
        if let l = headers["List-Id"] {
            listID = MessageID.parse(Array(l.utf8)).id ?? l.trimmingCharacters(whereSpace: true)
        }

        var collector = TextCollector(bytes: bytes, mode: mode)
        collector.collect(root)
        var attachments = [Attachment]()
        var mimeTypes = [String]()
        for p in root.allParts {
            mimeTypes.append(p.contentType.mimeType)
            if p.isAttachment {
                attachments.append(
                    Attachment(
                        filename: p.filename, mimeType: p.contentType.mimeType,
                        size: p.decodedSize(in: bytes)))
            }
        }

        return ParsedMessage(
            headers: headers, root: root, subject: subject, from: from, to: to, cc: addresses("Cc"),
            bcc: addresses("Bcc"), replyTo: addresses("Reply-To"), date: headers["Date"].flatMap(DateParser.parse),
            messageID: messageID, inReplyTo: inReplyTo, references: references, parentID: parentID,
            listID: listID, bodyText: collector.text, attachments: attachments, mimeTypes: mimeTypes,
            looksLikeMail: looksLikeMail, id: id)
    }
}

/// Gathers indexable text from a MIME tree, capped at ``ParsedMessage/bodyTextLimit`` bytes.
struct TextCollector {
    let bytes: [UInt8]
    let mode: ParsedMessage.BodyText
    var text = ""
    var full = false

    init(bytes: [UInt8], mode: ParsedMessage.BodyText) {
        self.bytes = bytes
        self.mode = mode
    }

    mutating func append(_ s: String) {
        guard !full, !s.isEmpty else { return }
        let room = ParsedMessage.bodyTextLimit - text.utf8.count - 1
        guard room > 4 else { full = true; return }
        if !text.isEmpty { text += "\n" }
        if s.utf8.count <= room {
            text += s
        } else {
            // Cut on a scalar boundary (a UTF-8 continuation byte is 10xxxxxx).
            var cut = room
            let u = Array(s.utf8.prefix(room + 1))
            while cut > 0, u[cut] & 0xC0 == 0x80 { cut -= 1 }
            text += String(decoding: u[..<cut], as: UTF8.self)
            full = true
        }
    }

    /// Raw body bytes worth decoding for text: enough for the cap whatever the transfer encoding.
    static let rawTextLimit = ParsedMessage.bodyTextLimit * 4

    mutating func collect(_ part: MIMEPart) {
        if full { return }
        let ct = part.contentType
        if ct.type == "multipart" {
            if ct.subtype == "alternative" && mode == .reading {
                // One rendering: the plain text if present, else HTML, else the last alternative.
                let pick =
                    part.children.first { $0.contentType.mimeType == "text/plain" && !$0.isAttachmentDisposition }
                    ?? part.children.first { $0.contentType.mimeType == "text/html" }
                    ?? part.children.last
                if let pick { collect(pick) }
            } else if ct.subtype == "signed" && mode == .search {
                // notmuch indexes the signed content, not the signature.
                if let content = part.children.first { collect(content) }
            } else if ct.subtype == "encrypted" && mode == .search {
                return  // nor anything encrypted
            } else {
                for c in part.children { collect(c) }
            }
            return
        }
        if ct.type == "message", let inner = part.children.first {
            if let s = inner.headers["Subject"] { append(s) }
            collect(inner)
            return
        }
        // notmuch does not index the content of Content-Disposition: attachment parts.
        guard !part.isAttachmentDisposition else { return }
        // notmuch indexes every other part as text too, whatever its type (a diff sent inline as video/mng
        // is found by its words), up to its first NUL byte: its body is a C string.
        guard ct.type == "text" || mode == .search else { return }
        var limited = part
        if limited.bodyRange.count > Self.rawTextLimit {
            limited.bodyRange = limited.bodyRange.lowerBound..<(limited.bodyRange.lowerBound + Self.rawTextLimit)
        }
        guard ct.type == "text" else {
            append(String(decoding: limited.decodedBody(in: bytes).prefix { $0 != 0 }, as: UTF8.self))
            return
        }
        let s = limited.text(in: bytes)
        append(ct.subtype == "html" ? HTMLText.plainText(s) : s)
    }
}

extension MIMEPart {
    var isAttachmentDisposition: Bool { disposition?.type == "attachment" }
}

/// A message file's bytes: gzipped ones (notmuch's `msg.gz`, `Gzip`) uncompressed, a damaged one as
/// it is (it then reads as no message, and is passed over by name). The one way MoIndex and notmuch's
/// command line read a message file.
public func readMessageFile(_ path: String) -> Result<[UInt8], ErrnoCode> {
    readWholeFile(path).map { bytes in (try? Gzip.uncompressedIfCompressed(bytes)) ?? bytes }
}
