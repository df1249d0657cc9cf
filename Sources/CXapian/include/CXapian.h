// A plain C API over Xapian 1.4 (libxapian), for Swift. Swift's C++ interop cannot be used with xapian.h
// (a Xapian exception aborts the process), so every C++ call happens behind these functions, and every
// exception is caught in them and turned into an error value.
//
// Conventions (they hold for every function below unless its comment says otherwise):
//
// * Errors. A function that can fail takes a last parameter `mo_xapian_error **error`. On failure it returns
//   -1 (int functions) or NULL (functions returning a handle) and, if `error` is not NULL, sets `*error` to a
//   new error that the caller frees with mo_xapian_error_free. On success `*error` is left untouched, so
//   callers may initialise it to NULL and test it afterwards. No C++ exception ever leaves a function here.
// * Byte strings. Terms, data, values, metadata, paths and query text are passed as (pointer, length) and may
//   contain any bytes, NUL included. The pointer may be NULL when the length is 0. The callee copies them.
// * Returned byte strings. A `char **out, size_t *out_len` pair receives a new malloc'd buffer of `*out_len`
//   bytes plus a terminating NUL that is not counted; the caller frees it with mo_xapian_free_string.
//   On failure nothing is allocated.
// * Handles. Every `mo_xapian_*` handle is opaque, created by a `*_new`/`*_open`/getter function and freed by
//   its `*_free` function (which accept NULL). Handles are not thread-safe: use one from one thread at a time.
//   A handle derived from another (a document read from a database, an enquire, a term list) keeps what it
//   needs alive on its own, so handles may be freed in any order; but once a database is closed or freed,
//   derived handles that still need it fail with DatabaseClosedError instead of reading.
// * Passing a NULL handle where one is required fails with InvalidArgumentError (it does not crash).
#ifndef MO_CXAPIAN_H
#define MO_CXAPIAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Errors and memory

/// An error caught in the shim. `type` is the Xapian class name ("DatabaseLockError", "QueryParserError",
/// ...), or "std::bad_alloc", "std::exception", "unknown" for non-Xapian exceptions. `message` is Xapian's
/// message, followed by " (context: ...)" and " (<strerror text>)" when Xapian gives them. Both are
/// NUL-terminated and owned by the error.
typedef struct mo_xapian_error {
    char *type;
    char *message;
} mo_xapian_error;

/// Frees an error and its strings. Accepts NULL.
void mo_xapian_error_free(mo_xapian_error *error);

/// Frees a byte string returned through a `char **out` parameter. Accepts NULL.
void mo_xapian_free_string(char *string);

/// The version of the linked libxapian, e.g. "1.4.22". Static storage: do not free.
const char *mo_xapian_version_string(void);

// MARK: - Handles

typedef struct mo_xapian_db mo_xapian_db;               // a Database, read-only or writable
typedef struct mo_xapian_document mo_xapian_document;   // a Document, new or read from a database
typedef struct mo_xapian_termgen mo_xapian_termgen;     // a TermGenerator
typedef struct mo_xapian_termlist mo_xapian_termlist;   // an iterator over terms with a given prefix
typedef struct mo_xapian_query mo_xapian_query;         // an immutable Query
typedef struct mo_xapian_qp mo_xapian_qp;               // a QueryParser
typedef struct mo_xapian_enquire mo_xapian_enquire;     // an Enquire (query + sort order on one database)
typedef struct mo_xapian_mset mo_xapian_mset;           // one page of results (an MSet)

// MARK: - Databases

/// How mo_xapian_db_open_writable treats an existing or missing database.
enum {
    MO_XAPIAN_DB_CREATE_OR_OPEN = 0,       // open it, creating it if missing
    MO_XAPIAN_DB_CREATE_OR_OVERWRITE = 1,  // create it, replacing any existing one
    MO_XAPIAN_DB_CREATE = 2,               // create it; fail if it exists
    MO_XAPIAN_DB_OPEN = 3,                 // open it; fail if missing
    MO_XAPIAN_DB_NO_SYNC = 4,              // flag ORed into a mode: commits do not fsync (scratch databases)
};

