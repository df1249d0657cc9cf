// The C API of CXapian.h over Xapian's C++ API. Every exported function runs its body through `guard`, which
// catches everything, so no exception reaches Swift (where it would abort the process).
#include "CXapian.h"

#include <xapian.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

// The C constants are Xapian's own values, passed through unchanged.
static_assert(MO_XAPIAN_DB_CREATE_OR_OPEN == Xapian::DB_CREATE_OR_OPEN, "db mode");
static_assert(MO_XAPIAN_DB_CREATE_OR_OVERWRITE == Xapian::DB_CREATE_OR_OVERWRITE, "db mode");
static_assert(MO_XAPIAN_DB_CREATE == Xapian::DB_CREATE, "db mode");
static_assert(MO_XAPIAN_DB_OPEN == Xapian::DB_OPEN, "db mode");
static_assert(MO_XAPIAN_DB_NO_SYNC == Xapian::DB_NO_SYNC, "db flag");
static_assert(MO_XAPIAN_OP_AND == Xapian::Query::OP_AND, "op");
static_assert(MO_XAPIAN_OP_OR == Xapian::Query::OP_OR, "op");
static_assert(MO_XAPIAN_OP_AND_NOT == Xapian::Query::OP_AND_NOT, "op");
static_assert(MO_XAPIAN_OP_XOR == Xapian::Query::OP_XOR, "op");
static_assert(MO_XAPIAN_OP_AND_MAYBE == Xapian::Query::OP_AND_MAYBE, "op");
static_assert(MO_XAPIAN_OP_FILTER == Xapian::Query::OP_FILTER, "op");
static_assert(MO_XAPIAN_OP_NEAR == Xapian::Query::OP_NEAR, "op");
static_assert(MO_XAPIAN_OP_PHRASE == Xapian::Query::OP_PHRASE, "op");
static_assert(MO_XAPIAN_QP_FLAG_BOOLEAN == Xapian::QueryParser::FLAG_BOOLEAN, "qp flag");
static_assert(MO_XAPIAN_QP_FLAG_PHRASE == Xapian::QueryParser::FLAG_PHRASE, "qp flag");
static_assert(MO_XAPIAN_QP_FLAG_LOVEHATE == Xapian::QueryParser::FLAG_LOVEHATE, "qp flag");
static_assert(MO_XAPIAN_QP_FLAG_BOOLEAN_ANY_CASE == Xapian::QueryParser::FLAG_BOOLEAN_ANY_CASE, "qp flag");
static_assert(MO_XAPIAN_QP_FLAG_WILDCARD == Xapian::QueryParser::FLAG_WILDCARD, "qp flag");
static_assert(MO_XAPIAN_QP_FLAG_PURE_NOT == Xapian::QueryParser::FLAG_PURE_NOT, "qp flag");
static_assert(MO_XAPIAN_QP_FLAG_PARTIAL == Xapian::QueryParser::FLAG_PARTIAL, "qp flag");
static_assert(MO_XAPIAN_QP_FLAG_AUTO_SYNONYMS == Xapian::QueryParser::FLAG_AUTO_SYNONYMS, "qp flag");
static_assert(MO_XAPIAN_QP_FLAG_DEFAULT == Xapian::QueryParser::FLAG_DEFAULT, "qp flag");
static_assert(MO_XAPIAN_RANGE_SUFFIX == Xapian::RP_SUFFIX, "rp flag");
static_assert(MO_XAPIAN_RANGE_REPEATED == Xapian::RP_REPEATED, "rp flag");
static_assert(MO_XAPIAN_RANGE_PREFER_MDY == Xapian::RP_DATE_PREFER_MDY, "rp flag");

// MARK: - Handle types

struct mo_xapian_db {
    // `writable` tells which member is in use. Xapian objects are reference-counted handles, so copies made
    // from `database()` (by enquires, documents, parsers) share the same open database.
    bool writable = false;
    Xapian::Database reader;
    Xapian::WritableDatabase writer;

    Xapian::Database &database() { return writable ? static_cast<Xapian::Database &>(writer) : reader; }
};

struct mo_xapian_document {
    Xapian::Document doc;
};

struct mo_xapian_termgen {
    Xapian::TermGenerator tg;
};

struct mo_xapian_stem_synonyms {
    Xapian::Stem stem;
    std::vector<std::string> prefixes;
    std::vector<std::pair<std::string, std::string>> pending;  // (key, word term), written by write
    std::unordered_set<std::string> seen;                      // terms collected from documents
};

struct mo_xapian_termlist {
    // `owner` keeps the database or document the iterators walk alive for as long as they are used.
    Xapian::Database db_owner;
    Xapian::Document doc_owner;
    Xapian::TermIterator it;
    Xapian::TermIterator end;
    std::string prefix;
    bool is_document = false;
};

struct mo_xapian_query {
    Xapian::Query query;
};

struct mo_xapian_qp {
    Xapian::QueryParser qp;
};

struct mo_xapian_enquire {
    Xapian::Database db;  // kept alive for the Enquire, which holds only a reference to it
    Xapian::Enquire enquire;
    explicit mo_xapian_enquire(const Xapian::Database &d) : db(d), enquire(db) {}
};

struct mo_xapian_mset {
    Xapian::MSet mset;
};

// MARK: - Errors

