import MoCore

/// A piece of a command to write to the server, in order.
public struct CommandChunk: Sendable, Hashable {
    public enum Payload: Sendable, Hashable {
        case bytes([UInt8])
        /// The caller writes exactly `size` bytes of the APPEND message here (streamed, never held by the encoder).
        case messageBody(size: Int)
    }
    /// True when the server's continuation request (`+`) must be received before this chunk is written
    /// (a synchronising literal). If the server answers with a tagged NO/BAD instead, the command is over and
    /// the remaining chunks must not be sent.
    public var waitForContinuation: Bool
    public var payload: Payload
    public init(waitForContinuation: Bool, _ payload: Payload) {
        self.waitForContinuation = waitForContinuation
        self.payload = payload
    }
}

/// An encoded command: its tag and the chunks to write.
public struct EncodedCommand: Sendable, Hashable {
    public let tag: String
    public let chunks: [CommandChunk]
    /// All bytes concatenated, for commands without a streamed body (tests, logging).
    public var bytes: [UInt8] {
        chunks.flatMap { chunk -> [UInt8] in
            if case .bytes(let b) = chunk.payload { return b }
            return []
        }
    }
}

/// A command could not be encoded (for example a string containing NUL, which no IMAP string can carry).
public struct IMAPEncodeError: MoError, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var kind: ErrorKind { .data }
    public var description: String { message }
}

/// Encodes commands to bytes. Strings become atoms when safe, quoted strings when printable ASCII, literals
/// otherwise; literals are non-synchronising (`{n+}`) when the server offers LITERAL+ (or LITERAL- and n <= 4096,
/// RFC 7888), otherwise the command is split into chunks that wait for `+`.
public struct CommandEncoder: Sendable {
    /// The server's capabilities; only LITERAL+, LITERAL- and SASL-IR change the encoding.
    public var capabilities: Set<Capability>
    public var tags: TagGenerator

    public init(capabilities: Set<Capability> = [], tags: TagGenerator = TagGenerator()) {
        self.capabilities = capabilities
        self.tags = tags
    }

    /// `DONE` CRLF, which ends IDLE (RFC 2177).
    public static let done: [UInt8] = Array("DONE\r\n".utf8)

    /// A SASL response to a server challenge: base64 and CRLF (RFC 3501 §6.2.2).
    public static func saslResponse(_ raw: [UInt8]) -> [UInt8] { Array(Base64.encode(raw).utf8) + [UInt8(ascii: "\r"), UInt8(ascii: "\n")] }
    /// Cancels an AUTHENTICATE exchange.
    public static let saslCancel: [UInt8] = Array("*\r\n".utf8)

    /// Encodes `command` with the next tag.
    public mutating func encode(_ command: Command) throws(IMAPEncodeError) -> EncodedCommand {
        let tag = tags.next()
        var w = CommandWriter(
            literalPlus: capabilities.contains(.literalPlus),
            literalMinus: capabilities.contains(.literalMinus))
        w.raw(tag)
        w.raw(" ")
        try write(command, &w)
        w.raw("\r\n")
        return EncodedCommand(tag: tag, chunks: w.finish())
    }

