import Foundation
import XapianKit

/// Turns a `QueryNode` into a `XapianQuery` over the schema (`IndexSchema`). Words and phrases go
/// through Xapian's own QueryParser, one field at a time, so that they are split and lowercased exactly as
/// the term generator indexed them, and stemmed as the synonym table records stems; everything structural (operators, fields,
/// ranges, errors) is decided here.
struct QueryCompiler {
    let index: MailIndex
    var now = Int64(Date().timeIntervalSince1970)
    /// Most terms a wildcard on an exact field may expand to.
    static let wildcardLimit = 5000

    init(index: MailIndex) { self.index = index }

    /// A value of an exact (boolean) field: one term, no weight of its own.
    func isExactTerm(_ node: QueryNode) -> Bool {
        guard case .text(let field?, _, _, _) = node else { return false }
        return index.field(named: field)?.kind == .boolean
    }

    func compile(_ node: QueryNode) throws -> XapianQuery {
        switch node {
        case .all:
            return .matchAll()
        case .and(let parts):
            let positive = parts.filter { if case .not = $0 { false } else { true } }
            let negative = parts.compactMap { if case .not(let x) = $0 { x } else { nil } }
            var query = positive.isEmpty ? XapianQuery.matchAll() : try XapianQuery(.and, positive.map(compile))
            if !negative.isEmpty { query = try XapianQuery(.andNot, [query] + negative.map(compile)) }
            return query
        case .or(let parts):
            let or = try XapianQuery(.or, parts.map(compile))
            // Many exact terms ORed (notmuch-emacs' and `new`'s `id:a id:b …`, thousands of them): as a
            // filter, unweighted. Weighted, Xapian recomputes the OR's bound per term (BM25 get_maxpart):
            // 8,192 ids took 3 s to count.
            guard parts.count > 64, parts.allSatisfy(isExactTerm) else { return or }
            return try XapianQuery(.filter, [.matchAll(), or])
        case .not(let inner):
            return try XapianQuery(.andNot, [.matchAll(), try compile(inner)])
        case .threadOf(let inner):
            let matches = try index.listing(try compile(inner), order: .relevance, fields: [.thread])
            let threads = Set((0..<matches.count).map(matches.thread)).sorted()
            return try XapianQuery(.or, threads.map { XapianQuery(term: IndexSchema.Prefix.thread + $0) })
        case .gmailThreadOf(let inner):
            // Read from the matching documents' own terms: each file's thread id (`,G=`), none for a message
            // mo-sync did not download in Gmail mode.
            let matches = try index.db.search(try compile(inner), sort: .relevance, offset: 0, limit: Int(Int32.max)).matches
            var threads = Set<String>()
            for match in matches {
                for term in try index.db.document(match.documentID).terms(withPrefix: IndexSchema.Prefix.gmailThread) {
                    threads.insert(String(decoding: term, as: UTF8.self))
                }
            }
            return try XapianQuery(.or, threads.sorted().map { XapianQuery(term: $0) })
        case .text(let field, let value, let phrase, let position):
            guard let field else { return try freeText(IndexSchema.freeTextPrefixes, value, phrase: phrase, position) }
            switch field {
            case "date": return try date(value, position)
            case "size": return try size(value, position)
            case "lastmod": return try lastmod(value, position)
            default: break
            }
            guard let spec = index.field(named: field) else { throw QueryError(position, "unknown field \"\(field):\"") }
            // notmuch reads `subject:/re/` (and from:, tag:, folder:, path:, mid:) as a regular expression.
            if value.count >= 2, value.hasPrefix("/"), value.hasSuffix("/") {
                // is:/re/ is tag:/re/, as is:X is tag:X.
                let target = field == "is" ? IndexSchema.field(named: "tag") ?? spec : spec
                return try regex(target, String(value.dropFirst().dropLast()), position)
            }
            switch spec.kind {
            case .text where value == "*" && !phrase:
                // `(List *)`: any word in the field, as notmuch's wildcard of a field's terms.
                return try expansion(spec.prefixes, named: field + ":*", of: "words", position)
            case .text:
                return try freeText(
                    spec.prefixes, value, phrase: phrase, position,
                    // A UserHeader's words have no stem synonyms: matched as written.
                    stemmed: !IndexSchema.unstemmedFields.contains(spec.name) && IndexSchema.field(named: spec.name) != nil)
            case .boolean: return try exact(spec, value, position)
            }
        }
    }

    /// Words through Xapian's parser, with stemming (through the synonym table: IndexSchema) unless the
    /// field is one of `IndexSchema.unstemmedFields`, and trailing-`*` wildcards.
    func freeText(_ prefixes: [String], _ value: String, phrase: Bool, _ position: Int, stemmed: Bool = true) throws -> XapianQuery {
        let parser = try XapianQueryParser(defaultOperator: .and, stemmingLanguage: stemmed ? IndexSchema.stemmingLanguage : nil)
        for prefix in prefixes { try parser.addPrefix(field: "", prefix: prefix) }
        let folded = TextFolding.fold(value)
        let text = phrase ? "\"" + folded + "\"" : folded
        do {
            let query = try parser.parse(text, flags: [.phrase, .wildcard, .autoSynonyms], database: index.db)
            // Punctuation only ("--"): Xapian finds no word; match nothing, as notmuch does.
            return query
        } catch {
            throw QueryError(position, "cannot search \(quoted(value)): \(error.message)")
        }
    }