namespace {

// Returned when the error itself cannot be allocated; never freed.
char kOOMType[] = "std::bad_alloc";
char kOOMMessage[] = "out of memory";
mo_xapian_error kOOMError = {kOOMType, kOOMMessage};

char *dup_cstring(const std::string &s) noexcept {
    char *p = static_cast<char *>(std::malloc(s.size() + 1));
    if (p) {
        std::memcpy(p, s.data(), s.size());
        p[s.size()] = '\0';
    }
    return p;
}

void set_error(mo_xapian_error **error, const char *type, const std::string &message) noexcept {
    if (!error) return;
    auto *e = static_cast<mo_xapian_error *>(std::malloc(sizeof(mo_xapian_error)));
    char *t = dup_cstring(type);
    char *m = dup_cstring(message);
    if (!e || !t || !m) {
        std::free(e);
        std::free(t);
        std::free(m);
        *error = &kOOMError;
        return;
    }
    e->type = t;
    e->message = m;
    *error = e;
}

// Xapian's message, then its context and system error text when present (as get_description does, but
// without the type, which goes into its own field).
std::string describe(const Xapian::Error &e) {
    std::string m = e.get_msg();
    if (!e.get_context().empty()) m += " (context: " + e.get_context() + ")";
    if (const char *s = e.get_error_string()) {
        if (*s) m += std::string(" (") + s + ")";
    }
    return m;
}

// Runs `body`, turning any exception into `*error`. Returns 0 on success, -1 on failure.
template <typename F>
int guard(mo_xapian_error **error, F &&body) noexcept {
    try {
        body();
        return 0;
    } catch (const Xapian::Error &e) {
        try {
            set_error(error, e.get_type(), describe(e));
        } catch (...) {
            set_error(error, "std::bad_alloc", "out of memory");
        }
    } catch (const std::bad_alloc &) {
        set_error(error, "std::bad_alloc", "out of memory");
    } catch (const std::exception &e) {
        set_error(error, "std::exception", e.what());
    } catch (...) {
        set_error(error, "unknown", "unknown C++ exception");
    }
    return -1;
}

// Runs `body`, which returns a new handle; NULL on failure.
template <typename T, typename F>
T *guard_new(mo_xapian_error **error, F &&body) noexcept {
    T *result = nullptr;
    guard(error, [&] { result = body(); });
    return result;
}

template <typename T>
T &need(T *handle, const char *what) {
    if (!handle) throw Xapian::InvalidArgumentError(std::string("null ") + what + " handle");
    return *handle;
}

std::string bytes(const char *p, size_t n) {
    return n ? std::string(p, n) : std::string();
}

void output(const std::string &s, char **out, size_t *out_len) {
    if (!out) return;
    char *p = dup_cstring(s);
    if (!p) throw std::bad_alloc();
    *out = p;
    if (out_len) *out_len = s.size();
}

Xapian::WritableDatabase &writer(mo_xapian_db *db) {
    auto &d = need(db, "database");
    if (!d.writable) throw Xapian::InvalidOperationError("database is opened read-only");
    return d.writer;
}

Xapian::Stem stemmer(const char *language, size_t len) {
    std::string name = bytes(language, len);
    return name.empty() ? Xapian::Stem() : Xapian::Stem(name);
}

bool has_prefix(const std::string &s, const std::string &prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
}

// Xapian's MSet::operator[] does not check its index.
Xapian::MSetIterator mset_at(const mo_xapian_mset *mset, uint32_t index) {
    auto &m = need(mset, "match set").mset;
    if (index >= m.size())
        throw Xapian::RangeError("result index " + std::to_string(index) + " out of range (size " +
                                 std::to_string(m.size()) + ")");
    return m[index];
}

}  // namespace