    private func write(_ command: Command, _ w: inout CommandWriter) throws(IMAPEncodeError) {
        switch command {
        case .capability: w.raw("CAPABILITY")
        case .noop: w.raw("NOOP")
        case .logout: w.raw("LOGOUT")
        case .startTLS: w.raw("STARTTLS")
        case .login(let user, let password):
            w.raw("LOGIN ")
            try w.astring(Array(user.utf8))
            w.raw(" ")
            try w.astring(Array(password.utf8))
        case .authenticate(let mechanism, let initial):
            try checkAtom(mechanism, "SASL mechanism")
            w.raw("AUTHENTICATE " + mechanism.uppercased())
            if let initial {
                if capabilities.contains(.saslIR) {
                    w.raw(" ")
                    w.bytes(initial.isEmpty ? [UInt8(ascii: "=")] : Array(Base64.encode(initial).utf8))
                } else {
                    w.raw("\r\n")
                    w.continuation(Array(Base64.encode(initial).utf8))  // the caller's "\r\n" follows
                }
            }
        case .enable(let caps):
            w.raw("ENABLE")
            for c in caps {
                try checkAtom(c.name, "capability")
                w.raw(" " + c.name)
            }
        case .list(let reference, let pattern, let returning):
            w.raw("LIST ")
            try w.astring(reference.wire)
            w.raw(" ")
            try w.listMailbox(Array(ModifiedUTF7.encode(pattern).utf8))
            if !returning.isEmpty {
                w.raw(" RETURN (")
                for (i, option) in returning.enumerated() {
                    if i > 0 { w.raw(" ") }
                    switch option {
                    case .specialUse: w.raw("SPECIAL-USE")
                    case .subscribed: w.raw("SUBSCRIBED")
                    case .children: w.raw("CHILDREN")
                    case .status(let items): w.raw("STATUS (" + items.map(\.rawValue).joined(separator: " ") + ")")
                    }
                }
                w.raw(")")
            }
        case .status(let mailbox, let items):
            w.raw("STATUS ")
            try w.astring(mailbox.wire)
            w.raw(" (" + items.map(\.rawValue).joined(separator: " ") + ")")
        case .select(let mailbox, let parameter), .examine(let mailbox, let parameter):
            if case .select = command { w.raw("SELECT ") } else { w.raw("EXAMINE ") }
            try w.astring(mailbox.wire)
            switch parameter {
            case nil: break
            case .condstore: w.raw(" (CONDSTORE)")
            case .qresync(let validity, let modSeq, let known):
                w.raw(" (QRESYNC (\(validity) \(modSeq)")
                if let known, !known.isEmpty { w.raw(" \(known)") }
                w.raw("))")
            }
        case .create(let mailbox):
            w.raw("CREATE ")
            try w.astring(mailbox.wire)
        case .delete(let mailbox):
            w.raw("DELETE ")
            try w.astring(mailbox.wire)
        case .uidFetch(let set, let items, let changedSince, let vanished):
            try checkSet(set)
            w.raw("UID FETCH \(set) (")
            for (i, item) in items.enumerated() {
                if i > 0 { w.raw(" ") }
                w.raw(try render(item))
            }
            w.raw(")")
            if let changedSince {
                w.raw(" (CHANGEDSINCE \(changedSince)" + (vanished ? " VANISHED)" : ")"))
            }
        case .uidStore(let set, let action, let unchangedSince):
            try checkSet(set)
            w.raw("UID STORE \(set) ")
            if let unchangedSince { w.raw("(UNCHANGEDSINCE \(unchangedSince)) ") }
            w.raw(action.mode.rawValue + "FLAGS" + (action.silent ? ".SILENT " : " "))
            w.raw(try flagList(action.flags))
        case .uidStoreGmailLabels(let set, let mode, let labels, let silent):
            try checkSet(set)
            w.raw("UID STORE \(set) " + mode.rawValue + "X-GM-LABELS" + (silent ? ".SILENT (" : " ("))
            for (i, label) in labels.enumerated() {
                if i > 0 { w.raw(" ") }
                try gmailLabel(label, &w)
            }
            w.raw(")")
        case .append(let mailbox, let flags, let date, let size):
            guard size >= 0 else { throw IMAPEncodeError("APPEND of a message with negative size \(size)") }
            w.raw("APPEND ")
            try w.astring(mailbox.wire)
            if !flags.isEmpty { w.raw(" " + (try flagList(flags))) }
            if let date { w.raw(" \"\(date)\"") }
            w.raw(" ")
            w.messageLiteral(size: size)
        case .uidCopy(let set, let mailbox), .uidMove(let set, let mailbox):
            try checkSet(set)
            if case .uidCopy = command { w.raw("UID COPY \(set) ") } else { w.raw("UID MOVE \(set) ") }
            try w.astring(mailbox.wire)
        case .expunge: w.raw("EXPUNGE")
        case .uidExpunge(let set):
            try checkSet(set)
            w.raw("UID EXPUNGE \(set)")
        case .idle: w.raw("IDLE")
        case .close: w.raw("CLOSE")
        case .unselect: w.raw("UNSELECT")
        case .uidSearch(let key, let returnAll):
            // search = "SEARCH" [search-return-opts] SP search-criteria   ; RFC 4731 (before CHARSET)
            w.raw(returnAll ? "UID SEARCH RETURN (ALL) " : "UID SEARCH ")
            if key.needsUTF8 { w.raw("CHARSET UTF-8 ") }
            try search(key, &w, topLevel: true)
        case .notify(let groups):
            try notify(groups, &w)
        }
    }