/// Opens the database at `path` read-only. A missing path fails with DatabaseNotFoundError (a subclass of
/// DatabaseOpeningError). Free with mo_xapian_db_free.
mo_xapian_db *mo_xapian_db_open(const char *path, size_t path_len, mo_xapian_error **error);

/// Opens (or creates, per `mode`) the database at `path` for writing. Only one writer may hold a database:
/// a second one fails with DatabaseLockError until the first is closed. Free with mo_xapian_db_free.
mo_xapian_db *mo_xapian_db_open_writable(const char *path, size_t path_len, int mode, mo_xapian_error **error);

/// Closes the database: releases its files and, for a writer, its lock after committing what is pending
/// (unless inside a transaction, whose changes are then lost). Further use of it, or of handles derived from
/// it, fails with DatabaseClosedError. Closing twice is harmless.
int mo_xapian_db_close(mo_xapian_db *db, mo_xapian_error **error);

/// Closes (ignoring any error) and frees the database. Accepts NULL. Closing first makes the lock release
/// deterministic even if derived handles (documents, enquires) are still alive.
void mo_xapian_db_free(mo_xapian_db *db);

/// Compacts the committed state of the databases at `sources` (`count` paths, each `lens[i]` bytes) into
/// one new database at `dest`, which must not exist yet: document ids are renumbered to follow one another
/// in source order, metadata is taken from the first source that has each key. The sources are only read,
/// so readers and a writer holding them are unaffected. The result is not fsynced.
int mo_xapian_compact(const char *const *sources, const size_t *lens, size_t count, const char *dest,
                      size_t dest_len, mo_xapian_error **error);

/// Makes a reader see the latest committed revision; `*changed` (may be NULL) is 1 if it moved, else 0.
/// A reader must do this after DatabaseModifiedError. For a writer it does nothing.
int mo_xapian_db_reopen(mo_xapian_db *db, int *changed, mo_xapian_error **error);

/// The number of documents.
int mo_xapian_db_doccount(mo_xapian_db *db, uint32_t *count, mo_xapian_error **error);

/// The highest document id ever used (0 for a fresh database).
int mo_xapian_db_lastdocid(mo_xapian_db *db, uint32_t *docid, mo_xapian_error **error);

/// `*exists` is 1 if any document has `term`, else 0.
int mo_xapian_db_term_exists(mo_xapian_db *db, const char *term, size_t term_len, int *exists,
                             mo_xapian_error **error);

/// `*docid` is the lowest id of a document that has `term` (the one `replace_document_by_term` replaces), 0 if
/// none: one posting-list lookup, no Enquire.
int mo_xapian_db_first_document_with_term(mo_xapian_db *db, const char *term, size_t term_len, uint32_t *docid,
                                          mo_xapian_error **error);

/// `*freq` is the number of documents that have `term`.
int mo_xapian_db_termfreq(mo_xapian_db *db, const char *term, size_t term_len, uint32_t *freq,
                          mo_xapian_error **error);

/// The metadata value for `key` (empty if unset). An empty key fails with InvalidArgumentError.
int mo_xapian_db_get_metadata(mo_xapian_db *db, const char *key, size_t key_len, char **value,
                              size_t *value_len, mo_xapian_error **error);

/// The document with id `docid`; DocNotFoundError if there is none. Its contents are read lazily, so reading
/// them later can fail (e.g. DatabaseModifiedError). Free with mo_xapian_document_free.
mo_xapian_document *mo_xapian_db_get_document(mo_xapian_db *db, uint32_t docid, mo_xapian_error **error);

/// Iterates over every term in the database that starts with `prefix` (all terms if it is empty), in byte
/// order; mo_xapian_termlist_next reports each term's frequency. Free with mo_xapian_termlist_free.
mo_xapian_termlist *mo_xapian_db_allterms(mo_xapian_db *db, const char *prefix, size_t prefix_len,
                                          mo_xapian_error **error);

// MARK: - Writing (these fail with InvalidOperationError on a read-only database)

/// Sets metadata `key` to `value`; an empty value deletes it. Takes effect with the next commit.
int mo_xapian_db_set_metadata(mo_xapian_db *db, const char *key, size_t key_len, const char *value,
                              size_t value_len, mo_xapian_error **error);

