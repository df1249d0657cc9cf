#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import MailMessage
import MoIndex
import Threading
import XapianKit

/// `notmuch show` over mo's index (notmuch-show.c): which messages, in which tree, in which format.
/// The layout of each message is ``ShowFormat``'s.
///
/// | options                                   | shown                                                           |
/// |-------------------------------------------|-----------------------------------------------------------------|
/// | `--part=N`, `--duplicate=N`, `--format=raw` | one message: the query must match exactly one                 |
/// | `--unthreaded`                            | each match alone: `[[message]]`                                 |
/// | otherwise                                 | each thread with a match, in the order of its first match: `[node*]`, a node `[message\|null, [node*]]` |
/// | `--entire-thread` (default for JSON, sexp)| every message of those threads; without it, the others are `null` (text: left out) |
///
/// A thread's tree is mo's (``ThreadTree``, notmuch's parent rule); a placeholder for a missing
/// message is not shown, its replies take its place, as notmuch shows no ghosts.
public struct NotmuchShow {
    public enum Format: String, CaseIterable, Sendable { case json, sexp, text, mbox, raw }

    public var format = Format.text
    public var entireThread = false
    public var unthreaded = false
    /// `--part=N`; negative: none.
    public var part = -1
    public var duplicate = 0
    public var oldestFirst = false
    /// `--verify` (or `--decrypt=true`): signatures checked and reported (`sigstatus`, `crypto.signed`).
    public var verify = false
    public var layout: ShowFormat
    /// `search.exclude_tags`: the messages that carry one (shown with `excluded`), and whether threads
    /// and matches are chosen without them (`--exclude`, the default): then a thread whose only matches
    /// are excluded is left out, and an excluded match is shown as an unmatched one.
    public var excluded: Set<XapianDocumentID> = []
    public var omitExcluded = true

    public init(now: Int64) { layout = ShowFormat(now: now) }

    /// One message, not threads: a part, a duplicate or the raw format asks for one.
    public var singleMessage: Bool { part >= 0 || duplicate > 0 || format == .raw }

    /// Prints the answer through `sink`; the exit status (1 when a message could not be read, or the
    /// query did not match exactly one message where one is needed), with notmuch's words on `errors`.
    public func run(_ index: MailIndex, _ query: XapianQuery, sink: @escaping ([UInt8]) -> Void, errors: (String) -> Void) throws -> Int32 {
        let sprinterFormat: Sprinter.Format = format == .json ? .json : format == .sexp ? .sexp : .text
        var p = Sprinter(sprinterFormat, sink: sink)
        defer { p.flush() }
        let tags = try IndexedTags(index)
        if singleMessage {
            let count = try index.count(query)
            guard count == 1, let m = try index.messages(query, order: .relevance, limit: 1).first else {
                errors("Error: search term did not match precisely one message (matched \(count) messages).\n")
                return 1
            }
            var shown = try shownMessage(m, matched: true, index, tags)
            shown.duplicate = duplicate
            return one(shown, errors: errors, to: &p)
        }
        let listing = try index.listing(query, order: oldestFirst ? .oldest : .newest, fields: [.thread])
        let chosen =
            omitExcluded
            ? listing.documentIDs.indices.filter { !excluded.contains(listing.documentIDs[$0]) } : Array(listing.documentIDs.indices)
        var status: Int32 = 0
        p.beginList()
        if unthreaded {
            let tags = try tags.reading(chosen.map { listing.documentIDs[$0] }, index)
            for row in chosen {
                guard let m = try index.message(listing.documentIDs[row]) else { continue }
                p.beginList()
                p.beginList()
                status = max(status, show(try shownMessage(m, matched: true, index, tags), depth: 0, errors: errors, to: &p))
                p.end()
                p.end()
            }
        } else {
            let matched = Set(listing.documentIDs)
            var seen = Set<String>()
            for row in chosen where seen.insert(listing.thread(row)).inserted {
                let members = try index.thread(listing.thread(row))
                let tags = try tags.reading(members.map(\.documentID), index)
                var byID: [String: ShownMessage] = [:]
                for m in members { byID[m.record.id] = try shownMessage(m, matched: matched.contains(m.documentID), index, tags) }
                status = max(status, nodes(Self.tree(members), byID, depth: 0, errors: errors, to: &p))
            }
        }
        p.end()
        return status
    }

