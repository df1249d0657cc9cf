import CXapian
#if canImport(Glibc)
    import Glibc
#endif

/// A document id: 1 upwards, unique within one database; 0 is never a document.
public typealias XapianDocumentID = UInt32

/// Owns one C database handle; shared by a writer and its `reader` view, and by documents read from it.
/// Freeing closes the database, which releases a writer's lock.
final class XapianDatabaseHandle {
    let raw: OpaquePointer
    init(_ raw: OpaquePointer) { self.raw = raw }
    deinit { mo_xapian_db_free(raw) }
}

/// A Xapian database opened for reading: lookups and searches. It sees the revision that was current when it
/// was opened (or last reopened); when a writer commits meanwhile, reads may fail with
/// `DatabaseModifiedError` (kind `.temporary`): call `reopen()` and retry.
///
/// Not thread-safe: use each instance from one thread at a time.
public final class XapianDatabase {
    let handle: XapianDatabaseHandle

    /// Opens the database at `path` read-only. A missing or unreadable database throws a `.localIO` error.
    public init(path: String) throws(XapianError) {
        let raw = try xapianCreate { err in path.withXapianBytes { mo_xapian_db_open($0, $1, err) } }
        handle = XapianDatabaseHandle(raw)
    }

    init(handle: XapianDatabaseHandle) { self.handle = handle }

    /// Moves to the latest committed revision. Returns whether it moved. Does nothing on a writer's view.
    @discardableResult
    public func reopen() throws(XapianError) -> Bool {
        var changed: Int32 = 0
        _ = try xapianCall { mo_xapian_db_reopen(handle.raw, &changed, $0) }
        return changed != 0
    }

    /// Closes the database now rather than when the last reference goes; later use throws
    /// `DatabaseClosedError`. On a writer's view this closes the writer too.
    public func close() throws(XapianError) {
        _ = try xapianCall { mo_xapian_db_close(handle.raw, $0) }
    }

    /// The number of documents.
    public var documentCount: Int {
        get throws(XapianError) {
            var count: UInt32 = 0
            _ = try xapianCall { mo_xapian_db_doccount(handle.raw, &count, $0) }
            return Int(count)
        }
    }

    /// The highest document id used so far (0 if none).
    public var lastDocumentID: XapianDocumentID {
        get throws(XapianError) {
            var id: UInt32 = 0
            _ = try xapianCall { mo_xapian_db_lastdocid(handle.raw, &id, $0) }
            return id
        }
    }

    /// Whether any document has `term`.
    public func termExists(_ term: some XapianBytes) throws(XapianError) -> Bool {
        var exists: Int32 = 0
        _ = try xapianCall { err in term.withXapianBytes { mo_xapian_db_term_exists(handle.raw, $0, $1, &exists, err) } }
        return exists != 0
    }

    /// The number of documents that have `term`.
    public func termFrequency(_ term: some XapianBytes) throws(XapianError) -> Int {
        var freq: UInt32 = 0
        _ = try xapianCall { err in term.withXapianBytes { mo_xapian_db_termfreq(handle.raw, $0, $1, &freq, err) } }
        return Int(freq)
    }

    /// The metadata stored under `key` (empty if none). An empty key throws.
    public func metadata(_ key: some XapianBytes) throws(XapianError) -> [UInt8] {
        try xapianBytesCall { out, count, err in
            key.withXapianBytes { mo_xapian_db_get_metadata(handle.raw, $0, $1, out, count, err) }
        }
    }

    /// The document with `id`; throws `DocNotFoundError` if there is none. Its contents are read when asked
    /// for; the document keeps this database open.
    public func document(_ id: XapianDocumentID) throws(XapianError) -> XapianDocument {
        let raw = try xapianCreate { mo_xapian_db_get_document(handle.raw, id, $0) }
        return XapianDocument(raw: raw, database: handle)
    }

    /// The document that has `uniqueTerm`, nil if none (if several have it, the one with the lowest id, as
    /// `WritableXapianDatabase.replaceDocument(uniqueTerm:with:)` replaces). One posting-list lookup, no search.
    public func document(uniqueTerm: some XapianBytes) throws(XapianError) -> XapianDocument? {
        var id: UInt32 = 0
        _ = try xapianCall { err in
            uniqueTerm.withXapianBytes { mo_xapian_db_first_document_with_term(handle.raw, $0, $1, &id, err) }
        }
        return id == 0 ? nil : try document(id)
    }

    /// Every term in the database that starts with `prefix`, in byte order, with the number of documents
    /// that have it.
    public func allTerms(withPrefix prefix: some XapianBytes) throws(XapianError) -> [(term: [UInt8], frequency: Int)] {
        let list = try xapianCreate { err in prefix.withXapianBytes { mo_xapian_db_allterms(handle.raw, $0, $1, err) } }
        return try collectTerms(list).map { ($0.term, $0.count) }
    }

