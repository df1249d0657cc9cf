#if canImport(Glibc)
    import Glibc
#endif
import IMAPCodec
/// `GmailModel`'s answers, command by command (sources as marked in GmailModel.swift).
extension GmailModel {
    typealias Reply = ScriptedIMAPServer.Reply

    /// The script for `ScriptedIMAPServer`: every command answered here.
    public func answer(_ r: ScriptedIMAPServer.Request) -> [ScriptedIMAPServer.Reply]? {
        func ok(_ text: String = "Success") -> [Reply] { [.text("\(r.tag) OK \(text)\r\n")] }
        let t = ScriptedIMAPServer.tokens(r.arguments)
        let text = { (i: Int) in i < t.count ? String(decoding: t[i], as: UTF8.self) : "" }
        if let tag = state.withLock({ $0.idling.removeValue(forKey: r.connection) }) {
            return [.text("\(tag) OK IDLE terminated (Success)\r\n")]
        }
        switch r.verb {
        case "CAPABILITY": return [.text("* CAPABILITY \(Self.capabilities)\r\n")] + ok()
        case "LOGIN", "AUTHENTICATE": return [.text("* CAPABILITY \(Self.capabilities)\r\n")] + ok("authenticated (Success)")
        case "ENABLE", "NOOP", "CHECK", "SUBSCRIBE", "ID": return ok()
        case "NAMESPACE": return [.text("* NAMESPACE ((\"\" \"/\")) NIL NIL\r\n")] + ok()
        case "LOGOUT": return [.text("* BYE LOGOUT Requested\r\n\(r.tag) OK 73 good day (Success)\r\n"), .close]
        case "IDLE":
            state.withLock { $0.idling[r.connection] = r.tag }
            return [.text("+ idling\r\n")]
        case "LIST", "XLIST": return list(r)
        case "SELECT", "EXAMINE": return select(r, text(0))
        case "UNSELECT", "CLOSE":
            state.withLock { $0.selected[r.connection] = nil }
            return ok()
        case "UID FETCH": return fetch(r, t)
        case "UID STORE": return store(r, t)
        case "UID COPY", "UID MOVE": return copy(r, t, move: r.verb == "UID MOVE")
        case "EXPUNGE", "UID EXPUNGE": return expunge(r, only: r.verb == "UID EXPUNGE" ? text(0) : nil)
        case "APPEND": return append(r, t)
        case "UID SEARCH": return search(r, t)
        default: return [.text("\(r.tag) BAD Unknown command\r\n")]
        }
    }

    private func selected(_ r: ScriptedIMAPServer.Request) -> String? { state.withLock { $0.selected[r.connection] } }

    private func list(_ r: ScriptedIMAPServer.Request) -> [Reply] {
        let lines = state.withLock { s -> String in
            var out = "* LIST (\\HasChildren \\Noselect) \"/\" \"[Gmail]\"\r\n"
            for f in Self.systemFolders { out += "* LIST (\(f.attributes)) \"/\" \"\(f.name)\"\r\n" }
            for l in s.userLabels.sorted() { out += "* LIST (\\HasNoChildren) \"/\" \"\(l)\"\r\n" }
            return out
        }
        return [.text(lines + "\(r.tag) OK Success\r\n")]
    }

    private func select(_ r: ScriptedIMAPServer.Request, _ name: String) -> [Reply] {
        state.withLock { s -> [Reply] in
            guard let v = s.views[name] else { return [.text("\(r.tag) NO [NONEXISTENT] Unknown Mailbox: \(name) (Failure)\r\n")] }
            s.selected[r.connection] = name
            let exists = v.uids.count
            return [
                .text(
                    "* FLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen $NotPhishing $Phishing)\r\n"
                        + "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Draft \\Deleted \\Seen $NotPhishing $Phishing \\*)] Flags permitted.\r\n"
                        + "* OK [UIDVALIDITY \(v.uidValidity)] UIDs valid.\r\n* \(exists) EXISTS\r\n* 0 RECENT\r\n"
                        + "* OK [UIDNEXT \(v.uidNext)] Predicted next UID.\r\n* OK [HIGHESTMODSEQ \(s.modSeq)]\r\n"
                        + "\(r.tag) OK [\(r.verb == "SELECT" ? "READ-WRITE" : "READ-ONLY")] \(name) selected. (Success)\r\n")
            ]
        }
    }

