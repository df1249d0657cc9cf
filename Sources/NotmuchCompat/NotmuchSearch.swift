import MoIndex
import XapianKit

/// `notmuch search` over mo's index (notmuch-search.c): the outputs `summary`, `threads`, `messages`,
/// `files` and `tags`, printed through a `Sprinter` exactly as notmuch 0.37 prints them.
public struct NotmuchSearch {
    public enum Output: String, CaseIterable, Sendable { case summary, threads, messages, files, tags }

    public var output = Output.summary
    public var oldestFirst = false
    /// Negative: counted from the end (notmuch's `--offset=-N`).
    public var offset = 0
    /// Negative: no limit.
    public var limit = -1
    /// `--duplicate=N`: only the Nth file of each message (files), or messages with at least N files.
    public var duplicate = -1
    public var formatVersion = NotmuchFormatVersion.current
    /// The time `date_relative` is relative to.
    public var now: Int64

    public init(now: Int64) { self.now = now }

    var order: ResultOrder { oldestFirst ? .oldest : .newest }

    public func run(_ index: MailIndex, _ query: XapianQuery, matchesAll: Bool, to p: inout Sprinter) throws {
        switch output {
        case .summary, .threads: try threads(index, query, to: &p)
        case .messages, .files: try messages(index, query, to: &p)
        case .tags: try tags(index, query, matchesAll: matchesAll, to: &p)
        }
        p.flush()
    }

    /// The page of `count` results from `offset` (negative: from the end) and `limit`.
    func page(_ count: Int) -> Range<Int> {
        let start = offset < 0 ? max(0, count + offset) : min(offset, count)
        let end = limit < 0 ? count : min(count, start + limit)
        return start..<max(start, end)
    }

    func threads(_ index: MailIndex, _ query: XapianQuery, to p: inout Sprinter) throws {
        let listing = try index.listing(query, order: order, fields: [.thread])
        var seen = Set<String>()
        let order = (0..<listing.count).map(listing.thread).filter { seen.insert($0).inserted }
        let matchedDocs = Set(listing.documentIDs)
        p.beginList()
        for i in page(order.count) {
            if output == .threads {
                p.setPrefix("thread")
                p.string(order[i])
                p.separator()
                continue
            }
            let t = try thread(order[i], index, matched: matchedDocs)
            summary(t, to: &p)
        }
        p.end()
    }

    func thread(_ id: String, _ index: MailIndex, matched: Set<XapianDocumentID>) throws -> NotmuchThread {
        let all = try index.listing(
            XapianQuery(term: IndexSchema.Prefix.thread + id), order: .oldest, fields: [.id, .date, .from, .subject])
        var members: [NotmuchThread.Member] = []
        for row in 0..<all.count {
            let doc = all.documentIDs[row]
            members.append(
                NotmuchThread.Member(
                    id: all.id(row), date: all.date(row) ?? 0, from: all.from(row), subject: all.subject(row),
                    tags: try Self.tags(of: doc, index), matched: matched.contains(doc)))
        }
        return NotmuchThread(id: id, members: members, oldestFirst: oldestFirst)
    }

    func summary(_ t: NotmuchThread, to p: inout Sprinter) {
        let date = oldestFirst ? t.oldest : t.newest
        let relative = RelativeDate.describe(date, now: now)
        p.beginMap()
        if p.isText {
            let padded = String(repeating: " ", count: max(0, 12 - relative.count)) + relative
            p.raw("thread:\(t.id) \(padded) [\(t.matched)/\(t.total)] \(Self.sanitized(t.authors)); \(Self.sanitized(t.subject)) (")
            p.raw(t.tags.joined(separator: " ") + ")")
        } else {
            p.mapKey("thread")
            p.string(t.id)
            p.mapKey("timestamp")
            p.integer(date)
            p.mapKey("date_relative")
            p.string(relative)
            p.mapKey("matched")
            p.integer(Int64(t.matched))
            p.mapKey("total")
            p.integer(Int64(t.total))
            p.mapKey("authors")
            p.string(t.authors)
            p.mapKey("subject")
            p.string(t.subject)
            if formatVersion >= 2 {
                p.mapKey("query")
                p.beginList()
                if let q = NotmuchThread.idQuery(t.matchedIDs) { p.string(q) } else { p.null() }
                if let q = NotmuchThread.idQuery(t.otherIDs) { p.string(q) } else { p.null() }
                p.end()
            }
            p.mapKey("tags")
            p.beginList()
            for tag in t.tags { p.string(tag) }
            p.end()
        }
        p.end()
        p.separator()
    }