    /// `[node*]`, a node being `[message|null, [node*]]`.
    func nodes(_ list: [Node], _ byID: [String: ShownMessage], depth: Int, errors: (String) -> Void, to p: inout Sprinter) -> Int32 {
        var status: Int32 = 0
        p.beginList()
        for n in list {
            p.beginList()
            var next = depth
            if let m = byID[n.id], (m.matched && !(m.excluded && omitExcluded)) || entireThread {
                status = max(status, show(m, depth: depth, errors: errors, to: &p))
                next = depth + 1
            } else {
                p.null()
            }
            status = max(status, nodes(n.replies, byID, depth: next, errors: errors, to: &p))
            p.end()
        }
        p.end()
        return status
    }

    /// One message of a thread in the chosen format.
    func show(_ m: ShownMessage, depth: Int, errors: (String) -> Void, to p: inout Sprinter) -> Int32 {
        let body: ShownMessage.Body?
        switch m.open() {
        case .success(var b):
            if verify && (format == .json || format == .sexp) && layout.body { b.verifySignatures() }
            body = b
        case .failure(let f):
            errors(f.message)
            body = nil
        }
        switch format {
        case .json, .sexp: layout.message(m, body, to: &p)
        case .text: p.raw(layout.text(m, body, depth: depth))
        case .mbox: if let body { p.raw(bytes: Self.mbox(m, body)) }
        case .raw: if let body { p.raw(bytes: body.bytes) }
        }
        p.flush()
        return body == nil ? 1 : 0
    }

    /// `--part`, `--duplicate` or raw: the one message, or its part `part`.
    func one(_ m: ShownMessage, errors: (String) -> Void, to p: inout Sprinter) -> Int32 {
        guard part > 0 else { return show(m, depth: 0, errors: errors, to: &p) }
        var body: ShownMessage.Body
        switch m.open() {
        case .success(let b): body = b
        case .failure(let f):
            errors(f.message)
            return 1
        }
        guard let x = body.part(part) else { return 0 }  // notmuch prints nothing for a part past the last
        if verify && (format == .json || format == .sexp) { body.verifySignatures() }
        switch format {
        case .json, .sexp: layout.part(x, part, body, to: &p)
        case .text:
            var out = ""
            layout.textPart(x, part, body, into: &out)
            p.raw(out)
        case .raw, .mbox: p.raw(bytes: body.raw(x))
        }
        return 0
    }

    /// The mbox format (`format_part_mbox`): a `From ` line with the sender's address and the date in
    /// asctime form, the file's bytes with `From ` lines quoted by `>`, and a blank line.
    static func mbox(_ m: ShownMessage, _ b: ShownMessage.Body) -> [UInt8] {
        var out = MboxrdEncoder.separator(sender: ShownHeaders.firstAddress(b.root.headers) ?? "MAILER-DAEMON", date: m.date)
        var encoder = MboxrdEncoder()
        encoder.encode(b.bytes, into: &out)
        encoder.finish(into: &out)
        return out
    }

    // MARK: Threads

    typealias Node = NotmuchThreadTree.Node

    /// The thread laid out as notmuch lays it out, members oldest first, ties in index order.
    static func tree(_ members: [IndexedMessage]) -> [Node] {
        let sorted = members.sorted { ($0.record.date ?? 0, $0.documentID) < ($1.record.date ?? 0, $1.documentID) }
        return NotmuchThreadTree.layout(
            sorted.map { m in
                let r = m.record
                let input = ThreadInput(
                    messageID: r.id, inReplyTo: r.inReplyTo, references: r.references, date: r.date,
                    strictInReplyTo: .some(r.strictInReplyTo))
                return NotmuchThreadTree.Member(
                    id: r.id, replyTo: input.preferredParent, references: Set(r.references + r.inReplyTo).subtracting([r.id]),
                    date: r.date ?? 0)
            })
    }

    func shownMessage(_ m: IndexedMessage, matched: Bool, _ index: MailIndex, _ tags: IndexedTags) throws -> ShownMessage {
        var shown = try Self.shownMessage(m, matched: matched, index, tags)
        shown.excluded = excluded.contains(m.documentID)
        return shown
    }

    public static func shownMessage(_ m: IndexedMessage, matched: Bool, _ index: MailIndex, _ tags: IndexedTags) throws -> ShownMessage {
        ShownMessage(
            id: m.record.id, matched: matched, files: m.record.files.map(index.absolutePath), date: m.record.date ?? 0,
            tags: NotmuchThread.byteSorted(Set(try tags.tags(of: m.documentID, index))), from: m.record.from)
    }
}