/// Starts a transaction. `flushed` != 0: the changes pending before it are committed first, and the
/// transaction's changes are committed by mo_xapian_db_commit_transaction (the usual choice).
int mo_xapian_db_begin_transaction(mo_xapian_db *db, int flushed, mo_xapian_error **error);

/// Ends the current transaction, keeping its changes.
int mo_xapian_db_commit_transaction(mo_xapian_db *db, mo_xapian_error **error);

/// Ends the current transaction, discarding its changes.
int mo_xapian_db_cancel_transaction(mo_xapian_db *db, mo_xapian_error **error);

/// Commits pending changes (outside a transaction) so that readers can see them.
int mo_xapian_db_commit(mo_xapian_db *db, mo_xapian_error **error);

/// Adds `doc` as a new document; `*docid` (may be NULL) receives its id.
int mo_xapian_db_add_document(mo_xapian_db *db, const mo_xapian_document *doc, uint32_t *docid,
                              mo_xapian_error **error);

/// Replaces the document indexed by `unique_term` with `doc`, or adds `doc` if none has it; `*docid` (may be
/// NULL) receives the id used. If several documents have the term, the first is replaced and the others
/// deleted. `doc` should itself contain `unique_term`, or it cannot be found again this way.
int mo_xapian_db_replace_document_by_term(mo_xapian_db *db, const char *unique_term, size_t term_len,
                                          const mo_xapian_document *doc, uint32_t *docid,
                                          mo_xapian_error **error);

/// Deletes every document that has `unique_term` (none is not an error).
int mo_xapian_db_delete_document_by_term(mo_xapian_db *db, const char *unique_term, size_t term_len,
                                         mo_xapian_error **error);

/// Deletes the document with id `docid`; DocNotFoundError if there is none.
int mo_xapian_db_delete_document(mo_xapian_db *db, uint32_t docid, mo_xapian_error **error);

// MARK: - Documents

/// A new empty document. Free with mo_xapian_document_free.
mo_xapian_document *mo_xapian_document_new(mo_xapian_error **error);

/// Frees a document handle. Accepts NULL.
void mo_xapian_document_free(mo_xapian_document *doc);

/// The document's id in the database it was read from, or 0 for a new document.
int mo_xapian_document_get_docid(const mo_xapian_document *doc, uint32_t *docid, mo_xapian_error **error);

/// The document's data blob.
int mo_xapian_document_get_data(const mo_xapian_document *doc, char **data, size_t *data_len,
                                mo_xapian_error **error);

/// Replaces the document's data blob.
int mo_xapian_document_set_data(mo_xapian_document *doc, const char *data, size_t data_len,
                                mo_xapian_error **error);

/// Adds `term` with within-document frequency `wdf` (added to the term's existing wdf). Terms must not be
/// empty; adding a term longer than 245 bytes to a database fails there with InvalidArgumentError.
int mo_xapian_document_add_term(mo_xapian_document *doc, const char *term, size_t term_len, uint32_t wdf,
                                mo_xapian_error **error);

/// Adds `term` with wdf 0, so it filters without affecting relevance (tags, folders, ids).
int mo_xapian_document_add_boolean_term(mo_xapian_document *doc, const char *term, size_t term_len,
                                        mo_xapian_error **error);

/// Adds an occurrence of `term` at `position` (positions make phrase searches work) and adds `wdf`.
int mo_xapian_document_add_posting(mo_xapian_document *doc, const char *term, size_t term_len,
                                   uint32_t position, uint32_t wdf, mo_xapian_error **error);

/// Removes `term` and its positions; InvalidArgumentError if the document does not have it.
int mo_xapian_document_remove_term(mo_xapian_document *doc, const char *term, size_t term_len,
                                   mo_xapian_error **error);

/// Sets value slot `slot` (an empty value removes it). Values are what sorting and range queries use.
int mo_xapian_document_add_value(mo_xapian_document *doc, uint32_t slot, const char *value, size_t value_len,
                                 mo_xapian_error **error);

/// The value in `slot` (empty if unset).
int mo_xapian_document_get_value(const mo_xapian_document *doc, uint32_t slot, char **value,
                                 size_t *value_len, mo_xapian_error **error);

