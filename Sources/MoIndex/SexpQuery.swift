/// notmuch's S-expression queries (notmuch-sexp-queries(7), `--query=sexp`) read into the same tree as the
/// infix language (`QueryNode`), so one compiler answers both.
///
///     (and (to santa) (date december))      (tag inbox unread)      (thread (of (from alice)))
///
/// | form                         | meaning                                                         |
/// |------------------------------|-----------------------------------------------------------------|
/// | `word`, `"a phrase"`         | the word (stemmed as in infix) or phrase, in the field around it |
/// | `()`, `(and)`, `(not)`       | every message                                                   |
/// | `(or)`                       | no message                                                      |
/// | `(and q…)`, `(or q…)`        | all of, any of                                                  |
/// | `(not q…)`                   | `(and (not q1) … (not qn))`                                     |
/// | `(FIELD q…)`                 | the queries in that field, combined by the field's operator: or for folder, id, mid, mimetype, path, thread; and for the others |
/// | `(date A B)`, `(date A)`     | the range A..B (one bound: A..A); `""` or `*` for an open end   |
/// | `(thread (of q…))`, `(matching …)` | every message of the threads the queries match            |
/// | `(infix "…")`                | the infix language                                              |
/// | `(query NAME)`, `(NAME args…)` | a saved infix query (`query.NAME`); a saved S-expression (`squery.NAME`), a `(macro (params) body)` with `,param` in its body bound to the arguments |
/// | `(starts-with P)`            | a word (in the field) starting with P                           |
///
/// | `(FIELD (regex R))`, `(rx R)` | the regular expression R (`QueryCompiler.regex`)                 |
///
/// Not answered (an error naming them): `lastmod`, `property`.
public enum SexpQuery {
    indirect enum Expr: Equatable {
        case atom(String, quoted: Bool)
        case list([Expr])
    }

    static let orFields: Set<String> = ["folder", "id", "mid", "mimetype", "path", "thread"]
    static let fields: Set<String> = [
        "attachment", "body", "date", "folder", "from", "id", "is", "lastmod", "mid", "mimetype", "path", "property",
        "subject", "tag", "thread", "to"
    ]

    /// `saved`: notmuch's saved queries by configuration key (`squery.NAME`, S-expressions; `query.NAME`,
    /// infix), nil for one that is not there.
    public static func parse(
        _ text: String, saved: @escaping (String) -> String? = { _ in nil }, userFields: Set<String> = []
    ) throws(QueryError) -> QueryNode {
        let exprs = try read(text) { "invalid s-expression: '\(text)'" }
        guard !exprs.isEmpty else { return .all }
        guard exprs.count == 1 else { throw QueryError(1, "more than one s-expression; wrap them in (and …)") }
        if case .list(let items) = exprs[0], case .atom("macro", false)? = items.first {
            throw QueryError(1, "macro definition not permitted here")
        }
        return try Translator(saved: saved, userFields: userFields, env: [:]).node(exprs[0], field: nil)
    }

    static func read(_ text: String, _ failure: () -> String) throws(QueryError) -> [Expr] {
        var reader = Reader(chars: Array(text))
        do { return try reader.all() } catch { throw QueryError(1, failure()) }
    }
}

extension SexpQuery {
    /// The S-expressions into the tree; `env` binds a saved macro's parameters (`,name` in its body).
    struct Translator {
        let saved: (String) -> String?
        /// `UserHeader` field names: fields like the schema's.
        var userFields: Set<String> = []
        var env: [String: Expr]

        /// A parameter reference replaced by its argument.
        func resolve(_ e: Expr) throws(QueryError) -> Expr {
            guard case .atom(let v, false) = e, v.hasPrefix(",") else { return e }
            guard let bound = env[String(v.dropFirst())] else { throw QueryError(1, "undefined parameter '\(v.dropFirst())'") }
            return bound
        }

