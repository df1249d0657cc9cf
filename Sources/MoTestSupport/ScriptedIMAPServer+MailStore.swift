import Synchronization

/// The default answers of `ScriptedIMAPServer`: a small, correct IMAP4rev1 server (no extensions) over
/// mailboxes held in memory, enough for mo-sync to run a full sync against it. Scripts replace single
/// answers to make it hostile.
public final class MailStore: Sendable {
    public struct Message: Sendable {
        public var uid: UInt32
        public var flags: String
        public var body: [UInt8]
        public init(uid: UInt32, flags: String = "", body: [UInt8]) { (self.uid, self.flags, self.body) = (uid, flags, body) }
    }

    public struct Mailbox: Sendable {
        /// The name's bytes as the server sends them in LIST (modified UTF-7, or anything a hostile server likes).
        public var name: [UInt8]
        public var uidValidity: UInt32
        public var messages: [Message]
        public var uidNext: UInt32

        public init(_ name: String, uidValidity: UInt32 = 1, messages: [Message] = []) {
            self.init(bytes: Array(name.utf8), uidValidity: uidValidity, messages: messages)
        }

        public init(bytes name: [UInt8], uidValidity: UInt32 = 1, messages: [Message] = []) {
            self.name = name
            self.uidValidity = uidValidity
            self.messages = messages
            uidNext = (messages.map(\.uid).max() ?? 0) + 1
        }
    }

    /// Per connection: the selected mailbox.
    public struct Session: Sendable { var selected: [UInt8]? = nil }

    private let boxes: Mutex<[Mailbox]>

    init(_ mailboxes: [Mailbox]) { boxes = Mutex(mailboxes) }

    public var mailboxes: [Mailbox] { boxes.withLock { $0 } }

    /// Changes the mailboxes between runs (or from a script).
    public func modify(_ change: (inout [Mailbox]) -> Void) { boxes.withLock { change(&$0) } }

    /// A short message with a Message-ID, for seeding.
    public static func message(_ uid: UInt32, subject: String, flags: String = "") -> Message {
        Message(
            uid: uid, flags: flags,
            body: Array(
                ("From: a@example.com\r\nTo: b@example.com\r\nSubject: \(subject)\r\n"
                    + "Message-ID: <\(subject)@scripted.test>\r\n\r\nBody of \(subject).\r\n").utf8))
    }

