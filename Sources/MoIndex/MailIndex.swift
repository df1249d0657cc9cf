import Maildir
import MoCore
import XapianKit

/// One message as a search returns it.
public struct IndexedMessage: Sendable {
    public let documentID: XapianDocumentID
    public let record: MessageRecord
    public let thread: String

    /// The union of the files' Maildir flags.
    public var flags: MaildirFlags {
        record.files.reduce(into: MaildirFlags()) { $0.formUnion(IndexedFile($1).flags) }
    }
    /// No file has S.
    public var isUnread: Bool { !record.files.contains { IndexedFile($0).flags.isSeen } }
}

/// Result order.
public enum ResultOrder: String, Sendable, CaseIterable {
    case newest, oldest, relevance

    var xapian: XapianSort {
        switch self {
        case .newest: .value(slot: IndexSchema.Slot.date, descending: true)
        case .oldest: .value(slot: IndexSchema.Slot.date, descending: false)
        case .relevance: .relevance
        }
    }
}

/// A read-only view of an index: queries, messages, threads. Readers work while an update runs: a read
/// that meets a newer revision reopens and retries (Xapian's DatabaseModifiedError).
///
/// Not thread-safe (one Xapian handle).
public final class MailIndex {
    public let path: String
    let db: XapianDatabase
    public let roots: [IndexRoot]
    /// The headers a notmuch configuration had indexed (`UserHeader`): fields of queries too.
    public let userHeaders: [UserHeader]

    public init(path: String) throws {
        self.path = path
        db = try Self.open(path)
        try Self.checkFormat(db, path: path, allowEmpty: false)
        roots = IndexRoot.decode(String(decoding: try db.metadata(IndexSchema.Metadata.roots), as: UTF8.self))
        userHeaders = UserHeader.decode(String(decoding: try db.metadata(IndexSchema.Metadata.userHeaders), as: UTF8.self))
    }

    /// A query field by name: the schema's, else a `UserHeader`'s.
    func field(named name: String) -> IndexField? {
        IndexSchema.field(named: name) ?? userHeaders.first { $0.name == name }?.field
    }

    private static func open(_ path: String) throws -> XapianDatabase {
        let result: Result<XapianDatabase, XapianError> = Result { () throws(XapianError) in try XapianDatabase(path: path) }
        switch result {
        case .success(let db): return db
        case .failure(let e) where e.type == "DatabaseNotFoundError" || e.type == "DatabaseOpeningError":
            throw GenericError(.unavailable, "no index at \(quotedForMessage(path)); run `mo-index update` first")
        case .failure(let e): throw e
        }
    }

    /// Refuses an index of another format (or, unless `allowEmpty`, an empty database).
    static func checkFormat(_ db: XapianDatabase, path: String, allowEmpty: Bool) throws {
        let format = String(decoding: try db.metadata(IndexSchema.Metadata.format), as: UTF8.self)
        if IndexSchema.readableFormats.contains(format) { return }
        if format.isEmpty, try db.documentCount == 0 {
            if allowEmpty { return }
            throw GenericError(.unavailable, "index \(quotedForMessage(path)) is empty; run `mo-index update` first")
        }
        if IndexSchema.rebuiltFormats.contains(format) {
            throw GenericError(
                .data,
                "index \(quotedForMessage(path)) has format \(quotedForMessage(format)), older than this "
                    + "mo-index's \(IndexSchema.formatVersion): run `mo-index update` to rebuild it")
        }
        throw GenericError(
            .data,
            "index \(quotedForMessage(path)) has format \(quotedForMessage(format)), this mo-index "
                + "reads \(IndexSchema.formatVersion): delete the directory and run `mo-index update`")
    }

    /// Runs `body`, reopening and retrying when an update committed meanwhile.
    func retrying<R>(_ body: () throws -> R) throws -> R {
        var attempts = 0
        while true {
            do {
                return try body()
            } catch let e as XapianError where e.kind == .temporary && attempts < 5 {
                attempts += 1
                try db.reopen()
            }
        }
    }

    public var messageCount: Int { get throws { try retrying { try db.documentCount } } }

    /// The revision of the last update that wrote anything (`lastmod:` counts in these).
    public var revision: Int64 {
        get throws { Int64(String(decoding: try db.metadata(IndexSchema.Metadata.revision), as: UTF8.self)) ?? 0 }
    }

    /// The index's own id (made by its first update), for notmuch's `count --lastmod`.
    public var uuid: String { get throws { String(decoding: try db.metadata(IndexSchema.Metadata.uuid), as: UTF8.self) } }