/// Iterates over the document's terms that start with `prefix` (all if empty), in byte order;
/// mo_xapian_termlist_next reports each term's wdf. Free with mo_xapian_termlist_free.
mo_xapian_termlist *mo_xapian_document_termlist(const mo_xapian_document *doc, const char *prefix,
                                                size_t prefix_len, mo_xapian_error **error);

// MARK: - Term lists

/// Moves to the next term. Returns 1 and sets `*term`/`*term_len` (a new string, see the conventions) and
/// `*count` (may be NULL: wdf for a document's terms, term frequency for a database's) when there is one,
/// 0 at the end (nothing allocated), -1 on failure.
int mo_xapian_termlist_next(mo_xapian_termlist *list, char **term, size_t *term_len, uint32_t *count,
                            mo_xapian_error **error);

/// Frees a term list. Accepts NULL.
void mo_xapian_termlist_free(mo_xapian_termlist *list);

// MARK: - Indexing free text

/// A term generator that splits text into words, lowercases them and adds them to a document. With a
/// non-empty `stem_language` (a Snowball name or ISO code: "english", "en", "german", ... or "none") it also
/// adds stemmed forms as "Z"-prefixed terms (Xapian's STEM_SOME), which a query parser with the same stemmer
/// matches; an unknown language fails with InvalidArgumentError. Free with mo_xapian_termgen_free.
mo_xapian_termgen *mo_xapian_termgen_new(const char *stem_language, size_t language_len,
                                         mo_xapian_error **error);

/// Frees a term generator. Accepts NULL.
void mo_xapian_termgen_free(mo_xapian_termgen *tg);

// MARK: - Stem synonyms

/// Stemming at query time instead of "Z" terms at index time: for each word term ("" body, "S" subject, ...:
/// the `prefixes` given) whose word a STEM_SOME term generator would stem, the synonym entry
/// "Z" + prefix + stem(word) -> prefix + word. A query parser with the same stemmer, STEM_SOME and
/// MO_XAPIAN_QP_FLAG_AUTO_SYNONYMS looks up exactly that key for each word and searches the Z term (absent)
/// together with its synonyms, so it matches the documents the Z term would have matched. Terms are
/// collected (add_document, add_database) and written in key order by write. Not thread-safe.
typedef struct mo_xapian_stem_synonyms mo_xapian_stem_synonyms;

/// A collector stemming with `stem_language` (as mo_xapian_termgen_new) for terms with one of the `count`
/// prefixes. Free with mo_xapian_stem_synonyms_free.
mo_xapian_stem_synonyms *mo_xapian_stem_synonyms_new(const char *stem_language, size_t language_len,
                                                     const char *const *prefixes, const size_t *prefix_lens,
                                                     size_t count, mo_xapian_error **error);

/// Frees a collector. Accepts NULL.
void mo_xapian_stem_synonyms_free(mo_xapian_stem_synonyms *syn);

/// Collects the word terms of `doc` (terms collected since the last write are skipped).
int mo_xapian_stem_synonyms_add_document(mo_xapian_stem_synonyms *syn, const mo_xapian_document *doc,
                                         mo_xapian_error **error);

/// Collects every word term of `db`.
int mo_xapian_stem_synonyms_add_database(mo_xapian_stem_synonyms *syn, mo_xapian_db *db, mo_xapian_error **error);

/// Adds the collected entries to writable `db` (visible after its next commit) and forgets them (and which
/// terms were collected).
int mo_xapian_stem_synonyms_write(mo_xapian_stem_synonyms *syn, mo_xapian_db *db, mo_xapian_error **error);

/// Sets the document that indexing adds terms to, and restarts term positions at 0. The generator shares
/// the document (changes show through `doc`) and keeps it alive; `doc` may be freed afterwards.
int mo_xapian_termgen_set_document(mo_xapian_termgen *tg, mo_xapian_document *doc, mo_xapian_error **error);

/// Indexes `text` (UTF-8; invalid sequences are treated as Latin-1 by Xapian) into the current document:
/// each word becomes `prefix` + lowercased word, wdf increased by `wdf_inc`. With `with_positions` != 0 the
/// words also get positions, which phrase and NEAR queries need. Positions continue from the previous call.
int mo_xapian_termgen_index_text(mo_xapian_termgen *tg, const char *text, size_t text_len, uint32_t wdf_inc,
                                 const char *prefix, size_t prefix_len, int with_positions,
                                 mo_xapian_error **error);