    /// Runs `query` and returns the matches ranked `offset ..< offset + limit` in `sort` order. The match
    /// counts of the result are exact when `checkAtLeast` is at least the document count, else estimates.
    public func search(
        _ query: XapianQuery, sort: XapianSort = .relevance, offset: Int = 0, limit: Int,
        checkAtLeast: Int = 0
    ) throws(XapianError) -> XapianMatchSet {
        try withMatches(query, sort: sort, offset: offset, limit: limit, checkAtLeast: checkAtLeast) { mset throws(XapianError) in
            var size: UInt32 = 0, estimated: UInt32 = 0, lower: UInt32 = 0, upper: UInt32 = 0
            _ = try xapianCall { mo_xapian_mset_counts(mset, &size, &estimated, &lower, &upper, $0) }
            var matches: [XapianMatch] = []
            matches.reserveCapacity(Int(size))
            for index in 0..<size {
                var id: UInt32 = 0
                var weight: Double = 0
                _ = try xapianCall { mo_xapian_mset_item(mset, index, &id, &weight, $0) }
                matches.append(XapianMatch(documentID: id, weight: weight, rank: max(0, offset) + Int(index)))
            }
            return XapianMatchSet(
                matches: matches, estimatedCount: Int(estimated), lowerBound: Int(lower),
                upperBound: Int(upper))
        }
    }

    /// Runs `query` sorted by `sort` and hands the MSet of ranks `offset ..< offset + limit` to `body`
    /// (valid only during the call).
    func withMatches<R>(
        _ query: XapianQuery, sort: XapianSort, offset: Int, limit: Int, checkAtLeast: Int,
        _ body: (OpaquePointer) throws(XapianError) -> R
    ) throws(XapianError) -> R {
        let enquire = try xapianCreate { mo_xapian_enquire_new(handle.raw, $0) }
        defer { mo_xapian_enquire_free(enquire) }
        _ = try xapianCall { mo_xapian_enquire_set_query(enquire, query.raw, $0) }
        switch sort {
        case .relevance:
            _ = try xapianCall { mo_xapian_enquire_sort_by_relevance(enquire, $0) }
        case .value(let slot, let descending):
            _ = try xapianCall { mo_xapian_enquire_sort_by_value(enquire, slot, descending ? 1 : 0, $0) }
        }
        let mset = try xapianCreate {
            mo_xapian_enquire_get_mset(
                enquire, UInt32(clamping: offset), UInt32(clamping: limit),
                UInt32(clamping: checkAtLeast), $0)
        }
        defer { mo_xapian_mset_free(mset) }
        return try body(mset)
    }
}

/// A Xapian database opened for writing. Only one writer may hold a database: opening a second one throws a
/// `.busy` error (`DatabaseLockError`) until the first is closed or released. Changes become visible to
/// readers when committed (`commit()`, or the end of a transaction); releasing or closing the writer commits
/// what is pending outside a transaction.
///
/// Not thread-safe: use each instance from one thread at a time.
public final class WritableXapianDatabase {
    /// How `init(path:mode:)` treats an existing or missing database.
    public enum OpenMode: Sendable {
        /// Open it, creating it if missing.
        case createOrOpen
        /// Create it; fail if it exists.
        case create
        /// Open it; fail if missing.
        case open
        /// Create it, replacing any existing one.
        case createOrOverwrite

        var raw: Int32 {
            switch self {
            case .createOrOpen: Int32(MO_XAPIAN_DB_CREATE_OR_OPEN)
            case .create: Int32(MO_XAPIAN_DB_CREATE)
            case .open: Int32(MO_XAPIAN_DB_OPEN)
            case .createOrOverwrite: Int32(MO_XAPIAN_DB_CREATE_OR_OVERWRITE)
            }
        }
    }

    let handle: XapianDatabaseHandle

    /// Opens the database at `path` for writing (the directory is created if needed and `mode` allows).
    /// `durable: false` skips fsync on commit: for scratch databases that are synced another way or thrown
    /// away after a crash.
    ///
    /// Xapian's lock is an OFD lock on a close-on-exec descriptor, so a child that any thread of this process
    /// forks holds a copy of the lock until it execs. A writer opened just after another was closed may meet
    /// that copy; so "busy" is retried for up to a second before it is thrown.
    public init(path: String, mode: OpenMode = .createOrOpen, durable: Bool = true) throws(XapianError) {
        let flags = mode.raw | (durable ? 0 : Int32(MO_XAPIAN_DB_NO_SYNC))
        var waits = 0
        while true {
            do {
                let raw = try xapianCreate { err in
                    path.withXapianBytes { mo_xapian_db_open_writable($0, $1, flags, err) }
                }
                handle = XapianDatabaseHandle(raw)
                return
            } catch  where error.kind == .busy && waits < 20 {
                waits += 1
                usleep(50_000)
            }
        }
    }