extern "C" {

void mo_xapian_error_free(mo_xapian_error *error) {
    if (!error || error == &kOOMError) return;
    std::free(error->type);
    std::free(error->message);
    std::free(error);
}

void mo_xapian_free_string(char *string) { std::free(string); }

const char *mo_xapian_version_string(void) { return Xapian::version_string(); }

// MARK: - Databases

mo_xapian_db *mo_xapian_db_open(const char *path, size_t path_len, mo_xapian_error **error) {
    return guard_new<mo_xapian_db>(error, [&] {
        auto db = std::make_unique<mo_xapian_db>();
        db->reader = Xapian::Database(bytes(path, path_len));
        return db.release();
    });
}

mo_xapian_db *mo_xapian_db_open_writable(const char *path, size_t path_len, int mode, mo_xapian_error **error) {
    return guard_new<mo_xapian_db>(error, [&] {
        int flags = mode & MO_XAPIAN_DB_NO_SYNC;
        mode &= ~MO_XAPIAN_DB_NO_SYNC;
        if (mode < MO_XAPIAN_DB_CREATE_OR_OPEN || mode > MO_XAPIAN_DB_OPEN)
            throw Xapian::InvalidArgumentError("unknown database open mode " + std::to_string(mode));
        auto db = std::make_unique<mo_xapian_db>();
        db->writer = Xapian::WritableDatabase(bytes(path, path_len), mode | flags);
        db->writable = true;
        return db.release();
    });
}

int mo_xapian_db_close(mo_xapian_db *db, mo_xapian_error **error) {
    return guard(error, [&] { need(db, "database").database().close(); });
}

void mo_xapian_db_free(mo_xapian_db *db) {
    if (!db) return;
    guard(nullptr, [&] { db->database().close(); });
    guard(nullptr, [&] { delete db; });
}

int mo_xapian_db_reopen(mo_xapian_db *db, int *changed, mo_xapian_error **error) {
    return guard(error, [&] {
        bool moved = need(db, "database").database().reopen();
        if (changed) *changed = moved ? 1 : 0;
    });
}

int mo_xapian_db_doccount(mo_xapian_db *db, uint32_t *count, mo_xapian_error **error) {
    return guard(error, [&] {
        auto n = need(db, "database").database().get_doccount();
        if (count) *count = n;
    });
}

int mo_xapian_db_lastdocid(mo_xapian_db *db, uint32_t *docid, mo_xapian_error **error) {
    return guard(error, [&] {
        auto n = need(db, "database").database().get_lastdocid();
        if (docid) *docid = n;
    });
}

int mo_xapian_db_term_exists(mo_xapian_db *db, const char *term, size_t term_len, int *exists,
                             mo_xapian_error **error) {
    return guard(error, [&] {
        bool found = need(db, "database").database().term_exists(bytes(term, term_len));
        if (exists) *exists = found ? 1 : 0;
    });
}

int mo_xapian_db_first_document_with_term(mo_xapian_db *db, const char *term, size_t term_len, uint32_t *docid,
                                          mo_xapian_error **error) {
    return guard(error, [&] {
        auto &d = need(db, "database").database();
        std::string t = bytes(term, term_len);
        auto it = d.postlist_begin(t);
        if (docid) *docid = it == d.postlist_end(t) ? 0 : *it;
    });
}

int mo_xapian_db_termfreq(mo_xapian_db *db, const char *term, size_t term_len, uint32_t *freq,
                          mo_xapian_error **error) {
    return guard(error, [&] {
        auto n = need(db, "database").database().get_termfreq(bytes(term, term_len));
        if (freq) *freq = n;
    });
}

int mo_xapian_db_get_metadata(mo_xapian_db *db, const char *key, size_t key_len, char **value,
                              size_t *value_len, mo_xapian_error **error) {
    return guard(error, [&] {
        output(need(db, "database").database().get_metadata(bytes(key, key_len)), value, value_len);
    });
}

mo_xapian_document *mo_xapian_db_get_document(mo_xapian_db *db, uint32_t docid, mo_xapian_error **error) {
    return guard_new<mo_xapian_document>(error, [&] {
        auto doc = std::make_unique<mo_xapian_document>();
        doc->doc = need(db, "database").database().get_document(docid);
        return doc.release();
    });
}

mo_xapian_termlist *mo_xapian_db_allterms(mo_xapian_db *db, const char *prefix, size_t prefix_len,
                                          mo_xapian_error **error) {
    return guard_new<mo_xapian_termlist>(error, [&] {
        auto list = std::make_unique<mo_xapian_termlist>();
        list->db_owner = need(db, "database").database();
        list->prefix = bytes(prefix, prefix_len);
        list->it = list->db_owner.allterms_begin(list->prefix);
        list->end = list->db_owner.allterms_end(list->prefix);
        return list.release();
    });
}

// MARK: - Writing

int mo_xapian_db_set_metadata(mo_xapian_db *db, const char *key, size_t key_len, const char *value,
                              size_t value_len, mo_xapian_error **error) {
    return guard(error, [&] { writer(db).set_metadata(bytes(key, key_len), bytes(value, value_len)); });
}

int mo_xapian_db_begin_transaction(mo_xapian_db *db, int flushed, mo_xapian_error **error) {
    return guard(error, [&] { writer(db).begin_transaction(flushed != 0); });
}

int mo_xapian_db_commit_transaction(mo_xapian_db *db, mo_xapian_error **error) {
    return guard(error, [&] { writer(db).commit_transaction(); });
}

int mo_xapian_db_cancel_transaction(mo_xapian_db *db, mo_xapian_error **error) {
    return guard(error, [&] { writer(db).cancel_transaction(); });
}

int mo_xapian_compact(const char *const *sources, const size_t *lens, size_t count, const char *dest,
                      size_t dest_len, mo_xapian_error **error) {
    return guard(error, [&] {
        if (count == 0) throw Xapian::InvalidArgumentError("no database to compact");
        Xapian::Database all;
        for (size_t i = 0; i < count; i++) all.add_database(Xapian::Database(bytes(sources[i], lens[i])));
        // FULL packs blocks (FULLER measured larger here). MULTIPASS (pairwise merges through temporary
        // databases) only for many sources, as Xapian advises: for the 4 shards of a 2-core build it took
        // 1.3-1.5 s against 1.0 s for one pass; more shards (more cores) were not measured.
        unsigned flags = Xapian::Compactor::FULL;
        if (count > 8) flags |= Xapian::DBCOMPACT_MULTIPASS;
        all.compact(bytes(dest, dest_len), flags);
    });
}

int mo_xapian_db_commit(mo_xapian_db *db, mo_xapian_error **error) {
    return guard(error, [&] { writer(db).commit(); });
}

int mo_xapian_db_add_document(mo_xapian_db *db, const mo_xapian_document *doc, uint32_t *docid,
                              mo_xapian_error **error) {
    return guard(error, [&] {
        auto id = writer(db).add_document(need(doc, "document").doc);
        if (docid) *docid = id;
    });
}

int mo_xapian_db_replace_document_by_term(mo_xapian_db *db, const char *unique_term, size_t term_len,
                                          const mo_xapian_document *doc, uint32_t *docid,
                                          mo_xapian_error **error) {
    return guard(error, [&] {
        auto id = writer(db).replace_document(bytes(unique_term, term_len), need(doc, "document").doc);
        if (docid) *docid = id;
    });
}

int mo_xapian_db_delete_document_by_term(mo_xapian_db *db, const char *unique_term, size_t term_len,
                                         mo_xapian_error **error) {
    return guard(error, [&] { writer(db).delete_document(bytes(unique_term, term_len)); });
}

int mo_xapian_db_delete_document(mo_xapian_db *db, uint32_t docid, mo_xapian_error **error) {
    return guard(error, [&] { writer(db).delete_document(docid); });
}

// MARK: - Documents

mo_xapian_document *mo_xapian_document_new(mo_xapian_error **error) {
    return guard_new<mo_xapian_document>(error, [] { return new mo_xapian_document(); });
}

void mo_xapian_document_free(mo_xapian_document *doc) {
    guard(nullptr, [&] { delete doc; });
}

int mo_xapian_document_get_docid(const mo_xapian_document *doc, uint32_t *docid, mo_xapian_error **error) {
    return guard(error, [&] {
        auto id = need(doc, "document").doc.get_docid();
        if (docid) *docid = id;
    });
}

int mo_xapian_document_get_data(const mo_xapian_document *doc, char **data, size_t *data_len,
                                mo_xapian_error **error) {
    return guard(error, [&] { output(need(doc, "document").doc.get_data(), data, data_len); });
}

int mo_xapian_document_set_data(mo_xapian_document *doc, const char *data, size_t data_len,
                                mo_xapian_error **error) {
    return guard(error, [&] { need(doc, "document").doc.set_data(bytes(data, data_len)); });
}

int mo_xapian_document_add_term(mo_xapian_document *doc, const char *term, size_t term_len, uint32_t wdf,
                                mo_xapian_error **error) {
    return guard(error, [&] { need(doc, "document").doc.add_term(bytes(term, term_len), wdf); });
}

int mo_xapian_document_add_boolean_term(mo_xapian_document *doc, const char *term, size_t term_len,
                                        mo_xapian_error **error) {
    return guard(error, [&] { need(doc, "document").doc.add_boolean_term(bytes(term, term_len)); });
}

int mo_xapian_document_add_posting(mo_xapian_document *doc, const char *term, size_t term_len,
                                   uint32_t position, uint32_t wdf, mo_xapian_error **error) {
    return guard(error, [&] { need(doc, "document").doc.add_posting(bytes(term, term_len), position, wdf); });
}

int mo_xapian_document_remove_term(mo_xapian_document *doc, const char *term, size_t term_len,
                                   mo_xapian_error **error) {
    return guard(error, [&] { need(doc, "document").doc.remove_term(bytes(term, term_len)); });
}

int mo_xapian_document_add_value(mo_xapian_document *doc, uint32_t slot, const char *value, size_t value_len,
                                 mo_xapian_error **error) {
    return guard(error, [&] { need(doc, "document").doc.add_value(slot, bytes(value, value_len)); });
}

int mo_xapian_document_get_value(const mo_xapian_document *doc, uint32_t slot, char **value,
                                 size_t *value_len, mo_xapian_error **error) {
    return guard(error, [&] { output(need(doc, "document").doc.get_value(slot), value, value_len); });
}

mo_xapian_termlist *mo_xapian_document_termlist(const mo_xapian_document *doc, const char *prefix,
                                                size_t prefix_len, mo_xapian_error **error) {
    return guard_new<mo_xapian_termlist>(error, [&] {
        auto list = std::make_unique<mo_xapian_termlist>();
        list->doc_owner = need(doc, "document").doc;
        list->is_document = true;
        list->prefix = bytes(prefix, prefix_len);
        list->it = list->doc_owner.termlist_begin();
        list->end = list->doc_owner.termlist_end();
        // Terms come in byte order, so those with the prefix start at skip_to(prefix) and end at the first
        // term without it (checked in next).
        if (!list->prefix.empty()) list->it.skip_to(list->prefix);
        return list.release();
    });
}

// MARK: - Term lists

int mo_xapian_termlist_next(mo_xapian_termlist *list, char **term, size_t *term_len, uint32_t *count,
                            mo_xapian_error **error) {
    int result = 0;
    int status = guard(error, [&] {
        auto &l = need(list, "term list");
        if (l.it == l.end) return;
        std::string t = *l.it;
        if (!has_prefix(t, l.prefix)) {
            l.it = l.end;  // past the prefix's range: done for good
            return;
        }
        uint32_t n = l.is_document ? l.it.get_wdf() : l.it.get_termfreq();
        ++l.it;  // before allocating the output, so that a throwing step leaks nothing
        output(t, term, term_len);
        if (count) *count = n;
        result = 1;
    });
    return status < 0 ? -1 : result;
}

void mo_xapian_termlist_free(mo_xapian_termlist *list) {
    guard(nullptr, [&] { delete list; });
}

// MARK: - Indexing free text

mo_xapian_termgen *mo_xapian_termgen_new(const char *stem_language, size_t language_len,
                                         mo_xapian_error **error) {
    return guard_new<mo_xapian_termgen>(error, [&] {
        auto tg = std::make_unique<mo_xapian_termgen>();
        Xapian::Stem stem = stemmer(stem_language, language_len);
        tg->tg.set_stemmer(stem);
        tg->tg.set_stemming_strategy(Xapian::TermGenerator::STEM_SOME);
        return tg.release();
    });
}

void mo_xapian_termgen_free(mo_xapian_termgen *tg) {
    guard(nullptr, [&] { delete tg; });
}

// MARK: - Stem synonyms

namespace {

// Xapian's TermGenerator (STEM_SOME) stems a word only when its first character is a letter other than an
// upper-case one (its should_stem): not numbers, not symbols.
bool stemmable(const std::string &word) {
    const unsigned mask = (1u << Xapian::Unicode::LOWERCASE_LETTER) | (1u << Xapian::Unicode::TITLECASE_LETTER) |
                          (1u << Xapian::Unicode::MODIFIER_LETTER) | (1u << Xapian::Unicode::OTHER_LETTER);
    return ((mask >> Xapian::Unicode::get_category(*Xapian::Utf8Iterator(word))) & 1) != 0;
}

// Queues the entry of `term` when it is a stemmable word with one of the collector's prefixes. A prefix is the
// term's leading run of capitals (Xapian's convention; the words are lower-cased), so "XFOLDER:x" or "Qid" are
// never mistaken for words.
void collect(mo_xapian_stem_synonyms &s, const std::string &term, bool dedupe) {
    size_t n = 0;
    while (n < term.size() && term[n] >= 'A' && term[n] <= 'Z') ++n;
    if (n == term.size()) return;
    bool known = false;
    for (const auto &p : s.prefixes) {
        if (p.size() == n && term.compare(0, n, p) == 0) { known = true; break; }
    }
    if (!known) return;
    std::string word = term.substr(n);
    if (!stemmable(word)) return;
    if (dedupe && !s.seen.insert(term).second) return;
    std::string stem = s.stem(word);
    if (stem.empty()) return;
    std::string key = "Z";
    key.append(term, 0, n);
    key += stem;
    s.pending.emplace_back(std::move(key), term);
}

}  // namespace

mo_xapian_stem_synonyms *mo_xapian_stem_synonyms_new(const char *stem_language, size_t language_len,
                                                     const char *const *prefixes, const size_t *prefix_lens,
                                                     size_t count, mo_xapian_error **error) {
    return guard_new<mo_xapian_stem_synonyms>(error, [&] {
        auto s = std::make_unique<mo_xapian_stem_synonyms>();
        s->stem = stemmer(stem_language, language_len);
        for (size_t i = 0; i < count; ++i) s->prefixes.push_back(bytes(prefixes[i], prefix_lens[i]));
        return s.release();
    });
}

void mo_xapian_stem_synonyms_free(mo_xapian_stem_synonyms *syn) {
    guard(nullptr, [&] { delete syn; });
}

int mo_xapian_stem_synonyms_add_document(mo_xapian_stem_synonyms *syn, const mo_xapian_document *doc,
                                         mo_xapian_error **error) {
    return guard(error, [&] {
        auto &s = need(syn, "stem synonyms");
        const auto &d = need(doc, "document").doc;
        for (auto it = d.termlist_begin(); it != d.termlist_end(); ++it) collect(s, *it, true);
    });
}

int mo_xapian_stem_synonyms_add_database(mo_xapian_stem_synonyms *syn, mo_xapian_db *db, mo_xapian_error **error) {
    return guard(error, [&] {
        auto &s = need(syn, "stem synonyms");
        auto &d = need(db, "database").database();
        for (auto it = d.allterms_begin(); it != d.allterms_end(); ++it) collect(s, *it, false);
    });
}

int mo_xapian_stem_synonyms_write(mo_xapian_stem_synonyms *syn, mo_xapian_db *db, mo_xapian_error **error) {
    return guard(error, [&] {
        auto &s = need(syn, "stem synonyms");
        auto &w = writer(db);
        // Xapian's synonym table holds one key's list at a time: grouping by key reads and writes each once.
        std::sort(s.pending.begin(), s.pending.end());
        for (const auto &entry : s.pending) w.add_synonym(entry.first, entry.second);
        s.pending.clear();
        s.pending.shrink_to_fit();
        // Bounded memory on long runs: a word seen again after this costs one redundant (idempotent) entry.
        s.seen.clear();
    });
}

int mo_xapian_termgen_set_document(mo_xapian_termgen *tg, mo_xapian_document *doc, mo_xapian_error **error) {
    return guard(error, [&] { need(tg, "term generator").tg.set_document(need(doc, "document").doc); });
}

int mo_xapian_termgen_index_text(mo_xapian_termgen *tg, const char *text, size_t text_len, uint32_t wdf_inc,
                                 const char *prefix, size_t prefix_len, int with_positions,
                                 mo_xapian_error **error) {
    return guard(error, [&] {
        auto &g = need(tg, "term generator").tg;
        std::string t = bytes(text, text_len);
        std::string p = bytes(prefix, prefix_len);
        if (with_positions)
            g.index_text(t, wdf_inc, p);
        else
            g.index_text_without_positions(t, wdf_inc, p);
    });
}

int mo_xapian_termgen_increase_termpos(mo_xapian_termgen *tg, uint32_t delta, mo_xapian_error **error) {
    return guard(error, [&] { need(tg, "term generator").tg.increase_termpos(delta); });
}

// MARK: - Values for numbers

size_t mo_xapian_sortable_serialise(double value, char buf[16]) {
    size_t n = 0;
    guard(nullptr, [&] {
        std::string s = Xapian::sortable_serialise(value);
        if (s.size() > 16) return;  // cannot happen (at most 9 bytes); keeps `buf` safe regardless
        std::memcpy(buf, s.data(), s.size());
        n = s.size();
    });
    return n;
}

double mo_xapian_sortable_unserialise(const char *bytes_, size_t len) {
    double d = 0;
    guard(nullptr, [&] { d = Xapian::sortable_unserialise(bytes(bytes_, len)); });
    return d;
}

// MARK: - Queries

mo_xapian_query *mo_xapian_query_new_term(const char *term, size_t term_len, uint32_t wqf,
                                          mo_xapian_error **error) {
    return guard_new<mo_xapian_query>(error, [&] {
        return new mo_xapian_query{Xapian::Query(bytes(term, term_len), wqf)};
    });
}

mo_xapian_query *mo_xapian_query_new_match_all(mo_xapian_error **error) {
    return guard_new<mo_xapian_query>(error, [] { return new mo_xapian_query{Xapian::Query::MatchAll}; });
}

mo_xapian_query *mo_xapian_query_new_match_nothing(mo_xapian_error **error) {
    return guard_new<mo_xapian_query>(error, [] { return new mo_xapian_query{Xapian::Query::MatchNothing}; });
}

mo_xapian_query *mo_xapian_query_new_combine(int op, const mo_xapian_query *const *subqueries, size_t count,
                                             mo_xapian_error **error) {
    return guard_new<mo_xapian_query>(error, [&] {
        if (op < MO_XAPIAN_OP_AND || op > MO_XAPIAN_OP_PHRASE)
            throw Xapian::InvalidArgumentError("unknown query operator " + std::to_string(op));
        if (count && !subqueries) throw Xapian::InvalidArgumentError("null subquery array");
        std::vector<Xapian::Query> subs;
        subs.reserve(count);
        for (size_t i = 0; i < count; ++i) subs.push_back(need(subqueries[i], "query").query);
        return new mo_xapian_query{Xapian::Query(static_cast<Xapian::Query::op>(op), subs.begin(), subs.end())};
    });
}

mo_xapian_query *mo_xapian_query_new_value_range(uint32_t slot, const char *low, size_t low_len,
                                                 const char *high, size_t high_len, mo_xapian_error **error) {
    return guard_new<mo_xapian_query>(error, [&] {
        return new mo_xapian_query{
            Xapian::Query(Xapian::Query::OP_VALUE_RANGE, slot, bytes(low, low_len), bytes(high, high_len))};
    });
}

int mo_xapian_query_description(const mo_xapian_query *query, char **text, size_t *text_len,
                                mo_xapian_error **error) {
    return guard(error, [&] { output(need(query, "query").query.get_description(), text, text_len); });
}

void mo_xapian_query_free(mo_xapian_query *query) {
    guard(nullptr, [&] { delete query; });
}

// MARK: - Query parser

mo_xapian_qp *mo_xapian_qp_new(mo_xapian_error **error) {
    return guard_new<mo_xapian_qp>(error, [] { return new mo_xapian_qp(); });
}

void mo_xapian_qp_free(mo_xapian_qp *qp) {
    guard(nullptr, [&] { delete qp; });
}

int mo_xapian_qp_set_default_op(mo_xapian_qp *qp, int op, mo_xapian_error **error) {
    return guard(error, [&] {
        auto &p = need(qp, "query parser").qp;
        // Xapian refuses invalid operators itself; this only keeps out-of-range ints out of the enum.
        if (op < 0 || op > Xapian::Query::OP_MAX)
            throw Xapian::InvalidArgumentError("invalid default operator " + std::to_string(op));
        p.set_default_op(static_cast<Xapian::Query::op>(op));
    });
}

int mo_xapian_qp_set_stemmer(mo_xapian_qp *qp, const char *language, size_t language_len,
                             mo_xapian_error **error) {
    return guard(error, [&] {
        auto &p = need(qp, "query parser").qp;
        p.set_stemmer(stemmer(language, language_len));
        p.set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
    });
}

int mo_xapian_qp_add_prefix(mo_xapian_qp *qp, const char *field, size_t field_len, const char *prefix,
                            size_t prefix_len, mo_xapian_error **error) {
    return guard(error, [&] {
        need(qp, "query parser").qp.add_prefix(bytes(field, field_len), bytes(prefix, prefix_len));
    });
}

int mo_xapian_qp_add_boolean_prefix(mo_xapian_qp *qp, const char *field, size_t field_len, const char *prefix,
                                    size_t prefix_len, int exclusive, mo_xapian_error **error) {
    return guard(error, [&] {
        need(qp, "query parser").qp.add_boolean_prefix(bytes(field, field_len), bytes(prefix, prefix_len),
                                                       exclusive != 0);
    });
}

int mo_xapian_qp_add_range(mo_xapian_qp *qp, int kind, uint32_t slot, const char *str, size_t str_len,
                           unsigned flags, int epoch_year, mo_xapian_error **error) {
    return guard(error, [&] {
        auto &p = need(qp, "query parser").qp;
        std::string s = bytes(str, str_len);
        unsigned allowed = MO_XAPIAN_RANGE_SUFFIX | MO_XAPIAN_RANGE_REPEATED | MO_XAPIAN_RANGE_PREFER_MDY;
        if (flags & ~allowed) throw Xapian::InvalidArgumentError("unknown range processor flags");
        // The parser owns a processor only once release() hands its reference count over (see Xapian's
        // "opt_intrusive_ptr"); a plain pointer would be left for us to delete while the parser still uses it.
        Xapian::RangeProcessor *rp = nullptr;
        switch (kind) {
            case MO_XAPIAN_RANGE_STRING:
                rp = new Xapian::RangeProcessor(slot, s, flags);
                break;
            case MO_XAPIAN_RANGE_NUMBER:
                rp = new Xapian::NumberRangeProcessor(slot, s, flags);
                break;
            case MO_XAPIAN_RANGE_DATE:
                rp = new Xapian::DateRangeProcessor(slot, s, flags, epoch_year);
                break;
            default:
                throw Xapian::InvalidArgumentError("unknown range processor kind " + std::to_string(kind));
        }
        p.add_rangeprocessor(rp->release());
    });
}

mo_xapian_query *mo_xapian_qp_parse(mo_xapian_qp *qp, mo_xapian_db *db, const char *text, size_t text_len,
                                    unsigned flags, const char *default_prefix, size_t default_prefix_len,
                                    mo_xapian_error **error) {
    return guard_new<mo_xapian_query>(error, [&] {
        auto &p = need(qp, "query parser").qp;
        // The database is set only for this call, so the parser never keeps a database (and a writer's lock)
        // alive behind the caller's back.
        struct Reset {
            Xapian::QueryParser &p;
            ~Reset() {
                try {
                    p.set_database(Xapian::Database());
                } catch (...) {
                }
            }
        } reset{p};
        p.set_database(db ? db->database() : Xapian::Database());
        Xapian::Query q = p.parse_query(bytes(text, text_len), flags, bytes(default_prefix, default_prefix_len));
        return new mo_xapian_query{q};
    });
}

// MARK: - Searching

mo_xapian_enquire *mo_xapian_enquire_new(mo_xapian_db *db, mo_xapian_error **error) {
    return guard_new<mo_xapian_enquire>(error, [&] {
        return new mo_xapian_enquire(need(db, "database").database());
    });
}

void mo_xapian_enquire_free(mo_xapian_enquire *enq) {
    guard(nullptr, [&] { delete enq; });
}

int mo_xapian_enquire_set_query(mo_xapian_enquire *enq, const mo_xapian_query *query, mo_xapian_error **error) {
    return guard(error, [&] { need(enq, "enquire").enquire.set_query(need(query, "query").query); });
}

int mo_xapian_enquire_sort_by_relevance(mo_xapian_enquire *enq, mo_xapian_error **error) {
    return guard(error, [&] { need(enq, "enquire").enquire.set_sort_by_relevance(); });
}

int mo_xapian_enquire_sort_by_value(mo_xapian_enquire *enq, uint32_t slot, int reverse,
                                    mo_xapian_error **error) {
    return guard(error, [&] { need(enq, "enquire").enquire.set_sort_by_value(slot, reverse != 0); });
}

mo_xapian_mset *mo_xapian_enquire_get_mset(mo_xapian_enquire *enq, uint32_t first, uint32_t max_items,
                                           uint32_t check_at_least, mo_xapian_error **error) {
    return guard_new<mo_xapian_mset>(error, [&] {
        auto &e = need(enq, "enquire").enquire;
        return new mo_xapian_mset{e.get_mset(first, max_items, check_at_least)};
    });
}

void mo_xapian_mset_free(mo_xapian_mset *mset) {
    guard(nullptr, [&] { delete mset; });
}

int mo_xapian_mset_counts(const mo_xapian_mset *mset, uint32_t *size, uint32_t *estimated, uint32_t *lower,
                          uint32_t *upper, mo_xapian_error **error) {
    return guard(error, [&] {
        auto &m = need(mset, "match set").mset;
        if (size) *size = m.size();
        if (estimated) *estimated = m.get_matches_estimated();
        if (lower) *lower = m.get_matches_lower_bound();
        if (upper) *upper = m.get_matches_upper_bound();
    });
}

int mo_xapian_mset_item(const mo_xapian_mset *mset, uint32_t index, uint32_t *docid, double *weight,
                        mo_xapian_error **error) {
    return guard(error, [&] {
        auto it = mset_at(mset, index);
        if (docid) *docid = *it;
        if (weight) *weight = it.get_weight();
    });
}

mo_xapian_document *mo_xapian_mset_document(const mo_xapian_mset *mset, uint32_t index,
                                            mo_xapian_error **error) {
    return guard_new<mo_xapian_document>(error, [&] {
        auto it = mset_at(mset, index);
        return new mo_xapian_document{it.get_document()};
    });
}

}  // extern "C"