/// Advances the term position by `delta`, so a phrase cannot match across two indexed pieces of text.
int mo_xapian_termgen_increase_termpos(mo_xapian_termgen *tg, uint32_t delta, mo_xapian_error **error);

// MARK: - Values for numbers

/// Encodes `value` so that byte order equals numeric order (Xapian::sortable_serialise), for value slots that
/// are sorted or searched with a number range. Writes at most 9 bytes to `buf` and returns how many.
size_t mo_xapian_sortable_serialise(double value, char buf[16]);

/// Decodes what mo_xapian_sortable_serialise wrote. Bytes that are not such an encoding give some number
/// (never an error).
double mo_xapian_sortable_unserialise(const char *bytes, size_t len);

// MARK: - Queries

/// Query operators (the values of Xapian::Query::op).
enum {
    MO_XAPIAN_OP_AND = 0,
    MO_XAPIAN_OP_OR = 1,
    MO_XAPIAN_OP_AND_NOT = 2,
    MO_XAPIAN_OP_XOR = 3,
    MO_XAPIAN_OP_AND_MAYBE = 4,
    MO_XAPIAN_OP_FILTER = 5,
    MO_XAPIAN_OP_NEAR = 6,
    MO_XAPIAN_OP_PHRASE = 7,
};

/// A query for documents containing `term`, with query frequency `wqf` (usually 1).
/// Free with mo_xapian_query_free.
mo_xapian_query *mo_xapian_query_new_term(const char *term, size_t term_len, uint32_t wqf,
                                          mo_xapian_error **error);

/// A query matching every document.
mo_xapian_query *mo_xapian_query_new_match_all(mo_xapian_error **error);

/// A query matching no document.
mo_xapian_query *mo_xapian_query_new_match_nothing(mo_xapian_error **error);

/// Combines `count` subqueries with `op` (an MO_XAPIAN_OP_*). The subqueries are copied (queries are
/// immutable and shared), so they stay owned by the caller. An empty list gives a query matching nothing.
mo_xapian_query *mo_xapian_query_new_combine(int op, const mo_xapian_query *const *subqueries, size_t count,
                                             mo_xapian_error **error);

/// Documents whose value in `slot` is within [low, high], compared bytewise.
mo_xapian_query *mo_xapian_query_new_value_range(uint32_t slot, const char *low, size_t low_len,
                                                 const char *high, size_t high_len, mo_xapian_error **error);

/// A readable rendering of the query, e.g. "Query((hello@1 AND world@2))", for logs and tests.
int mo_xapian_query_description(const mo_xapian_query *query, char **text, size_t *text_len,
                                mo_xapian_error **error);

/// Frees a query. Accepts NULL.
void mo_xapian_query_free(mo_xapian_query *query);

// MARK: - Query parser

/// Query parser flags (the values of Xapian::QueryParser::feature_flag).
enum {
    MO_XAPIAN_QP_FLAG_BOOLEAN = 1,            // AND, OR, NOT, XOR, brackets
    MO_XAPIAN_QP_FLAG_PHRASE = 2,             // "quoted phrases"
    MO_XAPIAN_QP_FLAG_LOVEHATE = 4,           // +required -excluded
    MO_XAPIAN_QP_FLAG_BOOLEAN_ANY_CASE = 8,   // and, or, not as operators too
    MO_XAPIAN_QP_FLAG_WILDCARD = 16,          // trailing * (expanded when the query runs)
    MO_XAPIAN_QP_FLAG_PURE_NOT = 32,          // a query may be just NOT x
    MO_XAPIAN_QP_FLAG_PARTIAL = 64,           // the last word is a prefix (search as you type)
    MO_XAPIAN_QP_FLAG_AUTO_SYNONYMS = 512,    // each word ORed (as one term) with its synonyms in the database
    MO_XAPIAN_QP_FLAG_DEFAULT = 1 | 2 | 4,
};