    /// Exact terms: ids, folders, flags...; a trailing `*` (or `/**` for path:) expands to the terms
    /// that start with the rest.
    func exact(_ field: IndexField, _ raw: String, _ position: Int) throws -> XapianQuery {
        var value = IndexSchema.caseFoldedBooleanFields.contains(field.name) ? raw.lowercased() : raw
        if field.name == "id" || field.name == "mid", value.hasPrefix("<"), value.hasSuffix(">"), value.count > 2 {
            value = String(value.dropFirst().dropLast())
        }
        switch field.name {
        case "flag":
            let known = IndexSchema.flagWords.map(\.word) + ["unread"]
            guard known.contains(value) else {
                throw QueryError(position, "unknown flag \(quoted(raw)) (known: \(known.joined(separator: " ")))")
            }
        case "has":
            guard value == "attachment" else { throw QueryError(position, "unknown has:\(raw) (known: has:attachment)") }
        case "thread":
            if value.hasPrefix("thread:") { value = String(value.dropFirst(7)) }
        case "folder", "path":
            // `folder:bad/news/` is `folder:bad/news`, as in notmuch.
            while value.count > 1, value.hasSuffix("/"), !value.hasSuffix("**") { value.removeLast() }
        case "is":
            // notmuch's is:X is tag:X; only is:placeholder is a state of its own.
            if value != "placeholder" { return try exact(IndexSchema.fields.first { $0.name == "tag" }!, raw, position) }
        case "tag":
            // The tags notmuch adds as it indexes are terms of their own here; a tag of that name set by
            // hand counts too.
            if let term = IndexSchema.indexedTags.first(where: { $0.tag == value })?.term {
                return try XapianQuery(.or, [XapianQuery(term: field.prefixes[0] + value), XapianQuery(term: term)])
            }
        default: break
        }
        let prefix = field.prefixes[0]
        if field.name == "path", value.hasSuffix("/**") {
            let base = String(value.dropLast(3))
            let terms = try index.terms(withPrefix: prefix + base + "/") + [prefix + base]
            return try XapianQuery(.or, terms.prefix(Self.wildcardLimit).map { XapianQuery(term: $0) })
        }
        let values = field.name == "folder" ? inEveryAccount(value) : [value]
        if value.hasSuffix("*") {
            return try expansion(values.map { prefix + $0.dropLast() }, named: raw, of: "values", position)
        }
        return values.count == 1 ? XapianQuery(term: prefix + value) : try XapianQuery(.or, values.map { XapianQuery(term: prefix + $0) })
    }

    /// A folder as written and, in an index of accounts (named roots: folders are `ACCOUNT/FOLDER`), the
    /// same folder in every account, unless it already names one: `folder:Archive` finds `work/Archive` and
    /// `home/Archive`, as a notmuch user's saved searches expect, where it used to find nothing.
    func inEveryAccount(_ folder: String) -> [String] {
        let accounts = index.roots.map(\.name).filter { !$0.isEmpty }
        guard !accounts.isEmpty, !accounts.contains(where: { folder == $0 || folder.hasPrefix($0 + "/") }) else { return [folder] }
        return [folder] + accounts.map { $0 + "/" + folder }
    }

    func date(_ value: String, _ position: Int) throws -> XapianQuery {
        guard let range = DateExpression.range(value, now: now) else {
            throw QueryError(position, "bad date \(quoted(value)) (use 2024-03-31, 2024-03, 2024, today, yesterday, 2w, A..B)")
        }
        return valueRange(IndexSchema.Slot.date, range.low.map(Double.init), range.high.map(Double.init))
    }

    func size(_ value: String, _ position: Int) throws -> XapianQuery {
        guard let range = SizeExpression.range(value) else {
            throw QueryError(position, "bad size \(quoted(value)) (use >1M, <10k, 100k..1M)")
        }
        return valueRange(IndexSchema.Slot.size, range.low, range.high)
    }

    /// The terms starting with any of `prefixes`, ORed (each once against the limit: `work/*` is also
    /// inside `*`); more than `wildcardLimit` is an error naming `name` and what it counts (`what`).
    func expansion(_ prefixes: [String], named name: String, of what: String, _ position: Int) throws -> XapianQuery {
        var terms: Set<String> = []
        for p in prefixes { terms.formUnion(try index.terms(withPrefix: p)) }
        guard terms.count <= Self.wildcardLimit else {
            throw QueryError(position, "\(quoted(name)) matches more than \(Self.wildcardLimit) \(what); be more specific")
        }
        return try XapianQuery(.or, terms.sorted().map { XapianQuery(term: $0) })
    }

    /// notmuch's `lastmod:A..B` (either end may be empty or `*`; one number is that revision only).
    func lastmod(_ value: String, _ position: Int) throws -> XapianQuery {
        let parts = value.components(separatedBy: "..")
        guard parts.count <= 2 else { throw QueryError(position, "bad revision range \(quoted(value)) (use A..B)") }
        func bound(_ s: String) throws -> Double? {
            if s.isEmpty || s == "*" { return nil }
            guard let n = Int64(s) else { throw QueryError(position, "bad revision \(quoted(s)) in \(quoted(value))") }
            return Double(n)
        }
        let low = try bound(parts[0]), high = parts.count == 2 ? try bound(parts[1]) : low
        let stamped = valueRange(IndexSchema.Slot.lastmod, low, high)
        // A document written before slot 8 existed has no value: revision 0.
        guard (low ?? 0) <= 0, (high ?? 0) >= 0 else { return stamped }
        let unstamped = try XapianQuery(.andNot, [.matchAll(), valueRange(IndexSchema.Slot.lastmod, nil, nil)])
        return try XapianQuery(.or, [stamped, unstamped])
    }

    func valueRange(_ slot: UInt32, _ low: Double?, _ high: Double?) -> XapianQuery {
        XapianQuery(valueRangeIn: slot, from: XapianValue.sortable(low ?? -1e300), to: XapianValue.sortable(high ?? 1e300))
    }

    func quoted(_ s: String) -> String { "\"\(s)\"" }
}