    /// `UID FETCH set items [(CHANGEDSINCE n)]` ([EXT] for the X-GM items, RFC 7162 for CHANGEDSINCE).
    private func fetch(_ r: ScriptedIMAPServer.Request, _ t: [[UInt8]]) -> [Reply] {
        guard let folder = selected(r), t.count >= 2 else { return [.text("\(r.tag) BAD No mailbox selected\r\n")] }
        let set = String(decoding: t[0], as: UTF8.self), items = String(decoding: t[1], as: UTF8.self).uppercased()
        let since = t.count > 2 ? UInt64(String(decoding: t[2], as: UTF8.self).filter(\.isNumber)) : nil
        let all = state.withLock { listing($0, folder) }
        var out: [UInt8] = []
        for (seq, entry) in all.enumerated() where MailStore.contains(set, entry.uid, max: all.last?.uid ?? 0) {
            let m = entry.message
            if let since, m.modSeq <= since { continue }
            if items.contains("BODY.PEEK[]") || items.contains("BODY[]") { state.withLock { $0.downloads[m.id, default: 0] += 1 } }
            var parts = ["UID \(entry.uid)"]
            if items.contains("X-GM-MSGID") { parts.append("X-GM-MSGID \(m.id)") }
            if items.contains("X-GM-THRID") { parts.append("X-GM-THRID \(m.thread)") }
            if items.contains("X-GM-LABELS") {
                let labels = m.labels.filter { $0 != Self.label(of: folder) || folder == "[Gmail]/All Mail" }.sorted()
                    .map { $0.hasPrefix("\\") ? $0 : "\"\($0)\"" }
                parts.append("X-GM-LABELS (\(labels.joined(separator: " ")))")
            }
            if items.contains("FLAGS") { parts.append("FLAGS (\(m.flags.sorted().joined(separator: " ")))") }
            if items.contains("MODSEQ") || since != nil { parts.append("MODSEQ (\(m.modSeq))") }
            let plain = MailStore.Message(uid: entry.uid, flags: "", body: m.body)
            var response = Array("* \(seq + 1) FETCH (\(parts.joined(separator: " "))".utf8)
            let rest = MailStore.fetchResponse(seq: seq + 1, plain, items: items.replacingOccurrences(of: "FLAGS", with: ""))
            // The body parts of the plain answer (RFC822.SIZE, BODY[...]) after the Gmail ones.
            let prefix = Array("* \(seq + 1) FETCH (UID \(entry.uid)".utf8)
            response += rest.dropFirst(prefix.count)
            out += response
        }
        return [.send(out), .text("\(r.tag) OK Success\r\n")]
    }

    /// `UID STORE set ±FLAGS[.SILENT] (…)` and `±X-GM-LABELS[.SILENT] (…)` ([EXT], [LBL]).
    private func store(_ r: ScriptedIMAPServer.Request, _ t: [[UInt8]]) -> [Reply] {
        guard let folder = selected(r), t.count >= 3 else { return [.text("\(r.tag) BAD No mailbox selected\r\n")] }
        let set = String(decoding: t[0], as: UTF8.self), what = String(decoding: t[1], as: UTF8.self).uppercased()
        let given = ScriptedIMAPServer.tokens(Array(t[2].dropFirst().dropLast())).map { String(decoding: $0, as: UTF8.self) }
        let labels = what.contains("X-GM-LABELS")
        state.withLock { s in
            let all = listing(s, folder)
            for entry in all where MailStore.contains(set, entry.uid, max: all.last?.uid ?? 0) {
                var m = s.messages[entry.message.id]!
                if given.contains("\\Deleted") && !labels {
                    if what.hasPrefix("-") { s.views[folder]!.deleted.remove(m.id) } else { s.views[folder]!.deleted.insert(m.id) }
                }
                let values = Set(given.filter { $0 != "\\Deleted" || labels }.map { labels && $0 == "\\Starred" ? "\\Flagged" : $0 })
                func apply(_ set: inout Set<String>) {
                    if what.hasPrefix("+") {
                        set.formUnion(values)
                    } else if what.hasPrefix("-") {
                        set.subtract(values)
                    } else {
                        set = values
                    }
                }
                if labels {
                    // \Starred as a label is the \Flagged flag ([EXT]).
                    if values.contains("\\Flagged") {
                        if what.hasPrefix("-") { m.flags.remove("\\Flagged") } else { m.flags.insert("\\Flagged") }
                    }
                    var l = m.labels
                    apply(&l)
                    m.labels = l.subtracting(["\\Flagged"])
                    s.userLabels.formUnion(m.labels.filter { !$0.hasPrefix("\\") })
                } else {
                    apply(&m.flags)
                }
                s.modSeq += 1
                m.modSeq = s.modSeq
                s.messages[m.id] = m
            }
        }
        refreshViews()
        return [.text("\(r.tag) OK Success\r\n")]
    }