    // notify          = "NOTIFY" SP (notify-set / notify-none)                               ; RFC 5465
    // notify-set      = "SET" [status-indicator] SP event-groups
    // notify-none     = "NONE"
    // event-groups    = event-group *(SP event-group)
    // event-group     = "(" filter-mailboxes SP events ")"
    // filter-mailboxes = filter-mailboxes-selected / filter-mailboxes-other
    // filter-mailboxes-selected = "selected" / "selected-delayed"
    // filter-mailboxes-other = "inboxes" / "personal" / "subscribed" /
    //                   ( "subtree" SP one-or-more-mailbox ) / ( "mailboxes" SP one-or-more-mailbox )
    // one-or-more-mailbox = mailbox / many-mailboxes
    // many-mailboxes  = "(" mailbox *(SP mailbox) ")"
    // events          = ( "(" event *(SP event) ")" ) / "NONE"
    private func notify(_ groups: [NotifyEventGroup], _ w: inout CommandWriter) throws(IMAPEncodeError) {
        guard !groups.isEmpty else { w.raw("NOTIFY NONE"); return }
        w.raw("NOTIFY SET")
        for group in groups {
            w.raw(" (")
            switch group.mailboxes {
            case .selected: w.raw("selected")
            case .selectedDelayed: w.raw("selected-delayed")
            case .inboxes: w.raw("inboxes")
            case .personal: w.raw("personal")
            case .subscribed: w.raw("subscribed")
            case .subtree(let boxes), .mailboxes(let boxes):
                guard !boxes.isEmpty else { throw IMAPEncodeError("NOTIFY with an empty mailbox list") }
                if case .subtree = group.mailboxes { w.raw("subtree ") } else { w.raw("mailboxes ") }
                if boxes.count > 1 { w.raw("(") }
                for (i, box) in boxes.enumerated() {
                    if i > 0 { w.raw(" ") }
                    try w.astring(box.wire)
                }
                if boxes.count > 1 { w.raw(")") }
            }
            w.raw(group.events.isEmpty ? " NONE)" : " (" + group.events.map(\.rawValue).joined(separator: " ") + "))")
        }
    }

    private func checkAtom(_ s: String, _ what: String) throws(IMAPEncodeError) {
        guard !s.isEmpty, s.utf8.allSatisfy({ isAtomChar($0) && $0 < 0x80 }) else {
            throw IMAPEncodeError("\(what) \"\(s)\" is not an IMAP atom")
        }
    }

    private func checkSet(_ set: UIDSet) throws(IMAPEncodeError) {
        guard !set.isEmpty else { throw IMAPEncodeError("empty UID set") }
    }

    private func flagList(_ flags: [Flag]) throws(IMAPEncodeError) -> String {
        var parts: [String] = []
        for f in flags {
            switch f {
            case .keyword(let k): try checkAtom(k, "keyword")
            case .extension(let e): try checkAtom(String(e.dropFirst()), "flag")
            case .recent, .wildcard: throw IMAPEncodeError("flag \(f) cannot be stored")
            default: break
            }
            parts.append(f.description)
        }
        return "(" + parts.joined(separator: " ") + ")"
    }

