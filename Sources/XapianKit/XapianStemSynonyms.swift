import CXapian

/// Stemming through the synonym table instead of "Z" terms (see `mo_xapian_stem_synonyms` in CXapian.h):
/// for every word term with one of `prefixes`, the entry "Z" + prefix + stem -> the term. A
/// `XapianQueryParser` with the same language and `.autoSynonyms` then matches what Z terms would have
/// matched, while documents carry each word once. Not thread-safe.
public final class XapianStemSynonyms {
    private let raw: OpaquePointer

    /// An unknown language throws.
    public init(stemmingLanguage: String, prefixes: [String]) throws(XapianError) {
        raw = try xapianCreate { err in
            withXapianByteArrays(prefixes) { p, l in
                stemmingLanguage.withXapianBytes { s, sn in mo_xapian_stem_synonyms_new(s, sn, p, l, prefixes.count, err) }
            }
        }
    }

    deinit { mo_xapian_stem_synonyms_free(raw) }

    /// Collects the words of a new document (words already collected here are skipped cheaply).
    public func add(_ document: XapianDocument) throws(XapianError) {
        _ = try xapianCall { mo_xapian_stem_synonyms_add_document(raw, document.raw, $0) }
    }

    /// Collects every word in `database` (its uncommitted changes included).
    public func addAllWords(of database: WritableXapianDatabase) throws(XapianError) {
        _ = try xapianCall { mo_xapian_stem_synonyms_add_database(raw, database.handle.raw, $0) }
    }

    /// Adds what was collected to `database`, to be committed with its next commit.
    public func write(to database: WritableXapianDatabase) throws(XapianError) {
        _ = try xapianCall { mo_xapian_stem_synonyms_write(raw, database.handle.raw, $0) }
    }
}
