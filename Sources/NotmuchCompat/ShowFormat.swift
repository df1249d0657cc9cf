import MailMessage

/// How `notmuch show` prints one message or part (notmuch-show.c): `format_part_sprinter` for JSON and
/// S-expressions, `format_part_text` for text. Only the layout lives here; which messages are shown,
/// and in what tree, is ``NotmuchShow``'s.
///
/// | part                                   | structured: after id, content-type, disposition, id, filename | text                    |
/// |----------------------------------------|----------------------------------------------------------------|-------------------------|
/// | the message (0)                        | id, match, excluded, filename, timestamp, date_relative, tags, duplicate, body, crypto (v4+), headers | `message{`, `header{`, `body{` |
/// | multipart                              | `content`: its parts                                           | `part{` and its parts   |
/// | message/rfc822                         | `content`: one `{headers, body: [top part]}`                   | `part{`, `header{`, `body{` |
/// | text/*, HTML only with `--include-html`| `content`: the text in UTF-8                                   | the text                |
/// | any other leaf                         | `content-charset`?, `content-transfer-encoding`?, `content-length` | `Non-text part: TYPE` |
public struct ShowFormat {
    public var includeHTML = false
    public var body = true
    public var formatVersion = NotmuchFormatVersion.current
    public var now: Int64
    /// `show.extra_headers`: more headers for the `headers` map, each (its first field) as written,
    /// unfolded and decoded, after Date.
    public var extraHeaders: [String] = []

    public init(now: Int64) { self.now = now }

    // MARK: Structured

    /// The message map (part 0). Without a readable file the map still comes, with empty headers.
    public func message(_ m: ShownMessage, _ b: ShownMessage.Body?, to p: inout Sprinter) {
        p.beginMap()
        p.mapKey("id")
        p.string(m.id)
        p.mapKey("match")
        p.boolean(m.matched)
        p.mapKey("excluded")
        p.boolean(m.excluded)
        p.mapKey("filename")
        if formatVersion >= 3 {
            p.beginList()
            for f in m.files { p.string(f) }
            p.end()
        } else {
            p.string(m.files.first ?? "")
        }
        p.mapKey("timestamp")
        p.integer(m.date)
        p.mapKey("date_relative")
        p.string(RelativeDate.describe(m.date, now: now))
        p.mapKey("tags")
        p.beginList()
        for t in m.tags { p.string(t) }
        p.end()
        p.mapKey("duplicate")
        p.integer(Int64(max(m.duplicate, 1)))
        if body, let b {
            p.mapKey("body")
            p.beginList()
            part(b.root, 1, b, to: &p)
            p.end()
        }
        if formatVersion >= 4 {
            p.mapKey("crypto")
            p.beginMap()
            // The message's own envelope (its root part) signed: notmuch's message-level status.
            if let b, let signed = b.signatures[b.root.range.lowerBound] {
                p.mapKey("signed")
                p.beginMap()
                p.mapKey("status")
                signatures(signed, to: &p)
                p.end()
            }
            p.end()
        }
        p.mapKey("headers")
        headers(b?.root.headers ?? HeaderBlock(fields: [], bodyOffset: 0), to: &p)
        p.end()
    }

    /// A `sigstatus` list (notmuch's format_part_sigstatus_sprinter).
    public func signatures(_ list: [SignatureStatus], to p: inout Sprinter) {
        p.beginList()
        for s in list {
            p.beginMap()
            p.mapKey("status")
            p.string(s.status)
            let fields: [(String, String?)] = [("fingerprint", s.fingerprint)]
            for case let (k, v?) in fields {
                p.mapKey(k)
                p.string(v)
            }
            if let c = s.created { p.mapKey("created"); p.integer(c) }
            if let e = s.expires { p.mapKey("expires"); p.integer(e) }
            for case let (k, v?) in [("userid", s.userid), ("email", s.email), ("keyid", s.keyid)] {
                p.mapKey(k)
                p.string(v)
            }
            if !s.errors.isEmpty {
                p.mapKey("errors")
                p.beginMap()
                for e in s.errors { p.mapKey(e); p.boolean(true) }
                p.end()
            }
            p.end()
        }
        p.end()
    }

    public func headers(_ h: HeaderBlock, to p: inout Sprinter) {
        p.beginMap()
        for (k, v) in ShownHeaders.fields(h) {
            p.mapKey(k)
            p.string(v)
        }
        for name in extraHeaders {
            guard let field = h.first(name) else { continue }
            p.mapKey(field.name)
            p.string(field.text)
        }
        p.end()
    }