    private func render(_ item: FetchItem) throws(IMAPEncodeError) -> String {
        func section(_ s: String) throws(IMAPEncodeError) -> String {
            guard s.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "]") }) else {
                throw IMAPEncodeError("invalid section \"\(s)\"")
            }
            return "[" + s + "]"
        }
        switch item {
        case .uid: return "UID"
        case .flags: return "FLAGS"
        case .internalDate: return "INTERNALDATE"
        case .rfc822Size: return "RFC822.SIZE"
        case .modSeq: return "MODSEQ"
        case .gmailMessageID: return "X-GM-MSGID"
        case .gmailThreadID: return "X-GM-THRID"
        case .gmailLabels: return "X-GM-LABELS"
        case .envelope: return "ENVELOPE"
        case .bodyStructure: return "BODYSTRUCTURE"
        case .body(let s, let peek): return (peek ? "BODY.PEEK" : "BODY") + (try section(s))
        case .binary(let s, let peek): return (peek ? "BINARY.PEEK" : "BINARY") + (try section(s))
        }
    }

    /// A Gmail label: a system label (`\\Inbox`) as its atom, a user label as an astring.
    private func gmailLabel(_ label: [UInt8], _ w: inout CommandWriter) throws(IMAPEncodeError) {
        if label.first == UInt8(ascii: "\\") {
            try checkAtom(String(decoding: label.dropFirst(), as: UTF8.self), "system label")
            w.raw(String(decoding: label, as: UTF8.self))
        } else {
            try w.astring(label)
        }
    }

    private func search(_ key: SearchKey, _ w: inout CommandWriter, topLevel: Bool = false) throws(IMAPEncodeError) {
        func date(_ d: InternalDate) -> String { "\(d.day)-\(InternalDate.monthNames[d.month - 1])-\(d.year)" }
        func str(_ name: String, _ value: String) throws(IMAPEncodeError) {
            w.raw(name + " ")
            try w.astring(Array(value.utf8))
        }
        switch key {
        case .all: w.raw("ALL")
        case .answered: w.raw("ANSWERED")
        case .deleted: w.raw("DELETED")
        case .draft: w.raw("DRAFT")
        case .flagged: w.raw("FLAGGED")
        case .seen: w.raw("SEEN")
        case .recent: w.raw("RECENT")
        case .new: w.raw("NEW")
        case .old: w.raw("OLD")
        case .unanswered: w.raw("UNANSWERED")
        case .undeleted: w.raw("UNDELETED")
        case .undraft: w.raw("UNDRAFT")
        case .unflagged: w.raw("UNFLAGGED")
        case .unseen: w.raw("UNSEEN")
        case .keyword(let k): try checkAtom(k, "keyword"); w.raw("KEYWORD " + k)
        case .unkeyword(let k): try checkAtom(k, "keyword"); w.raw("UNKEYWORD " + k)
        case .uid(let s): try checkSet(s); w.raw("UID \(s)")
        case .sequence(let s): try checkSet(s); w.raw("\(s)")
        case .before(let d): w.raw("BEFORE " + date(d))
        case .on(let d): w.raw("ON " + date(d))
        case .since(let d): w.raw("SINCE " + date(d))
        case .sentBefore(let d): w.raw("SENTBEFORE " + date(d))
        case .sentOn(let d): w.raw("SENTON " + date(d))
        case .sentSince(let d): w.raw("SENTSINCE " + date(d))
        case .larger(let n): w.raw("LARGER \(n)")
        case .smaller(let n): w.raw("SMALLER \(n)")
        case .modSeq(let m): w.raw("MODSEQ \(m)")
        case .gmailMessageID(let id): w.raw("X-GM-MSGID \(id)")
        case .gmailLabel(let label):
            w.raw("X-GM-LABELS ")
            try gmailLabel(label, &w)
        case .header(let field, let value):
            w.raw("HEADER ")
            try w.astring(Array(field.utf8))
            w.raw(" ")
            try w.astring(Array(value.utf8))
        case .from(let s): try str("FROM", s)
        case .to(let s): try str("TO", s)
        case .cc(let s): try str("CC", s)
        case .bcc(let s): try str("BCC", s)
        case .subject(let s): try str("SUBJECT", s)
        case .body(let s): try str("BODY", s)
        case .text(let s): try str("TEXT", s)
        case .not(let k): w.raw("NOT "); try search(k, &w)
        case .or(let a, let b):
            w.raw("OR ")
            try search(a, &w)
            w.raw(" ")
            try search(b, &w)
        case .and(let keys):
            guard !keys.isEmpty else { w.raw("ALL"); return }
            if !topLevel && keys.count > 1 { w.raw("(") }
            for (i, k) in keys.enumerated() {
                if i > 0 { w.raw(" ") }
                try search(k, &w)
            }
            if !topLevel && keys.count > 1 { w.raw(")") }
        }
    }
}