    /// A message's tags as notmuch has them: mo's tags, and the ones notmuch adds as it indexes
    /// (`attachment`, `signed`, `encrypted`), which mo keeps as terms of their own.
    static let indexedTags = [
        (IndexSchema.Prefix.has + "attachment", "attachment"), (IndexSchema.Prefix.mimeType + "multipart/signed", "signed"),
        (IndexSchema.Prefix.mimeType + "multipart/encrypted", "encrypted")
    ]

    static func tags(of doc: XapianDocumentID, _ index: MailIndex) throws -> [String] {
        var tags = try index.tags(ofDocument: doc)
        if try index.terms(ofDocument: doc, prefix: IndexSchema.Prefix.has).contains("attachment") { tags.append("attachment") }
        let types = try index.terms(ofDocument: doc, prefix: IndexSchema.Prefix.mimeType)
        if types.contains("multipart/signed") { tags.append("signed") }
        if types.contains("multipart/encrypted") { tags.append("encrypted") }
        return Array(Set(tags))
    }

    /// notmuch's `sanitize_string` for the text summary: tab and newline become spaces, other control
    /// bytes `?`.
    static func sanitized(_ s: String) -> String {
        String(decoding: s.utf8.map { $0 == 9 || $0 == 10 ? 32 : $0 < 32 ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
    }

    func messages(_ index: MailIndex, _ query: XapianQuery, to p: inout Sprinter) throws {
        let listing = try index.listing(query, order: order, fields: [.id])
        p.beginList()
        for row in page(listing.count) {
            if output == .messages && duplicate <= 1 {
                p.setPrefix("id")
                p.string(listing.id(row))
                p.separator()
                continue
            }
            guard let m = try index.message(listing.documentIDs[row]) else { continue }
            if output == .messages {
                guard duplicate <= m.record.files.count else { continue }
                p.setPrefix("id")
                p.string(m.record.id)
                p.separator()
                continue
            }
            for (j, f) in m.record.files.enumerated() where duplicate < 0 || duplicate == j + 1 {
                p.string(index.absolutePath(f))
                p.separator()
            }
        }
        p.end()
    }

    func tags(_ index: MailIndex, _ query: XapianQuery, matchesAll: Bool, to p: inout Sprinter) throws {
        var tags: [String]
        if matchesAll {
            var set = Set(try index.tagCounts().map(\.tag))
            for (term, tag) in Self.indexedTags where try index.count(XapianQuery(term: term)) > 0 { set.insert(tag) }
            tags = set.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        } else {
            var set = Set<String>()
            let listing = try index.listing(query, order: .relevance, fields: [])
            for doc in listing.documentIDs { set.formUnion(try Self.tags(of: doc, index)) }
            tags = set.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        }
        p.beginList()
        for t in tags {
            p.string(t)
            p.separator()
        }
        p.end()
    }
}

/// The structured formats' versions (notmuch's `--format-version`): 1 to 5, as notmuch 0.37.
public enum NotmuchFormatVersion {
    public static let current = 5
    public static let minimum = 1

    /// The refusal for a version out of range, with notmuch's words and exit code (20: too old, 21: too new).
    public static func check(_ v: Int) -> (message: String, status: Int32)? {
        if v > current {
            return (
                "A caller requested output format version \(v), but the installed notmuch\n"
                    + "CLI only supports up to format version \(current).  You may need to upgrade your\nnotmuch CLI.\n", 21
            )
        }
        if v < minimum {
            return (
                "A caller requested output format version \(v), which is no longer supported\n"
                    + "by the notmuch CLI (it requires at least version \(minimum)).  You may need to\n"
                    + "upgrade your notmuch front-end.\n", 20
            )
        }
        return nil
    }
}