    /// `UID COPY|MOVE set folder`: the folder's label added; a move also removes the source's ([LBL]).
    private func copy(_ r: ScriptedIMAPServer.Request, _ t: [[UInt8]], move: Bool) -> [Reply] {
        guard let folder = selected(r), t.count >= 2 else { return [.text("\(r.tag) BAD No mailbox selected\r\n")] }
        let set = String(decoding: t[0], as: UTF8.self), target = String(decoding: t[1], as: UTF8.self)
        var moved: [(from: UInt32, id: UInt64)] = []
        let known = state.withLock { s -> Bool in
            guard s.views[target] != nil else { return false }
            let all = listing(s, folder)
            for entry in all where MailStore.contains(set, entry.uid, max: all.last?.uid ?? 0) {
                var m = s.messages[entry.message.id]!
                if let label = Self.label(of: target) {
                    if label == "\\Starred" { m.flags.insert("\\Flagged") } else { m.labels.insert(label) }
                }
                if move, let source = Self.label(of: folder) { m.labels.remove(source) }
                s.modSeq += 1
                m.modSeq = s.modSeq
                s.messages[m.id] = m
                moved.append((entry.uid, m.id))
            }
            return true
        }
        guard known else { return [.text("\(r.tag) NO [TRYCREATE] Unknown Mailbox: \(target) (Failure)\r\n")] }
        let before = state.withLock { $0.views[folder] }
        refreshViews()
        let (validity, uids) = state.withLock { s in (s.views[target]!.uidValidity, moved.map { s.views[target]!.uids[$0.id] ?? 0 }) }
        let copyUID =
            "[COPYUID \(validity) \(moved.map { String($0.from) }.joined(separator: ",")) \(uids.map(String.init).joined(separator: ","))]"
        guard move else { return [.text("\(r.tag) OK \(copyUID) Success\r\n")] }
        var expunges = ""
        if let before {
            let order = before.uids.sorted { $0.value < $1.value }.map(\.key)
            for id in moved.map(\.id).sorted(by: { before.uids[$0]! > before.uids[$1]! }) {
                if let i = order.firstIndex(of: id) { expunges += "* \(i + 1) EXPUNGE\r\n" }
            }
        }
        return [.text("* OK \(copyUID)\r\n" + expunges + "\(r.tag) OK Success\r\n")]
    }

    /// EXPUNGE: in a label folder the label goes; in All Mail the message goes to Trash; in Trash or Spam it
    /// is deleted ([LBL]).
    private func expunge(_ r: ScriptedIMAPServer.Request, only set: String?) -> [Reply] {
        guard let folder = selected(r) else { return [.text("\(r.tag) BAD No mailbox selected\r\n")] }
        var lines = ""
        state.withLock { s in
            let all = listing(s, folder)
            for (i, entry) in all.enumerated().reversed() where s.views[folder]!.deleted.contains(entry.message.id) {
                if let set, !MailStore.contains(set, entry.uid, max: all.last?.uid ?? 0) { continue }
                let id = entry.message.id
                s.views[folder]!.deleted.remove(id)
                switch folder {
                case "[Gmail]/Trash", "[Gmail]/Spam": s.messages[id] = nil
                case "[Gmail]/All Mail": s.messages[id]!.labels = ["\\Trash"]
                case "[Gmail]/Starred": s.messages[id]!.flags.remove("\\Flagged")
                default: if let label = Self.label(of: folder) { s.messages[id]!.labels.remove(label) }
                }
                if s.messages[id] != nil {
                    s.modSeq += 1
                    s.messages[id]!.modSeq = s.modSeq
                }
                lines += "* \(i + 1) EXPUNGE\r\n"
            }
        }
        refreshViews()
        return [.text(lines + "\(r.tag) OK Success\r\n")]
    }