extension SearchKey {
    /// True if a string in the key has non-ASCII characters.
    var needsUTF8: Bool {
        func nonASCII(_ s: String) -> Bool { s.utf8.contains { $0 >= 0x80 } }
        switch self {
        case .header(let a, let b): return nonASCII(a) || nonASCII(b)
        case .from(let s), .to(let s), .cc(let s), .bcc(let s), .subject(let s), .body(let s), .text(let s):
            return nonASCII(s)
        case .not(let k): return k.needsUTF8
        case .or(let a, let b): return a.needsUTF8 || b.needsUTF8
        case .and(let keys): return keys.contains { $0.needsUTF8 }
        default: return false
        }
    }
}

/// Accumulates command bytes and cuts them into chunks at synchronising literals.
struct CommandWriter {
    let literalPlus: Bool
    let literalMinus: Bool
    private var chunks: [CommandChunk] = []
    private var current: [UInt8] = []
    private var currentWaits = false

    init(literalPlus: Bool, literalMinus: Bool) {
        self.literalPlus = literalPlus
        self.literalMinus = literalMinus
    }

    mutating func raw(_ s: String) { current.append(contentsOf: s.utf8) }
    mutating func bytes(_ b: [UInt8]) { current.append(contentsOf: b) }

    /// Ends the current chunk; what follows waits for `+`.
    mutating func continuation(_ next: [UInt8]) {
        cut(nextWaits: true)
        current = next
    }

    private mutating func cut(nextWaits: Bool) {
        chunks.append(CommandChunk(waitForContinuation: currentWaits, .bytes(current)))
        current = []
        currentWaits = nextWaits
    }

    /// RFC 7888: LITERAL+ allows any non-synchronising literal, LITERAL- only up to 4096 bytes.
    private func nonSync(_ size: Int) -> Bool { literalPlus || (literalMinus && size <= 4096) }

    mutating func literal(_ b: [UInt8]) {
        let plus = nonSync(b.count)
        raw("{\(b.count)" + (plus ? "+}\r\n" : "}\r\n"))
        if !plus { cut(nextWaits: true) }
        bytes(b)
    }

    /// The APPEND literal: header now, body streamed by the caller, then the rest of the command.
    mutating func messageLiteral(size: Int) {
        let plus = nonSync(size)
        raw("{\(size)" + (plus ? "+}\r\n" : "}\r\n"))
        cut(nextWaits: false)
        chunks.append(CommandChunk(waitForContinuation: !plus, .messageBody(size: size)))
    }

    // astring         = 1*ASTRING-CHAR / string
    mutating func astring(_ b: [UInt8]) throws(IMAPEncodeError) {
        if !b.isEmpty && b.allSatisfy({ (isAtomChar($0) || $0 == UInt8(ascii: "]")) && $0 < 0x80 }) {
            bytes(b)
        } else {
            try string(b)
        }
    }

    // list-mailbox    = 1*list-char / string
    // list-char       = ATOM-CHAR / list-wildcards / resp-specials
    mutating func listMailbox(_ b: [UInt8]) throws(IMAPEncodeError) {
        if !b.isEmpty
            && b.allSatisfy({
                (isAtomChar($0) || $0 == UInt8(ascii: "]") || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "*")) && $0 < 0x80
            })
        {
            bytes(b)
        } else {
            try string(b)
        }
    }

    // string          = quoted / literal
    /// Quoted when printable ASCII, else a literal. NUL cannot be sent in either.
    mutating func string(_ b: [UInt8]) throws(IMAPEncodeError) {
        if b.contains(0) { throw IMAPEncodeError("a string to send to the server contains a NUL byte") }
        if b.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) {
            current.append(UInt8(ascii: "\""))
            for c in b {
                if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { current.append(UInt8(ascii: "\\")) }
                current.append(c)
            }
            current.append(UInt8(ascii: "\""))
        } else {
            literal(b)
        }
    }

    mutating func finish() -> [CommandChunk] {
        if !current.isEmpty { cut(nextWaits: false) }
        return chunks
    }
}