// MARK: - Reading values of many documents (reader side)

extern "C" {

int mo_xapian_mset_docids(const mo_xapian_mset *mset, uint32_t *docids, size_t capacity, mo_xapian_error **error) {
    return guard(error, [&] {
        auto &m = need(mset, "match set").mset;
        if (capacity < m.size()) throw Xapian::RangeError("docid buffer too small");
        size_t i = 0;
        for (auto it = m.begin(); it != m.end(); ++it) docids[i++] = *it;
    });
}

int mo_xapian_db_terms_among(mo_xapian_db *db, const char *prefix, size_t prefix_len, const uint32_t *docids,
                             size_t count, char **out, size_t *out_len, mo_xapian_error **error) {
    return guard(error, [&] {
        auto &d = need(db, "database").database();
        std::vector<uint32_t> sorted(docids, docids + count);
        std::sort(sorted.begin(), sorted.end());
        sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
        const std::string p = bytes(prefix, prefix_len);
        std::string buf;
        auto put = [&](uint32_t v) { buf.append(reinterpret_cast<const char *>(&v), sizeof v); };
        // Each term's posting list walked once, front to back, skipping to the documents asked.
        for (auto t = d.allterms_begin(p); t != d.allterms_end(p); ++t) {
            const std::string term = *t;
            std::vector<uint32_t> hits;
            auto it = d.postlist_begin(term), end = d.postlist_end(term);
            for (uint32_t did : sorted) {
                if (it == end) break;
                if (*it < did) it.skip_to(did);
                if (it == end) break;
                if (*it == did) hits.push_back(did);
            }
            if (hits.empty()) continue;
            if (term.size() > UINT32_MAX || buf.size() + term.size() + 8 + hits.size() * 4 > UINT32_MAX)
                throw Xapian::RangeError("too many terms for one table");
            put(static_cast<uint32_t>(term.size()));
            buf += term;
            put(static_cast<uint32_t>(hits.size()));
            for (uint32_t h : hits) put(h);
        }
        auto *o = static_cast<char *>(std::malloc(buf.size() + 1));
        if (!o) throw std::bad_alloc();
        std::memcpy(o, buf.data(), buf.size());
        *out = o;
        *out_len = buf.size();
    });
}

int mo_xapian_db_values(mo_xapian_db *db, const uint32_t *docids, size_t count, const uint32_t *slots,
                        size_t nslots, char **out, size_t *out_len, mo_xapian_error **error) {
    return guard(error, [&] {
        auto &d = need(db, "database").database();
        // Visit the documents in docid order: each slot's stream is then read once, front to back.
        std::vector<std::pair<Xapian::docid, size_t>> order(count);
        for (size_t i = 0; i < count; ++i) order[i] = {docids[i], i};
        std::sort(order.begin(), order.end());
        const size_t cells = count * nslots;
        // Values go to one arena per slot (no allocation per value); (offset, length) per cell.
        std::vector<std::string> arena(nslots);
        std::vector<std::pair<uint32_t, uint32_t>> where(cells, {0, 0});
        for (size_t s = 0; s < nslots; ++s) {
            Xapian::ValueIterator it = d.valuestream_begin(slots[s]), end = d.valuestream_end(slots[s]);
            for (auto &[did, row] : order) {
                if (it == end) break;
                if (it.get_docid() < did) it.skip_to(did);
                if (it == end) break;
                if (it.get_docid() != did) continue;
                const std::string v = *it;
                where[row * nslots + s] = {static_cast<uint32_t>(arena[s].size()), static_cast<uint32_t>(v.size())};
                arena[s] += v;
            }
        }
        size_t data = 0;
        for (auto &a : arena) data += a.size();
        const size_t header = (cells + 1) * sizeof(uint32_t);
        if (header + data > UINT32_MAX) throw Xapian::RangeError("too many values for one table");
        auto *p = static_cast<char *>(std::malloc(header + data));
        if (!p) throw std::bad_alloc();
        uint32_t at = 0;
        for (size_t c = 0; c < cells; ++c) {
            std::memcpy(p + c * sizeof(uint32_t), &at, sizeof at);
            auto [offset, length] = where[c];
            std::memcpy(p + header + at, arena[c % nslots].data() + offset, length);
            at += length;
        }
        std::memcpy(p + cells * sizeof(uint32_t), &at, sizeof at);
        *out = p;
        *out_len = header + data;
    });
}

int mo_xapian_db_value_stream(mo_xapian_db *db, uint32_t slot, char **out, size_t *out_len, size_t *cells,
                              mo_xapian_error **error) {
    return guard(error, [&] {
        auto &d = need(db, "database").database();
        std::vector<uint32_t> offsets{0};
        std::string data;
        for (auto it = d.valuestream_begin(slot), end = d.valuestream_end(slot); it != end; ++it) {
            data += *it;
            if (data.size() > UINT32_MAX) throw Xapian::RangeError("too many values for one table");
            offsets.push_back(static_cast<uint32_t>(data.size()));
        }
        const size_t header = offsets.size() * sizeof(uint32_t);
        auto *p = static_cast<char *>(std::malloc(header + data.size()));
        if (!p) throw std::bad_alloc();
        std::memcpy(p, offsets.data(), header);
        std::memcpy(p + header, data.data(), data.size());
        *out = p;
        *out_len = header + data.size();
        *cells = offsets.size() - 1;
    });
}

}  // extern "C"
