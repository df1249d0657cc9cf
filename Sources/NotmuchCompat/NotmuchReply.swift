import MailMessage

/// `notmuch reply` (notmuch-reply.c): the headers of a reply to one message, and the message quoted.
///
/// Recipients (`add_recipients_from_message`), header by header in this order, the user's own
/// addresses (primary and other, compared without case) never added but the first one met kept as
/// the From address:
///
/// | original header                                  | goes to |
/// |--------------------------------------------------|---------|
/// | Reply-To, unless it is one address already in To or Cc (a list's munging); else From | To |
/// | To                                               | To      |
/// | Cc                                               | Cc      |
/// | Bcc                                              | Bcc     |
///
/// `--reply-to=sender` stops adding after the first header that added someone (it still looks on
/// for the user's address). Nobody added but the user found: the reply goes to the user. The From
/// address, when no header named the user: Envelope-To, X-Original-To, Delivered-To holding one of the
/// user's addresses; a Received `for <address>`; a Received `by host` whose domain is in one of them;
/// else the primary address.
public struct NotmuchReply {
    public struct User: Sendable {
        public var name: String
        public var primary: String
        public var other: [String]
        public init(name: String, primary: String, other: [String]) {
            self.name = name
            self.primary = primary
            self.other = other
        }
        var all: [String] { [primary] + other }
    }

    public enum Format: String, CaseIterable, Sendable { case `default`, json, sexp, headersOnly = "headers-only" }

    public var user: User
    public var replyAll = true

    public init(user: User) { self.user = user }

    /// The reply's headers, in the order notmuch writes them.
    public struct Headers {
        public var subject: String?
        public var from: String = ""
        public var to: [MailAddress] = []
        public var cc: [MailAddress] = []
        public var bcc: [MailAddress] = []
        public var inReplyTo: String
        public var references: String
    }

    public func headers(_ m: ShownMessage, _ h: HeaderBlock, limited: Bool) -> Headers {
        let inReplyTo = "<\(m.id)>"
        let original = h["References"] ?? ""
        var r = Headers(inReplyTo: inReplyTo, references: original.isEmpty ? inReplyTo : "\(original) \(inReplyTo)")
        var fromAddress = recipients(h, into: &r)
        if limited { return r }
        if fromAddress == nil { fromAddress = deliveredTo(h) }
        if fromAddress == nil { fromAddress = receivedFor(h) }
        r.from = "\(user.name) <\(fromAddress ?? user.primary)>"
        if let s = h["Subject"] {
            r.subject = s.utf8.count >= 3 && s.prefix(3).lowercased() == "re:" ? s : "Re: \(s)"
        }
        return r
    }

    func isUsers(_ address: String) -> Bool { user.all.contains { $0.lowercased() == address.lowercased() } }

    /// Fills To, Cc and Bcc; the user's first address met, if any.
    func recipients(_ h: HeaderBlock, into r: inout Headers) -> String? {
        func list(_ name: String) -> [MailAddress] { h.fields(named: name).flatMap { AddressParser.parse($0.rawValue) } }
        let replyTo = list("Reply-To")
        let redundant = replyTo.count == 1 && (list("To") + list("Cc")).contains { $0.address == replyTo[0].address }
        let sender = !replyTo.isEmpty && !redundant ? replyTo : list("From")
        let sources: [([MailAddress], WritableKeyPath<Headers, [MailAddress]>)] = [
            (sender, \.to), (list("To"), \.to), (list("Cc"), \.cc), (list("Bcc"), \.bcc)
        ]
        var from: String?
        var added = 0, adding = true
        for (addresses, field) in sources {
            for a in addresses {
                if isUsers(a.address) {
                    if from == nil { from = a.address }
                } else if adding {
                    r[keyPath: field].append(a)
                    added += 1
                }
            }
            if !replyAll && added > 0 {
                adding = false
                if from != nil { break }
            }
        }
        if added == 0, let from { r.to.append(MailAddress(name: nil, address: from)) }
        return from
    }