/// Range processor kinds for mo_xapian_qp_add_range.
enum {
    MO_XAPIAN_RANGE_STRING = 0,  // bounds compared bytewise with the slot's value
    MO_XAPIAN_RANGE_NUMBER = 1,  // bounds are numbers; the slot holds mo_xapian_sortable_serialise values
    MO_XAPIAN_RANGE_DATE = 2,    // bounds are dates (YYYYMMDD, YYYY-MM-DD, DD/MM/YYYY ...); slot holds YYYYMMDD
};

/// Range processor flags (the values of Xapian::RP_*).
enum {
    MO_XAPIAN_RANGE_SUFFIX = 1,         // `str` is a suffix ("1..10kb"), not a prefix ("size:1..10")
    MO_XAPIAN_RANGE_REPEATED = 2,       // `str` may appear on both ends ("size:1..size:10")
    MO_XAPIAN_RANGE_PREFER_MDY = 4,     // dates: read 01/02/2024 as January 2nd
};

/// A new query parser: default operator OR, no stemming, no prefixes. Free with mo_xapian_qp_free.
mo_xapian_qp *mo_xapian_qp_new(mo_xapian_error **error);

/// Frees a query parser (and the range processors added to it). Accepts NULL.
void mo_xapian_qp_free(mo_xapian_qp *qp);

/// Sets how terms without an explicit operator combine: MO_XAPIAN_OP_AND or MO_XAPIAN_OP_OR (also NEAR,
/// PHRASE); other operators fail with InvalidArgumentError.
int mo_xapian_qp_set_default_op(mo_xapian_qp *qp, int op, mo_xapian_error **error);

/// Stems query words with `language` (empty: no stemming), matching a term generator set up the same way.
int mo_xapian_qp_set_stemmer(mo_xapian_qp *qp, const char *language, size_t language_len,
                             mo_xapian_error **error);

/// Maps the free-text field `field` ("subject" in "subject:hello") to term prefix `prefix` ("S").
/// Several prefixes for one field are ORed.
int mo_xapian_qp_add_prefix(mo_xapian_qp *qp, const char *field, size_t field_len, const char *prefix,
                            size_t prefix_len, mo_xapian_error **error);

/// Maps the boolean field `field` ("tag" in "tag:inbox") to `prefix` ("K"): its value is used as one term,
/// unsplit and not lowercased, and filters without weight. With `exclusive` != 0, several values of the field
/// are ORed ("tag:a tag:b" = either); with 0 they are ANDed.
int mo_xapian_qp_add_boolean_prefix(mo_xapian_qp *qp, const char *field, size_t field_len, const char *prefix,
                                    size_t prefix_len, int exclusive, mo_xapian_error **error);

/// Adds a range processor of `kind` (MO_XAPIAN_RANGE_*) on value `slot`, recognised by the prefix (or
/// suffix) `str` ("date:" in "date:20240101..20241231"); an empty `str` accepts any "a..b" not claimed by
/// an earlier processor. `flags` is an OR of MO_XAPIAN_RANGE_* flags. `epoch_year` is for two-digit years
/// of DATE ranges (e.g. 1970: "69" means 2069, "70" means 1970); it is ignored for other kinds.
/// Processors are tried in the order added.
int mo_xapian_qp_add_range(mo_xapian_qp *qp, int kind, uint32_t slot, const char *str, size_t str_len,
                           unsigned flags, int epoch_year, mo_xapian_error **error);

/// Parses `text` with `flags` (MO_XAPIAN_QP_FLAG_*; 0 means plain words only). Words without a field get
/// `default_prefix` (may be empty). `db` (may be NULL) is given to the parser only during this call, for the
/// features that consult a database (spelling, synonyms); Xapian 1.4 expands wildcards and partial words
/// when the query runs, so they need none. A syntax error fails with QueryParserError. An empty `text` gives
/// a query matching nothing. Free the result with mo_xapian_query_free.
mo_xapian_query *mo_xapian_qp_parse(mo_xapian_qp *qp, mo_xapian_db *db, const char *text, size_t text_len,
                                    unsigned flags, const char *default_prefix, size_t default_prefix_len,
                                    mo_xapian_error **error);

// MARK: - Searching