    /// Reads and searches on this database, seeing its uncommitted changes too. The view shares the writer:
    /// while it is alive the database stays open (and locked).
    public var reader: XapianDatabase { XapianDatabase(handle: handle) }

    /// Commits what is pending (if not inside a transaction) and closes the database, releasing its lock;
    /// later use throws `DatabaseClosedError`.
    public func close() throws(XapianError) {
        _ = try xapianCall { mo_xapian_db_close(handle.raw, $0) }
    }

    /// Makes the changes so far durable and visible to readers. Not allowed inside a transaction.
    public func commit() throws(XapianError) {
        _ = try xapianCall { mo_xapian_db_commit(handle.raw, $0) }
    }

    /// Starts a transaction: its changes are all kept or all dropped. `flushed` (the usual choice) commits
    /// pending changes first and makes `commitTransaction()` commit the transaction's.
    public func beginTransaction(flushed: Bool = true) throws(XapianError) {
        _ = try xapianCall { mo_xapian_db_begin_transaction(handle.raw, flushed ? 1 : 0, $0) }
    }

    /// Ends the current transaction, keeping its changes.
    public func commitTransaction() throws(XapianError) {
        _ = try xapianCall { mo_xapian_db_commit_transaction(handle.raw, $0) }
    }

    /// Ends the current transaction, dropping its changes.
    public func cancelTransaction() throws(XapianError) {
        _ = try xapianCall { mo_xapian_db_cancel_transaction(handle.raw, $0) }
    }

    /// Runs `body` in a transaction: committed if it returns, cancelled if it throws (its error is rethrown;
    /// an error from cancelling is dropped in its favour).
    public func withTransaction<R>(flushed: Bool = true, _ body: () throws -> R) throws -> R {
        try beginTransaction(flushed: flushed)
        let result: R
        do {
            result = try body()
        } catch {
            try? cancelTransaction()
            throw error
        }
        try commitTransaction()
        return result
    }

    /// Adds `document` and returns its new id.
    @discardableResult
    public func addDocument(_ document: XapianDocument) throws(XapianError) -> XapianDocumentID {
        var id: UInt32 = 0
        _ = try xapianCall { mo_xapian_db_add_document(handle.raw, document.raw, &id, $0) }
        return id
    }

    /// Replaces the document that has `uniqueTerm` with `document`, or adds it if there is none, and returns
    /// the id used. `document` should contain `uniqueTerm` itself, or it cannot be found this way again.
    @discardableResult
    public func replaceDocument(uniqueTerm: some XapianBytes, with document: XapianDocument) throws(XapianError)
        -> XapianDocumentID
    {
        var id: UInt32 = 0
        _ = try xapianCall { err in
            uniqueTerm.withXapianBytes {
                mo_xapian_db_replace_document_by_term(handle.raw, $0, $1, document.raw, &id, err)
            }
        }
        return id
    }

    /// Deletes every document that has `uniqueTerm` (none is fine).
    public func deleteDocuments(uniqueTerm: some XapianBytes) throws(XapianError) {
        _ = try xapianCall { err in
            uniqueTerm.withXapianBytes { mo_xapian_db_delete_document_by_term(handle.raw, $0, $1, err) }
        }
    }

    /// Deletes the document with `id`; throws `DocNotFoundError` if there is none.
    public func deleteDocument(_ id: XapianDocumentID) throws(XapianError) {
        _ = try xapianCall { mo_xapian_db_delete_document(handle.raw, id, $0) }
    }

    /// Stores `value` under `key` (an empty value deletes it); committed with the other changes.
    public func setMetadata(_ key: some XapianBytes, _ value: some XapianBytes) throws(XapianError) {
        _ = try xapianCall { err in
            key.withXapianBytes { k, kn in
                value.withXapianBytes { v, vn in mo_xapian_db_set_metadata(handle.raw, k, kn, v, vn, err) }
            }
        }
    }
}

/// Compacts the committed state of the databases at `sources` into a new database at `destination` (which
/// must not exist): blocks packed full, document ids renumbered in source order, metadata from the first
/// source having each key. The sources are only read. The result is not fsynced.
public func xapianCompact(_ sources: [String], into destination: String) throws(XapianError) {
    _ = try xapianCall { err in
        withXapianByteArrays(sources) { p, l in
            destination.withXapianBytes { d, dn in mo_xapian_compact(p, l, sources.count, d, dn, err) }
        }
    }
}