    /// One of the user's addresses inside Envelope-To, X-Original-To or Delivered-To (searched in that order).
    func deliveredTo(_ h: HeaderBlock) -> String? {
        for name in ["Envelope-to", "X-Original-To", "Delivered-To"] {
            let value = h.fields(named: name).map(\.text).joined(separator: " ").lowercased()
            if let hit = user.all.first(where: { !value.isEmpty && value.contains($0.lowercased()) }) { return hit }
        }
        return nil
    }

    /// The Received headers (newest first): a user's address after ` for `, else a `by` host whose last
    /// two labels are inside one of the user's addresses.
    func receivedFor(_ h: HeaderBlock) -> String? {
        let received = h.fields(named: "Received").map(\.text).joined(separator: " ")
        guard !received.isEmpty else { return nil }
        let text = String(received.map { $0 == "\t" || $0 == "\n" ? " " : $0 })
        if let r = text.range(of: " for ") {
            let rest = text[r.lowerBound...].lowercased()
            if let hit = user.all.first(where: { rest.contains($0.lowercased()) }) { return hit }
        }
        var rest = Substring(text)
        while let r = rest.range(of: " by ") {
            rest = rest[r.upperBound...]
            guard let host = rest.split(whereSeparator: { $0 == " " || $0 == "\t" }).first else { break }
            let labels = host.split(separator: ".")
            if labels.count >= 2 {
                let domain = labels.suffix(2).joined(separator: ".").lowercased()
                if let hit = user.all.first(where: { $0.lowercased().contains(domain) }) { return hit }
            }
        }
        return nil
    }

    // MARK: Printing

    /// The structured reply: `{reply-headers, original}`.
    public func structured(_ m: ShownMessage, _ b: ShownMessage.Body, layout: ShowFormat, to p: inout Sprinter) {
        let r = headers(m, b.root.headers, limited: false)
        p.beginMap()
        p.mapKey("reply-headers")
        p.beginMap()
        p.mapKey("Subject")
        p.string(r.subject ?? "")
        p.mapKey("From")
        p.string(r.from)
        for (k, v) in [("To", r.to), ("Cc", r.cc), ("Bcc", r.bcc)] where !v.isEmpty {
            p.mapKey(k)
            p.string(v.map(ShownHeaders.format).joined(separator: ", "))
        }
        p.mapKey("In-reply-to")
        p.string(r.inReplyTo)
        p.mapKey("References")
        p.string(r.references)
        p.end()
        p.mapKey("original")
        var full = layout
        full.includeHTML = false
        full.body = true
        full.message(m, b, to: &p)
        p.end()
    }