    /// `APPEND folder [(flags)] literal`: a new message with the folder's label ([LBL]).
    private func append(_ r: ScriptedIMAPServer.Request, _ t: [[UInt8]]) -> [Reply] {
        guard t.count >= 2, let body = t.last else { return [.text("\(r.tag) BAD append\r\n")] }
        let folder = String(decoding: t[0], as: UTF8.self)
        let flags =
            t.count > 2 && t[1].first == UInt8(ascii: "(")
            ? Set(ScriptedIMAPServer.tokens(Array(t[1].dropFirst().dropLast())).map { String(decoding: $0, as: UTF8.self) }) : []
        let id = state.withLock { s -> UInt64? in
            guard s.views[folder] != nil else { return nil }
            let id = s.nextID
            s.nextID += 1
            s.modSeq += 1
            let label = Self.label(of: folder)
            s.messages[id] = Message(
                id: id, thread: id, labels: label.map { $0 == "\\Starred" ? [] : [$0] } ?? [],
                flags: flags.union(label == "\\Starred" ? ["\\Flagged"] : []), body: body, modSeq: s.modSeq)
            return id
        }
        guard let id else { return [.text("\(r.tag) NO [TRYCREATE] Unknown Mailbox: \(folder) (Failure)\r\n")] }
        refreshViews()
        let (validity, uid) = state.withLock { s in (s.views[folder]!.uidValidity, s.views[folder]!.uids[id]!) }
        return [.text("\(r.tag) OK [APPENDUID \(validity) \(uid)] (Success)\r\n")]
    }

    /// `UID SEARCH [RETURN (ALL)] ALL | UID set | X-GM-MSGID n | X-GM-LABELS label | BEFORE d-Mon-yyyy`
    /// ([EXT]; ESEARCH, RFC 4731, as [CAP] announces it; BEFORE by the UTC date, RFC 3501).
    /// Days since 1970 of seconds, or of an IMAP date `d-Mon-yyyy` (-1 when it does not read).
    static func day(_ seconds: Int64) -> Int64 { seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400 }
    static func day(_ text: String) -> Int64 {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let parts = text.filter { $0 != "\"" }.split(separator: "-")
        guard parts.count == 3, let d = Int(parts[0]), let m = months.firstIndex(of: String(parts[1])), let y = Int(parts[2]) else {
            return -1
        }
        guard let date = InternalDate(year: y, month: m + 1, day: d, hour: 0, minute: 0, second: 0, zoneMinutes: 0) else { return -1 }
        return day(date.epochSeconds)
    }

    private func search(_ r: ScriptedIMAPServer.Request, _ t: [[UInt8]]) -> [Reply] {
        guard let folder = selected(r) else { return [.text("\(r.tag) BAD No mailbox selected\r\n")] }
        var words = t.map { String(decoding: $0, as: UTF8.self) }
        let esearch = words.first?.uppercased() == "RETURN"
        if esearch { words.removeFirst(min(2, words.count)) }
        let all = state.withLock { listing($0, folder) }
        let key = words.first?.uppercased()
        let found = all.filter { entry in
            switch key {
            case "UID": MailStore.contains(words.count > 1 ? words[1] : "", entry.uid, max: all.last?.uid ?? 0)
            case "X-GM-MSGID": words.count > 1 && UInt64(words[1]) == entry.message.id
            case "BEFORE": words.count > 1 && Self.day(entry.message.arrived) < Self.day(words[1])
            case "X-GM-LABELS":
                words.count > 1
                    && (words[1] == "\\Starred"
                        ? entry.message.flags.contains("\\Flagged")
                        : entry.message.labels.contains { $0.lowercased() == words[1].lowercased() })
            default: true
            }
        }.map(\.uid)
        guard esearch else {
            return [.text("* SEARCH" + found.map { " \($0)" }.joined() + "\r\n\(r.tag) OK SEARCH completed (Success)\r\n")]
        }
        var ranges: [String] = []
        var i = 0
        while i < found.count {
            var j = i
            while j + 1 < found.count && found[j + 1] == found[j] + 1 { j += 1 }
            ranges.append(i == j ? "\(found[i])" : "\(found[i]):\(found[j])")
            i = j + 1
        }
        let result = ranges.isEmpty ? "" : " ALL " + ranges.joined(separator: ",")
        return [.text("* ESEARCH (TAG \"\(r.tag)\") UID\(result)\r\n\(r.tag) OK SEARCH completed (Success)\r\n")]
    }
}
