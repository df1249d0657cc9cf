import CXapian

/// A Xapian document: terms (what it is found by), values in numbered slots (what it is sorted and
/// range-searched by), and a data blob (what is shown). A new one is filled in and handed to
/// `WritableXapianDatabase`; one read from a database loads its parts when asked (which can throw).
///
/// Not thread-safe.
public final class XapianDocument {
    let raw: OpaquePointer
    /// The database a read document comes from, kept open while the document may still load from it.
    private let database: XapianDatabaseHandle?

    /// A new empty document.
    public init() {
        raw = xapianMustCreate("document") { mo_xapian_document_new($0) }
        database = nil
    }

    init(raw: OpaquePointer, database: XapianDatabaseHandle) {
        self.raw = raw
        self.database = database
    }

    deinit { mo_xapian_document_free(raw) }

    /// The id in the database this document was read from; 0 for a new document.
    public var id: XapianDocumentID {
        get throws(XapianError) {
            var id: UInt32 = 0
            _ = try xapianCall { mo_xapian_document_get_docid(raw, &id, $0) }
            return id
        }
    }

    /// The data blob.
    public func data() throws(XapianError) -> [UInt8] {
        try xapianBytesCall { mo_xapian_document_get_data(raw, $0, $1, $2) }
    }

    /// Replaces the data blob.
    public func setData(_ data: some XapianBytes) throws(XapianError) {
        _ = try xapianCall { err in data.withXapianBytes { mo_xapian_document_set_data(raw, $0, $1, err) } }
    }

    /// Adds `term`, increasing its within-document frequency by `wdf`. Terms must not be empty, and a term
    /// over 245 bytes is refused when the document is added to a database.
    public func addTerm(_ term: some XapianBytes, wdf: UInt32 = 1) throws(XapianError) {
        _ = try xapianCall { err in term.withXapianBytes { mo_xapian_document_add_term(raw, $0, $1, wdf, err) } }
    }

    /// Adds `term` without weight: it filters (tags, folders, ids) but does not change relevance.
    public func addBooleanTerm(_ term: some XapianBytes) throws(XapianError) {
        _ = try xapianCall { err in term.withXapianBytes { mo_xapian_document_add_boolean_term(raw, $0, $1, err) } }
    }

    /// Adds an occurrence of `term` at `position` (phrase searches need positions) and increases its wdf.
    public func addPosting(_ term: some XapianBytes, position: UInt32, wdf: UInt32 = 1) throws(XapianError) {
        _ = try xapianCall { err in
            term.withXapianBytes { mo_xapian_document_add_posting(raw, $0, $1, position, wdf, err) }
        }
    }

    /// Removes `term`; throws `InvalidArgumentError` if the document does not have it.
    public func removeTerm(_ term: some XapianBytes) throws(XapianError) {
        _ = try xapianCall { err in term.withXapianBytes { mo_xapian_document_remove_term(raw, $0, $1, err) } }
    }

    /// Sets value slot `slot`; an empty value clears it. Use `XapianValue.sortable(_:)` for numbers.
    public func setValue(_ value: some XapianBytes, slot: UInt32) throws(XapianError) {
        _ = try xapianCall { err in value.withXapianBytes { mo_xapian_document_add_value(raw, slot, $0, $1, err) } }
    }

    /// The value in `slot` (empty if unset).
    public func value(slot: UInt32) throws(XapianError) -> [UInt8] {
        try xapianBytesCall { mo_xapian_document_get_value(raw, slot, $0, $1, $2) }
    }

    /// The document's terms that start with `prefix`, in byte order.
    public func terms(withPrefix prefix: some XapianBytes) throws(XapianError) -> [[UInt8]] {
        let list = try xapianCreate { err in
            prefix.withXapianBytes { mo_xapian_document_termlist(raw, $0, $1, err) }
        }
        return try collectTerms(list).map(\.term)
    }

    /// All the document's terms, in byte order.
    public func terms() throws(XapianError) -> [[UInt8]] {
        try terms(withPrefix: [UInt8]())
    }
}

/// Splits free text into words and adds them as terms (lowercased, with an optional field prefix, and with
/// positions for phrase search) to the current document.
///
/// Not thread-safe.
public final class XapianTermGenerator {
    private let raw: OpaquePointer
    /// Kept so the document outlives its use here (the C side shares it too).
    public private(set) var document: XapianDocument?

    /// With a `stemmingLanguage` ("english", "en", "german", ...), stemmed forms are added too, as "Z"-prefixed
    /// terms that a `XapianQueryParser` with the same language matches. An unknown language throws.
    /// (mo-index adds none: it stems through the synonym table, `XapianStemSynonyms`.)
    public init(stemmingLanguage: String? = nil) throws(XapianError) {
        let language = stemmingLanguage ?? ""
        raw = try xapianCreate { err in language.withXapianBytes { mo_xapian_termgen_new($0, $1, err) } }
    }

    deinit { mo_xapian_termgen_free(raw) }

    /// Makes `document` the one that `indexText` adds to, with positions starting again at 0.
    public func setDocument(_ document: XapianDocument) throws(XapianError) {
        _ = try xapianCall { mo_xapian_termgen_set_document(raw, document.raw, $0) }
        self.document = document
    }

    /// Indexes `text` (UTF-8) into the current document: each word as `prefix` + lowercased word, its wdf
    /// increased by `wdfIncrement`; with `positions`, at positions following the previous text's.
    public func indexText(
        _ text: some XapianBytes, prefix: String = "", wdfIncrement: UInt32 = 1, positions: Bool = true
    ) throws(XapianError) {
        _ = try xapianCall { err in
            text.withXapianBytes { t, tn in
                prefix.withXapianBytes { p, pn in
                    mo_xapian_termgen_index_text(raw, t, tn, wdfIncrement, p, pn, positions ? 1 : 0, err)
                }
            }
        }
    }

    /// Leaves a gap of `delta` positions, so that no phrase matches across two indexed pieces of text.
    public func increaseTermPosition(by delta: UInt32 = 100) throws(XapianError) {
        _ = try xapianCall { mo_xapian_termgen_increase_termpos(raw, delta, $0) }
    }
}