    /// Part `number` and its descendants; returns the number after the last.
    @discardableResult
    public func part(_ x: MIMEPart, _ number: Int, _ b: ShownMessage.Body, to p: inout Sprinter) -> Int {
        p.beginMap()
        p.mapKey("id")
        p.integer(Int64(number))
        if let s = b.signatures[x.range.lowerBound] {
            p.mapKey("sigstatus")
            signatures(s, to: &p)
        }
        p.mapKey("content-type")
        p.string(Self.mimeType(x))
        if let d = x.disposition?.type, !d.isEmpty {
            p.mapKey("content-disposition")
            p.string(d)
        }
        if let cid = Self.contentID(x) {
            p.mapKey("content-id")
            p.string(cid)
        }
        var next = number + 1
        if isEmbeddedMessage(x) {
            let inner = x.children[0]
            p.mapKey("content")
            p.beginList()
            p.beginMap()
            p.mapKey("headers")
            headers(inner.headers, to: &p)
            p.mapKey("body")
            p.beginList()
            next = part(inner, next, b, to: &p)
            p.end()
            p.end()
            p.end()
        } else if !x.children.isEmpty {
            p.mapKey("content")
            p.beginList()
            for c in x.children { next = part(c, next, b, to: &p) }
            p.end()
        } else {
            if let f = x.filename {
                p.mapKey("filename")
                p.string(f)
            }
            if shownAsText(x) {
                p.mapKey("content")
                p.string(b.text(x))
            } else {
                if let cs = x.contentType.parameters["charset"] {
                    p.mapKey("content-charset")
                    p.string(cs)
                }
                if let cte = x.headers.first("Content-Transfer-Encoding")?.text {
                    p.mapKey("content-transfer-encoding")
                    p.string(cte)
                }
                p.mapKey("content-length")
                p.integer(Int64(x.bodyRange.count))
            }
        }
        p.end()
        return next
    }

    // MARK: Text

    /// The text format of a message at `depth` in its thread.
    public func text(_ m: ShownMessage, _ b: ShownMessage.Body?, depth: Int) -> String {
        var out =
            "\u{0C}message{ id:\(m.id) depth:\(depth) match:\(m.matched ? 1 : 0) excluded:\(m.excluded ? 1 : 0) filename:\(m.files.first ?? "")\n"
        let summary = "\(b?.root.headers["From"] ?? m.from) (\(RelativeDate.describe(m.date, now: now))) (\(m.tags.joined(separator: " ")))"
        out += headerBlock(b?.root.headers ?? HeaderBlock(fields: [], bodyOffset: 0), summary: summary)
        guard body, let b else { return out + "\u{0C}message}\n" }
        out += "\u{0C}body{\n"
        textPart(b.root, 1, b, into: &out)
        return out + "\u{0C}body}\n\u{0C}message}\n"
    }

    func headerBlock(_ h: HeaderBlock, summary: String?) -> String {
        var out = "\u{0C}header{\n"
        if let summary { out += summary + "\n" }
        for (k, v) in ShownHeaders.fields(h) where k != "Bcc" && k != "Reply-To" {
            // C's printf of a NULL Subject or From.
            out += "\(k): \((k == "Subject" || k == "From") && h.first(k) == nil ? "(null)" : v)\n"
        }
        return out + "\u{0C}header}\n"
    }

    @discardableResult
    public func textPart(_ x: MIMEPart, _ number: Int, _ b: ShownMessage.Body, into out: inout String) -> Int {
        let kind = x.disposition?.type.lowercased() == "attachment" ? "attachment" : "part"
        out += "\u{0C}\(kind){ ID: \(number)"
        if x.children.isEmpty, let f = x.filename { out += ", Filename: \(f)" }
        if let cid = Self.contentID(x) { out += ", Content-id: \(cid)" }
        out += ", Content-type: \(Self.mimeType(x))\n"
        var next = number + 1
        if isEmbeddedMessage(x) {
            let inner = x.children[0]
            out += headerBlock(inner.headers, summary: nil)
            if !body { out += "\u{0C}\(kind)}\n"; return next }
            out += "\u{0C}body{\n"
            next = textPart(inner, next, b, into: &out)
            out += "\u{0C}body}\n"
        } else if !x.children.isEmpty {
            for c in x.children { next = textPart(c, next, b, into: &out) }
        } else if shownAsText(x) {
            out += b.text(x)
        } else {
            out += "Non-text part: \(Self.mimeType(x))\n"
        }
        out += "\u{0C}\(kind)}\n"
        return next
    }

    // MARK: Rules

    func isEmbeddedMessage(_ x: MIMEPart) -> Bool { x.contentType.type == "message" && x.children.count == 1 }

    /// Text, and HTML only when asked for.
    func shownAsText(_ x: MIMEPart) -> Bool {
        x.contentType.type == "text" && (includeHTML || x.contentType.subtype != "html")
    }

    /// The type as the header writes it (`Text/Plain` stays so, as GMime keeps it), else mo's reading.
    static func mimeType(_ x: MIMEPart) -> String {
        if let v = x.headers.first("Content-Type")?.text {
            let written = v.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }
            if written.lowercased() == x.contentType.mimeType { return String(written) }
        }
        return x.contentType.mimeType
    }

    /// Content-ID without its angle brackets.
    static func contentID(_ x: MIMEPart) -> String? {
        guard var v = x.headers.first("Content-ID")?.text, !v.isEmpty else { return nil }
        if v.hasPrefix("<") { v.removeFirst() }
        if v.hasSuffix(">") { v.removeLast() }
        return v
    }
}