/// An enquire on `db`, which it keeps alive. Sorted by relevance until told otherwise.
/// Free with mo_xapian_enquire_free.
mo_xapian_enquire *mo_xapian_enquire_new(mo_xapian_db *db, mo_xapian_error **error);

/// Frees an enquire. Accepts NULL.
void mo_xapian_enquire_free(mo_xapian_enquire *enq);

/// Sets the query to run (copied; the caller keeps ownership of `query`).
int mo_xapian_enquire_set_query(mo_xapian_enquire *enq, const mo_xapian_query *query, mo_xapian_error **error);

/// Sorts by relevance, best first (the default).
int mo_xapian_enquire_sort_by_relevance(mo_xapian_enquire *enq, mo_xapian_error **error);

/// Sorts by the bytes of value `slot`, ascending, or descending if `reverse` != 0; ties in docid order.
int mo_xapian_enquire_sort_by_value(mo_xapian_enquire *enq, uint32_t slot, int reverse,
                                    mo_xapian_error **error);

/// Runs the query and returns results `first` ..< `first + max_items` of the sorted list. At least
/// `check_at_least` documents are examined, so the match counts are exact when it is >= the document count
/// (otherwise they are estimates). Without a query set, nothing matches. Free with mo_xapian_mset_free.
mo_xapian_mset *mo_xapian_enquire_get_mset(mo_xapian_enquire *enq, uint32_t first, uint32_t max_items,
                                           uint32_t check_at_least, mo_xapian_error **error);

/// Frees a result page. Accepts NULL.
void mo_xapian_mset_free(mo_xapian_mset *mset);

/// The page's size and the match counts (any pointer may be NULL): `lower` <= `estimated` <= `upper`, all
/// equal when exact.
int mo_xapian_mset_counts(const mo_xapian_mset *mset, uint32_t *size, uint32_t *estimated, uint32_t *lower,
                          uint32_t *upper, mo_xapian_error **error);

/// The docid and weight (either pointer may be NULL) of the `index`-th result of the page (0-based);
/// RangeError if `index` >= size.
int mo_xapian_mset_item(const mo_xapian_mset *mset, uint32_t index, uint32_t *docid, double *weight,
                        mo_xapian_error **error);

/// The document of the `index`-th result of the page. Free with mo_xapian_document_free.
mo_xapian_document *mo_xapian_mset_document(const mo_xapian_mset *mset, uint32_t index,
                                            mo_xapian_error **error);

// MARK: - Reading values of many documents (reader side)

/// The docids of the page, in result order, into `docids` (room for `capacity`; RangeError if the page is larger).
int mo_xapian_mset_docids(const mo_xapian_mset *mset, uint32_t *docids, size_t capacity, mo_xapian_error **error);

/// The values in `slots` of `count` documents, read from each slot's value stream (one pass per slot, far
/// cheaper than reading documents one by one). `*out` gets a table of cells = count * nslots values in
/// (document, slot) order: cells + 1 native-endian uint32 offsets, then the values' bytes; value c is
/// bytes offset[c] ..< offset[c + 1] of the part after the offsets (empty: no value or no such document).
/// Free it with mo_xapian_free_string.
int mo_xapian_db_values(mo_xapian_db *db, const uint32_t *docids, size_t count, const uint32_t *slots,
                        size_t nslots, char **out, size_t *out_len, mo_xapian_error **error);

/// For each term starting with `prefix`, in byte order, the documents among `docids` that hold it: records
/// of a native-endian uint32 term length, the term's bytes, a uint32 count and that many uint32 docids
/// (ascending); terms none of them holds are left out. Free it with mo_xapian_free_string.
int mo_xapian_db_terms_among(mo_xapian_db *db, const char *prefix, size_t prefix_len, const uint32_t *docids,
                             size_t count, char **out, size_t *out_len, mo_xapian_error **error);

/// Every value in `slot`, in docid order, as a table like mo_xapian_db_values' with one cell per document that
/// has a value; `*cells` gets their number.
int mo_xapian_db_value_stream(mo_xapian_db *db, uint32_t slot, char **out, size_t *out_len, size_t *cells,
                              mo_xapian_error **error);

#ifdef __cplusplus
}
#endif

#endif