    /// The default format (headers, a blank line, the quoted message) or only the headers that thread
    /// the reply (`headers-only`).
    public func text(_ m: ShownMessage, _ b: ShownMessage.Body, headersOnly: Bool) -> String {
        let r = headers(m, b.root.headers, limited: headersOnly)
        func addresses(_ k: String, _ v: [MailAddress]) -> String { v.isEmpty ? "" : Self.addressHeader(k, v) }
        let threading =
            "In-Reply-To: \(r.inReplyTo)\n"
            + Self.folded("References", r.references.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init))
        var out: String
        if headersOnly {
            out = threading + addresses("To", r.to) + addresses("Cc", r.cc) + addresses("Bcc", r.bcc)
        } else {
            out =
                Self.folded("From", r.from.split(separator: " ").map(String.init))
                + (r.subject.map {
                    // Unstructured: non-ASCII words encoded, folded lines going on with a blank, as GMime writes it.
                    Self.folded(
                        "Subject", EncodedWords.encodeText($0).split(separator: " ", omittingEmptySubsequences: false).map(String.init),
                        continuation: " ")
                } ?? "")
                + addresses("To", r.to) + addresses("Cc", r.cc) + addresses("Bcc", r.bcc) + threading
        }
        out += "\n"
        if headersOnly { return out }
        out += "On \(b.root.headers["Date"] ?? ""), \(b.root.headers["From"] ?? "") wrote:\n"
        quote(b.root, b, into: &out)
        return out
    }

    /// A header line as GMime writes it: words joined by a blank, a new line (`\n` and `continuation`, a
    /// tab for a structured header, a blank for an unstructured one) before a word that would take the
    /// line to 78 columns or more.
    static func folded(_ name: String, _ words: [String], continuation: String = "\t") -> String {
        var out = name + ":"
        var column = out.utf8.count
        for (i, w) in words.enumerated() {
            if i > 0 && column + 1 + w.utf8.count >= 78 {
                out += "\n" + continuation + w
                column = 1 + w.utf8.count
            } else {
                out += " " + w
                column += 1 + w.utf8.count
            }
        }
        return out + "\n"
    }

    /// An address header as GMime writes it (`_internet_address_list_to_string` folding): a name that
    /// does not fit starts a new line, `<address>` goes to the next line when the line would reach 78
    /// columns, a bare address that does not fit starts one; names with other than ASCII as encoded-words.
    static func addressHeader(_ header: String, _ list: [MailAddress]) -> String {
        var out = header + ": "
        var column = out.utf8.count
        func wrap() {
            if out.hasSuffix(" ") { out.removeLast() }
            out += "\n\t"
            column = 1
        }
        for (i, a) in list.enumerated() {
            let address = a.address.utf8.count
            if let name = a.name, !name.isEmpty {
                let shown =
                    name.unicodeScalars.contains { $0.value > 0x7E } ? EncodedWords.encodePhrase(name) : ShownHeaders.quotedName(name)
                if column + shown.utf8.count > 78 && column > 1 { wrap() }
                out += shown
                column += shown.utf8.count
                if column + address + 3 >= 78 {
                    out += "\n\t<"
                    column = 2
                } else {
                    out += " <"
                    column += 2
                }
                out += a.address + ">"
                column += address + 1
            } else {
                if column + address > 78 && column > 1 { wrap() }
                out += a.address
                column += address
            }
            if i < list.count - 1 {
                out += ", "
                column += 2
            }
        }
        return out + "\n"
    }

    /// `format_part_reply`: text quoted by `> `, embedded messages' headers quoted, PGP and S/MIME parts
    /// left out, attachments and other parts named.
    func quote(_ x: MIMEPart, _ b: ShownMessage.Body, into out: inout String) {
        let type = x.contentType
        if type.type == "message" && x.children.count == 1 {
            let h = x.children[0].headers
            out += "> From: \(h["From"] ?? "")\n"
            if let to = ShownHeaders.addressList(h, "To") { out += "> To: \(to)\n" }
            if let cc = ShownHeaders.addressList(h, "Cc") { out += "> Cc: \(cc)\n" }
            out += "> Subject: \(h["Subject"] ?? "")\n> Date: \(ShownHeaders.date(h))\n>\n"
        } else if x.children.isEmpty {
            if type.type == "application" && ["pgp-encrypted", "pgp-signature", "pkcs7-mime"].contains(type.subtype) {
            } else if type.type == "text" && type.subtype != "html" {
                out += Self.quoted(b.text(x))
            } else if x.disposition?.type.lowercased() == "attachment" {
                out += "Attachment: \(x.filename ?? "(null)") (\(ShowFormat.mimeType(x)))\n"
            } else {
                out += "Non-text part: \(ShowFormat.mimeType(x))\n"
            }
        }
        for c in x.children { quote(c, b, into: &out) }
    }

    /// GMime's reply filter: `> ` before each line, `>` alone before an empty one.
    static func quoted(_ text: String) -> String {
        var out = ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let endsWithNewline = text.hasSuffix("\n")
        if endsWithNewline { lines.removeLast() }
        for (i, l) in lines.enumerated() {
            out += (l.isEmpty ? ">" : "> ") + l
            if i < lines.count - 1 || endsWithNewline { out += "\n" }
        }
        return out
    }
}