        /// `(NAME args…)` for a saved query: its expression, a macro's parameters bound to the arguments.
        func call(_ name: String, _ text: String, _ args: [Expr], field: String?) throws(QueryError) -> QueryNode {
            let exprs = try SexpQuery.read(text) { "invalid saved s-expression query: '\(text)'" }
            guard exprs.count == 1 else { throw QueryError(1, "invalid saved s-expression query: '\(text)'") }
            guard case .list(let items) = exprs[0], case .atom("macro", false)? = items.first else {
                return try Translator(saved: saved, userFields: userFields, env: [:]).node(exprs[0], field: field)
            }
            guard items.count >= 2, case .list(let params) = items[1] else {
                throw QueryError(1, "missing (possibly empty) list of arguments to macro")
            }
            guard items.count >= 3 else { throw QueryError(1, "missing body of macro") }
            var bound: [String: Expr] = [:]
            for (i, p) in params.enumerated() {
                guard case .atom(let pname, false) = p else { throw QueryError(1, "macro parameters must be unquoted atoms") }
                guard i < args.count else { throw QueryError(1, "too few arguments to macro") }
                bound[pname] = try resolve(args[i])  // the caller's parameters, not the macro's: no dynamic scope
            }
            guard args.count <= params.count else { throw QueryError(1, "too many arguments to macro") }
            return try Translator(saved: saved, userFields: userFields, env: bound).node(items[2], field: field)
        }

        func node(_ e: Expr, field: String?) throws(QueryError) -> QueryNode {
            let e = try resolve(e)
            switch e {
            case .atom(let value, let quoted):
                if value == "*" && !quoted {
                    if field == "body" { throw QueryError(1, "'body' does not support wildcard queries") }
                    return field == nil ? .all : .text(field: field, value: "*", phrase: false, position: 1)
                }
                return .text(field: field, value: value, phrase: quoted, position: 1)
            case .list(let items):
                guard let head = items.first else { return .all }
                guard case .atom(let name, false) = head else { throw QueryError(1, "unexpected list in field/operation position") }
                let rest = Array(items.dropFirst())
                switch name {
                case "and":
                    let parts = try rest.map { e throws(QueryError) in try node(e, field: field) }
                    return parts.isEmpty ? .all : parts.count == 1 ? parts[0] : .and(parts)
                case "or":
                    let parts = try rest.map { e throws(QueryError) in try node(e, field: field) }
                    return parts.isEmpty ? .not(.all) : parts.count == 1 ? parts[0] : .or(parts)
                case "not":
                    let parts = try rest.map { e throws(QueryError) in QueryNode.not(try node(e, field: field)) }
                    return parts.isEmpty ? .all : parts.count == 1 ? parts[0] : .and(parts)
                case "infix":
                    guard field == nil, rest.count == 1, case .atom(let text, _) = rest[0] else {
                        throw QueryError(1, "(infix …) takes one string, outside fields")
                    }
                    return try QueryParser.parse(text, userFields: userFields)
                case "of", "matching":
                    guard field == "thread" else {
                        if let field { throw QueryError(1, "'\(name)' unsupported inside '\(field)'") }
                        throw QueryError(1, "(\(name) …) is answered inside (thread …) only")
                    }
                    let parts = try rest.map { e throws(QueryError) in try node(e, field: nil) }
                    return .threadOf(parts.isEmpty ? .all : parts.count == 1 ? parts[0] : .and(parts))
                case "date":
                    if let field { throw QueryError(1, "nested field: 'date' inside '\(field)'") }
                    guard (1...2).contains(rest.count) else { throw QueryError(1, "'date' expects maximum of two arguments") }
                    var bounds: [String] = []
                    for b in rest {
                        guard case .atom(let v, _) = b else { throw QueryError(1, "a date bound must be an atom") }
                        bounds.append(v == "*" ? "" : v)
                    }
                    let from = bounds[0], to = bounds.count == 2 ? bounds[1] : bounds[0]
                    return .text(field: "date", value: "\(from)..\(to)", phrase: false, position: 1)
                case "starts-with":
                    guard rest.count == 1, case .atom(let prefix, _) = try resolve(rest[0]) else {
                        throw QueryError(1, "'starts-with' expects single atom as argument")
                    }
                    if let field, field == "body" || field == "date" { throw QueryError(1, "'\(field)' does not support wildcard queries") }
                    if prefix.isEmpty && field == nil { return .all }
                    return .text(field: field, value: prefix + "*", phrase: false, position: 1)
                case "regex", "rx":
                    guard let field else { throw QueryError(1, "illegal '\(name)' outside field") }
                    guard ["folder", "from", "id", "is", "mid", "path", "subject", "tag", "thread"].contains(field) else {
                        throw QueryError(1, "'\(name)' not supported in field '\(field)'")
                    }
                    guard rest.count == 1, case .atom(let pattern, _) = try resolve(rest[0]) else {
                        throw QueryError(1, "'\(name)' expects single atom as argument")
                    }
                    return .text(field: field, value: "/" + pattern + "/", phrase: false, position: 1)
                case "query":
                    if let field { throw QueryError(1, "'query' not supported inside '\(field)'") }
                    guard rest.count == 1, case .atom(let qname, _) = try resolve(rest[0]) else {
                        throw QueryError(1, "'query' expects single atom as argument")
                    }
                    guard let text = saved("query." + qname) else { return .not(.all) }
                    return try QueryParser.parse(SavedQueries.expand(text, saved: saved), userFields: userFields)
                case "lastmod":
                    if let field { throw QueryError(1, "nested field: 'lastmod' inside '\(field)'") }
                    guard rest.count <= 2 else { throw QueryError(1, "'lastmod' expects maximum of two arguments") }
                    var bounds: [String] = []
                    for (i, b) in rest.enumerated() {
                        guard case .atom(let v, _) = try resolve(b) else {
                            throw QueryError(1, "expected atom as \(i == 0 ? "first" : "second") argument of 'lastmod'")
                        }
                        guard v.isEmpty || v == "*" || Int64(v) != nil else {
                            throw QueryError(1, "bad '\(i == 0 ? "from" : "to")' revision: '\(v)'")
                        }
                        bounds.append(v == "*" ? "" : v)
                    }
                    if bounds.isEmpty { return .all }
                    let from = bounds[0], to = bounds.count == 2 ? bounds[1] : from
                    return .text(field: "lastmod", value: "\(from)..\(to)", phrase: false, position: 1)
                case "macro", "property":
                    throw QueryError(1, "(\(name) …) is not supported by mo-index")
                case _ where fields.contains(name) || userFields.contains(name):
                    guard field == nil else { throw QueryError(1, "nested field: '\(name)' inside '\(field!)'") }
                    if name == "thread", rest.count == 1, case .list(let inner) = rest[0], case .atom(let op, false)? = inner.first,
                        op == "of" || op == "matching"
                    {
                        return try node(rest[0], field: "thread")
                    }
                    let parts = try rest.map { e throws(QueryError) in try node(e, field: name) }
                    if parts.isEmpty { return .all }
                    if parts.count == 1 { return parts[0] }
                    return orFields.contains(name) ? .or(parts) : .and(parts)
                default:
                    guard let text = saved("squery." + name) else { throw QueryError(1, "unknown prefix '\(name)'") }
                    return try call(name, text, rest, field: field)
                }
            }
        }

    }
}