    /// `name` as an IMAP string: quoted when it can be, else a literal.
    public static func imapString(_ name: [UInt8]) -> [UInt8] {
        if name.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) {
            return [UInt8(ascii: "\"")] + name + [UInt8(ascii: "\"")]
        }
        return Array("{\(name.count)}\r\n".utf8) + name
    }

    func answer(_ r: ScriptedIMAPServer.Request, _ session: inout MailStore.Session) -> [ScriptedIMAPServer.Reply] {
        func done(_ text: String = "done") -> [ScriptedIMAPServer.Reply] { [.text("\(r.tag) OK \(text)\r\n")] }
        switch r.verb {
        case "CAPABILITY": return [.text("* CAPABILITY IMAP4rev1\r\n")] + done()
        case "LOGOUT": return [.text("* BYE logging out\r\n\(r.tag) OK done\r\n"), .close]
        case "LIST":
            var out: [UInt8] = []
            for box in mailboxes {
                out += Array("* LIST () \"/\" ".utf8) + Self.imapString(box.name) + [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
            }
            return [.send(out)] + done()
        case "SELECT", "EXAMINE":
            guard let name = r.firstArgument, let box = mailboxes.first(where: { $0.name == name }) else {
                session.selected = nil
                return [.text("\(r.tag) NO no such mailbox\r\n")]
            }
            session.selected = name
            return [
                .text(
                    "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n* \(box.messages.count) EXISTS\r\n"
                        + "* OK [UIDVALIDITY \(box.uidValidity)] ok\r\n* OK [UIDNEXT \(box.uidNext)] ok\r\n")
            ]
                + done(r.verb == "SELECT" ? "[READ-WRITE] done" : "[READ-ONLY] done")
        case "STATUS":
            guard let name = r.firstArgument, let box = mailboxes.first(where: { $0.name == name }) else {
                return [.text("\(r.tag) NO no such mailbox\r\n")]
            }
            return [
                .send(
                    Array("* STATUS ".utf8) + Self.imapString(name)
                        + Array(" (MESSAGES \(box.messages.count) UIDNEXT \(box.uidNext) UIDVALIDITY \(box.uidValidity))\r\n".utf8))
            ] + done()
        case "CREATE":
            if let name = r.firstArgument, !mailboxes.contains(where: { $0.name == name }) {
                modify { $0.append(Mailbox(bytes: name)) }
            }
            return done()
        case "APPEND":
            let t = ScriptedIMAPServer.tokens(r.arguments)
            guard let name = t.first, let body = t.last, t.count >= 2 else { return [.text("\(r.tag) BAD append\r\n")] }
            let flags = t.count > 2 && t[1].first == UInt8(ascii: "(") ? String(decoding: t[1].dropFirst().dropLast(), as: UTF8.self) : ""
            var result: (UInt32, UInt32)?
            modify { boxes in
                guard let i = boxes.firstIndex(where: { $0.name == name }) else { return }
                let uid = boxes[i].uidNext
                boxes[i].messages.append(Message(uid: uid, flags: flags, body: body))
                boxes[i].uidNext += 1
                result = (boxes[i].uidValidity, uid)
            }
            guard let (validity, uid) = result else { return [.text("\(r.tag) NO [TRYCREATE] no such mailbox\r\n")] }
            return done("[APPENDUID \(validity) \(uid)] done")
        case "UID FETCH":
            guard let name = session.selected, let box = mailboxes.first(where: { $0.name == name }) else {
                return [.text("\(r.tag) BAD nothing selected\r\n")]
            }
            let t = ScriptedIMAPServer.tokens(r.arguments)
            guard t.count >= 2 else { return [.text("\(r.tag) BAD fetch\r\n")] }
            let set = String(decoding: t[0], as: UTF8.self), items = String(decoding: t[1], as: UTF8.self).uppercased()
            var out: [UInt8] = []
            for (i, m) in box.messages.enumerated() where Self.contains(set, m.uid, max: box.messages.last?.uid ?? 0) {
                out += Self.fetchResponse(seq: i + 1, m, items: items)
            }
            return [.send(out)] + done()
        case "UID STORE":
            guard let name = session.selected else { return [.text("\(r.tag) BAD nothing selected\r\n")] }
            let t = ScriptedIMAPServer.tokens(r.arguments)
            if t.count >= 3 {
                let set = String(decoding: t[0], as: UTF8.self), mode = String(decoding: t[1], as: UTF8.self).uppercased()
                let given = String(decoding: t[2].drop { $0 == UInt8(ascii: "(") }.prefix { $0 != UInt8(ascii: ")") }, as: UTF8.self).split(
                    separator: " "
                ).map(
                    String.init)
                modify { boxes in
                    guard let b = boxes.firstIndex(where: { $0.name == name }) else { return }
                    let top = boxes[b].messages.last?.uid ?? 0
                    for i in boxes[b].messages.indices where Self.contains(set, boxes[b].messages[i].uid, max: top) {
                        var flags = Set(boxes[b].messages[i].flags.split(separator: " ").map(String.init))
                        if mode.hasPrefix("+") {
                            flags.formUnion(given)
                        } else if mode.hasPrefix("-") {
                            flags.subtract(given)
                        } else {
                            flags = Set(given)
                        }
                        boxes[b].messages[i].flags = flags.sorted().joined(separator: " ")
                    }
                }
            }
            return done()
        case "EXPUNGE", "UID EXPUNGE":
            guard let name = session.selected else { return [.text("\(r.tag) BAD nothing selected\r\n")] }
            var lines = ""
            modify { boxes in
                guard let b = boxes.firstIndex(where: { $0.name == name }) else { return }
                for i in boxes[b].messages.indices.reversed() where boxes[b].messages[i].flags.contains("\\Deleted") {
                    boxes[b].messages.remove(at: i)
                    lines += "* \(i + 1) EXPUNGE\r\n"
                }
            }
            return [.text(lines)] + done()
        case "CLOSE", "UNSELECT": session.selected = nil; return done()
        case "NOOP", "CHECK", "LOGIN", "AUTHENTICATE", "ENABLE", "SUBSCRIBE": return done()
        default: return [.text("\(r.tag) BAD unknown command\r\n")]
        }
    }

    /// Whether a UID set (`1:*`, `3,5:7`) names `uid`; `*` is `max`.
    static func contains(_ set: String, _ uid: UInt32, max: UInt32) -> Bool {
        set.split(separator: ",").contains { part in
            let ends = part.split(separator: ":").map { $0 == "*" ? max : UInt32($0) ?? 0 }
            guard let a = ends.first else { return false }
            let b = ends.count > 1 ? ends[1] : a
            return (min(a, b)...Swift.max(a, b)).contains(uid)
        }
    }

    /// A FETCH response with the attributes of `items` mo-sync asks for.
    public static func fetchResponse(seq: Int, _ m: Message, items: String) -> [UInt8] {
        var parts = ["UID \(m.uid)"]
        if items.contains("FLAGS") { parts.append("FLAGS (\(m.flags))") }
        if items.contains("RFC822.SIZE") { parts.append("RFC822.SIZE \(m.body.count)") }
        if items.contains("INTERNALDATE") { parts.append("INTERNALDATE \"01-Jan-2024 00:00:00 +0000\"") }
        var out = Array("* \(seq) FETCH (\(parts.joined(separator: " "))".utf8)
        if items.contains("BODY[]") || items.contains("BODY.PEEK[]") {
            out += Array(" BODY[] {\(m.body.count)}\r\n".utf8) + m.body
        }
        if items.contains("HEADER.FIELDS (MESSAGE-ID)") {
            let text = String(decoding: m.body, as: UTF8.self)
            let id = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("message-id:") }.map { $0 + "\r\n" } ?? ""
            let fields = Array((id + "\r\n").utf8)
            out += Array(" BODY[HEADER.FIELDS (MESSAGE-ID)] {\(fields.count)}\r\n".utf8) + fields
        }
        return out + Array(")\r\n".utf8)
    }
}