    /// Parses `text` in the query language (docs/query-language.md); `sexp`: in notmuch's S-expression
    /// syntax (`SexpQuery`), with `saved` queries by configuration key.
    public func query(_ text: String, sexp: Bool = false, saved: @escaping (String) -> String? = { _ in nil }) throws -> XapianQuery {
        try retrying {
            let user = Set(userHeaders.map(\.name))
            return try QueryCompiler(index: self).compile(
                sexp ? try SexpQuery.parse(text, saved: saved, userFields: user) : try QueryParser.parse(text, userFields: user))
        }
    }

    /// The number of matching messages (exact).
    public func count(_ query: XapianQuery) throws -> Int {
        try retrying {
            let total = try db.documentCount
            return try db.search(query, limit: 0, checkAtLeast: total).estimatedCount
        }
    }

    /// Matching messages in `order`, `offset ..< offset + limit`.
    public func messages(
        _ query: XapianQuery, order: ResultOrder = .newest, offset: Int = 0,
        limit: Int = Int(Int32.max)
    ) throws -> [IndexedMessage] {
        try retrying {
            let set = try db.search(query, sort: order.xapian, offset: offset, limit: limit)
            return try set.matches.compactMap { try message($0.documentID) }
        }
    }

    /// Matching messages in `order`, one at a time: the match set holds document ids only, and each record
    /// is read as it is visited (an export of the whole index stays small).
    public func forEachMessage(_ query: XapianQuery, order: ResultOrder, _ body: (IndexedMessage) throws -> Void) throws {
        let set = try retrying { try db.search(query, sort: order.xapian, offset: 0, limit: Int(Int32.max)) }
        for match in set.matches {
            if let m = try message(match.documentID) { try body(m) }
        }
    }

    public func message(_ id: XapianDocumentID) throws -> IndexedMessage? {
        let doc = try db.document(id)
        guard let record = MessageRecord(decoding: try doc.data()) else { return nil }
        return IndexedMessage(
            documentID: id, record: record,
            thread: String(decoding: try doc.value(slot: IndexSchema.Slot.thread), as: UTF8.self))
    }

    /// Every message of a thread, oldest first.
    public func thread(_ id: String) throws -> [IndexedMessage] {
        try messages(XapianQuery(term: IndexSchema.Prefix.thread + id), order: .oldest)
    }

    /// The number of messages in a thread (a term frequency: no document is read).
    public func threadSize(_ id: String) throws -> Int {
        try retrying { try db.termFrequency(IndexSchema.Prefix.thread + id) }
    }

    /// Every tag with its number of messages (the term frequency of its `K` term; no document is read),
    /// sorted by tag (byte order).
    public func tagCounts() throws -> [(tag: String, messages: Int)] {
        let skip = IndexSchema.Prefix.tag.utf8.count
        return try retrying {
            try db.allTerms(withPrefix: IndexSchema.Prefix.tag).map {
                (String(decoding: $0.term.dropFirst(skip), as: UTF8.self), $0.frequency)
            }
        }
    }

    /// A message's tags as indexed (its `K` terms), sorted (byte order): for dumps and displays.
    public func tags(of message: IndexedMessage) throws -> [String] { try tags(ofDocument: message.documentID) }

    /// A document's tags (its `K` terms), sorted (byte order).
    public func tags(ofDocument id: XapianDocumentID) throws -> [String] {
        let skip = IndexSchema.Prefix.tag.utf8.count
        return try retrying {
            try db.document(id).terms(withPrefix: IndexSchema.Prefix.tag).map {
                String(decoding: $0.dropFirst(skip), as: UTF8.self)
            }
        }
    }

    /// The tags of many documents at once, each as `tags(ofDocument:)` gives it (a document with none: []):
    /// each tag's posting list read once (`XapianDatabase.terms(withPrefix:among:)`), where a document's
    /// term list holds every word of the message and is decompressed whole to find its few tags.
    public func tags(ofDocuments ids: [XapianDocumentID]) throws -> [XapianDocumentID: [String]] {
        let skip = IndexSchema.Prefix.tag.utf8.count
        return try retrying {
            var out = [XapianDocumentID: [String]](minimumCapacity: ids.count)
            for id in ids { out[id] = [] }
            for (term, docs) in try db.terms(withPrefix: IndexSchema.Prefix.tag, among: ids) {
                let tag = String(decoding: term.dropFirst(skip), as: UTF8.self)
                for d in docs { out[d]?.append(tag) }
            }
            return out
        }
    }

    /// How many distinct tags the index holds.
    public func tagTermCount() throws -> Int { try retrying { try db.allTerms(withPrefix: IndexSchema.Prefix.tag).count } }

    /// Terms starting with `prefix`, for wildcard expansion.
    func terms(withPrefix prefix: String) throws -> [String] {
        try db.allTerms(withPrefix: prefix).map { String(decoding: $0.term, as: UTF8.self) }
    }

    /// The file on disk for an index path.
    public func absolutePath(_ indexPath: String) -> String { IndexRoot.absolutePath(indexPath, roots: roots) }
}