extension SexpQuery {
    struct Reader {
        let chars: [Character]
        var i = 0

        mutating func all() throws(QueryError) -> [Expr] {
            var out: [Expr] = []
            while let e = try next() { out.append(e) }
            return out
        }

        mutating func skipBlanks() { while i < chars.count, chars[i].isWhitespace { i += 1 } }

        mutating func next() throws(QueryError) -> Expr? {
            skipBlanks()
            guard i < chars.count else { return nil }
            switch chars[i] {
            case "(":
                i += 1
                var items: [Expr] = []
                while true {
                    skipBlanks()
                    guard i < chars.count else { throw QueryError(i + 1, "unbalanced parentheses") }
                    if chars[i] == ")" { i += 1; return .list(items) }
                    guard let e = try next() else { throw QueryError(i + 1, "unbalanced parentheses") }
                    items.append(e)
                }
            case ")": throw QueryError(i + 1, "unbalanced parentheses")
            case "\"":
                i += 1
                var value = ""
                while i < chars.count, chars[i] != "\"" {
                    if chars[i] == "\\", i + 1 < chars.count { i += 1 }
                    value.append(chars[i])
                    i += 1
                }
                guard i < chars.count else { throw QueryError(i + 1, "unterminated quote") }
                i += 1
                return .atom(value, quoted: true)
            default:
                var value = ""
                while i < chars.count, !chars[i].isWhitespace, chars[i] != "(", chars[i] != ")", chars[i] != "\"" {
                    value.append(chars[i])
                    i += 1
                }
                return .atom(value, quoted: false)
            }
        }
    }
}
