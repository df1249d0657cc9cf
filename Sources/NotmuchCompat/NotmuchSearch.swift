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
    /// `--exclude=flag`: matches that carry an excluded tag (`search.exclude_tags`): their threads are
    /// listed, but they are not counted as matched (`NotmuchThread.Member.excluded`).
    public var unmatched: Set<XapianDocumentID> = []
    /// `--exclude=all`: messages that carry an excluded tag are left out of threads altogether.
    public var dropped: Set<XapianDocumentID> = []

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
        let end = limit < 0 || limit >= count - start ? count : start + limit
        return start..<max(start, end)
    }

    /// Threads in the order of their first match. A summary is built from the query's own listing when
    /// every message of the thread matched (most threads: no other read), else from the thread's.
    func threads(_ index: MailIndex, _ query: XapianQuery, to p: inout Sprinter) throws {
        let summary = output == .summary
        let listing = try index.listing(
            query, order: order, fields: summary ? [.thread, .id, .date, .from, .subject] : [.thread], threadSizes: summary)
        var position: [String: Int] = [:]
        var order: [String] = []
        var rows: [[Int]] = []
        for row in 0..<listing.count {
            let t = listing.thread(row)
            if let known = position[t] {
                rows[known].append(row)
            } else {
                position[t] = order.count
                order.append(t)
                rows.append([row])
            }
        }
        func whole(_ i: Int) -> Bool {
            listing.threadSize(rows[i][0]) == rows[i].count && dropped.isEmpty
                && !rows[i].contains { unmatched.contains(listing.documentIDs[$0]) }
        }
        var indexed: IndexedTags?
        if summary {
            // Every member's tags read at once: the matches', and the other members' of the threads that
            // did not match whole (listed again below, one thread at a time).
            let partial = page(order.count).filter { !whole($0) }.map { XapianQuery(term: IndexSchema.Prefix.thread + order[$0]) }
            let others = partial.isEmpty ? [] : try index.listing(XapianQuery(.or, partial), order: .relevance, fields: []).documentIDs
            indexed = try IndexedTags(index, listed: listing.documentIDs + others)
        }
        var matched: Set<XapianDocumentID>?
        p.beginList()
        for i in page(order.count) {
            if !summary {
                p.setPrefix("thread")
                p.string(order[i])
                p.separator()
                continue
            }
            let members: [NotmuchThread.Member]
            if whole(i) {
                members = try rows[i].sorted {
                    (listing.date($0) ?? Int64.min, listing.documentIDs[$0]) < (listing.date($1) ?? Int64.min, listing.documentIDs[$1])
                }.map { try member(listing, $0, matched: true, index, indexed!, countFiles: p.isText) }
            } else {
                if matched == nil { matched = Set(listing.documentIDs) }
                let all = try index.listing(
                    XapianQuery(term: IndexSchema.Prefix.thread + order[i]), order: .oldest, fields: [.id, .date, .from, .subject])
                members = try (0..<all.count).filter { !dropped.contains(all.documentIDs[$0]) }.map {
                    var m = try member(all, $0, matched: matched!.contains(all.documentIDs[$0]), index, indexed!, countFiles: p.isText)
                    m.excluded = unmatched.contains(all.documentIDs[$0])
                    return m
                }
            }
            self.summary(NotmuchThread(id: order[i], members: members, oldestFirst: oldestFirst), to: &p)
        }
        p.end()
    }

    /// A thread member from a listing row (id, date, from, subject); its files read (its record) only for
    /// the text summary, the one output that shows them.
    func member(
        _ listing: MessageListing, _ row: Int, matched: Bool, _ index: MailIndex, _ indexed: IndexedTags, countFiles: Bool
    ) throws -> NotmuchThread.Member {
        let doc = listing.documentIDs[row]
        return NotmuchThread.Member(
            id: listing.id(row), date: listing.date(row) ?? 0, from: listing.from(row), subject: listing.subject(row),
            tags: try indexed.tags(of: doc, index), matched: matched,
            files: countFiles ? (try index.message(doc)?.record.files.count ?? 1) : 1)
    }

    func summary(_ t: NotmuchThread, to p: inout Sprinter) {
        let date = oldestFirst ? t.oldest : t.newest
        let relative = RelativeDate.describe(date, now: now)
        p.beginMap()
        if p.isText {
            let padded = String(repeating: " ", count: max(0, 12 - relative.utf8.count)) + relative  // C's %12s: bytes
            let counts = t.files == t.total ? "[\(t.matched)/\(t.total)]" : "[\(t.matched)/\(t.total)(\(t.files))]"
            p.raw("thread:\(t.id) \(padded) \(counts) \(Self.sanitized(t.authors)); \(Self.sanitized(t.subject)) (")
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
            for (tag, term) in IndexSchema.indexedTags where try index.count(XapianQuery(term: term)) > 0 { set.insert(tag) }
            tags = NotmuchThread.byteSorted(set)
        } else {
            var set = Set<String>()
            let listing = try index.listing(query, order: .relevance, fields: [])
            let indexed = try IndexedTags(index, listed: listing.documentIDs)
            for doc in listing.documentIDs { set.formUnion(try indexed.tags(of: doc, index)) }
            tags = NotmuchThread.byteSorted(set)
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

/// A message's tags as notmuch has them: mo's tags (its `K` terms), and the ones notmuch adds as it
/// indexes (`attachment`, `signed`, `encrypted`), which mo keeps as terms of their own: the messages
/// with each are read once per command, not per message.
public struct IndexedTags {
    let documents: [(tag: String, ids: Set<XapianDocumentID>)]
    /// The tags of the documents a command lists, read at once (`MailIndex.tags(ofDocuments:)`).
    var read: [XapianDocumentID: [String]] = [:]
    /// How many distinct tags the index has: reading many documents' tags at once walks each one's
    /// postings, reading one document's decompresses its whole term list.
    let tagTerms: Int

    /// `listed`: documents whose tags will be asked (a search's matches), read together when that costs
    /// less than one by one (`reading`).
    public init(_ index: MailIndex, listed: [XapianDocumentID] = []) throws {
        documents = try IndexSchema.indexedTags.map { tag, term in
            (tag, Set(try index.listing(XapianQuery(term: term), order: .relevance, fields: []).documentIDs))
        }
        tagTerms = try index.tagTermCount()
        if Self.readAtOnce(listed.count, tagTerms: tagTerms) { read = try index.tags(ofDocuments: listed) }
    }

    /// Whether `count` documents' tags are read at once: when they are at least an eighth as many as the
    /// index's tags (a term list costs about as much as eight posting lists walked).
    static func readAtOnce(_ count: Int, tagTerms: Int) -> Bool { count > 0 && count * 8 >= tagTerms }

    /// These tags with those of `docs` read at once where `readAtOnce` says so; as they were otherwise.
    public func reading(_ docs: [XapianDocumentID], _ index: MailIndex) throws -> IndexedTags {
        guard Self.readAtOnce(docs.count, tagTerms: tagTerms), !docs.allSatisfy({ read[$0] != nil }) else { return self }
        var more = self
        more.read.merge(try index.tags(ofDocuments: docs)) { a, _ in a }
        return more
    }

    public func tags(of doc: XapianDocumentID, _ index: MailIndex) throws -> [String] {
        var tags = try read[doc] ?? index.tags(ofDocument: doc)
        for (tag, ids) in documents where ids.contains(doc) && !tags.contains(tag) { tags.append(tag) }
        return tags
    }
}
