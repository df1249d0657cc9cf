import MoCore

/// A query the user typed, as a tree (docs/query-language.md). Positions are 1-based character
/// columns in the query text, for error messages.
public indirect enum QueryNode: Equatable, Sendable {
    case all
    case and([QueryNode])
    case or([QueryNode])
    case not(QueryNode)
    /// Free words or a "phrase" (`field` nil: no field).
    case text(field: String?, value: String, phrase: Bool, position: Int)
    /// `thread:{...}`: every message of the threads the inner query matches.
    case threadOf(QueryNode)
    /// `gmail-thread:{query}`: the Gmail conversations (X-GM-THRID) of the messages the query matches.
    case gmailThreadOf(QueryNode)
}

/// A query that cannot be parsed or compiled: names the position and the problem.
public struct QueryError: MoError, Equatable {
    public let position: Int
    public let problem: String
    public init(_ position: Int, _ problem: String) {
        self.position = position
        self.problem = problem
    }
    public var kind: ErrorKind { .usage }
    public var description: String { "query: at character \(position): \(problem)" }
}

/// Recursive descent over the query text:
///
///     query   = or
///     or      = and { OR and }
///     and     = unary { [AND] unary }          adjacent terms are ANDed, but exact fields of one
///                                              name side by side are ORed (`groupingFilters`)
///     unary   = NOT unary | "-" unary | primary
///     primary = "(" or ")" | "*" | FIELD ":" value | word | "phrase"
///     value   = word | "phrase" | "(" words ")" | "{" or "}"   (braces only for thread:)
///
/// AND, OR, NOT are recognised in any case (as notmuch); quote them to search the word.
public struct QueryParser {
    enum Token: Equatable {
        case word(String)
        case phrase(String)
        case field(String)  // "from" of "from:"
        case open, close, openBrace, closeBrace, minus
        case and, or, not
        case end
    }

    private let tokens: [(Token, Int)]
    /// `UserHeader` field names, besides the schema's.
    private let userFields: Set<String>
    private var index = 0
    /// Parentheses, `thread:{...}` and NOT nested at this point.
    private var depth = 0

    /// Nesting (parentheses, `thread:{...}`, NOT) deeper than this is refused with an error: the parser
    /// recurses once per level, and a query of thousands of "(" (found by fuzzing) overflowed the stack.
    public static let maxDepth = 100

    private mutating func enter(_ at: Int) throws(QueryError) {
        depth += 1
        if depth > Self.maxDepth { throw QueryError(at, "nested deeper than \(Self.maxDepth) levels") }
    }

    /// What stands inside a bracket opened at `at` (its token already read), up to the `close` token,
    /// which is read too; `opening` names the bracket in the error when it is never closed.
    private mutating func bracketed(at: Int, until close: Token, opening: String) throws(QueryError) -> QueryNode {
        try enter(at)
        defer { depth -= 1 }
        let inner = try parseOr()
        guard peek == close else { throw QueryError(at, "\"\(opening)\" is never closed") }
        advance()
        return inner
    }

    /// `userFields`: the names of `UserHeader` fields, besides the schema's.
    public static func parse(_ text: String, userFields: Set<String> = []) throws(QueryError) -> QueryNode {
        var parser = QueryParser(tokens: try lex(text), userFields: userFields)
        if parser.peek == .end { return .all }
        let node = try parser.parseOr()
        if parser.peek != .end {
            throw QueryError(parser.position, parser.peek == .close ? "unmatched \")\"" : "unexpected \(parser.describe(parser.peek))")
        }
        return node
    }

    private init(tokens: [(Token, Int)], userFields: Set<String>) {
        self.tokens = tokens
        self.userFields = userFields
    }

    private var peek: Token { tokens[index].0 }
    private var position: Int { tokens[index].1 }
    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private mutating func parseOr() throws(QueryError) -> QueryNode {
        var parts = [try parseAnd()]
        while peek == .or {
            advance()
            guard startsPrimary(peek) else { throw QueryError(position, "expected a term after OR") }
            parts.append(try parseAnd())
        }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    private mutating func parseAnd() throws(QueryError) -> QueryNode {
        // A bracketed term is a subquery, not a filter side by side with others: it is never grouped.
        func term() throws(QueryError) -> QueryNode {
            let bracketed = peek == .open
            let node = try parseUnary()
            if bracketed, case .text = node { return .and([node]) }
            return node
        }
        var runs = [[try term()]]
        while true {
            if peek == .and {
                advance()
                guard startsPrimary(peek) else { throw QueryError(position, "expected a term after AND") }
                runs.append([])
            } else if !startsPrimary(peek) {
                break
            }
            runs[runs.count - 1].append(try term())
        }
        let parts = runs.flatMap(Self.groupingFilters)
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    /// Xapian's rule for terms side by side without an operator, which notmuch users rely on: exact
    /// (boolean) fields of one name are ORed (`tag:a tag:b` is either tag; `id:x id:y`, as notmuch prints
    /// a thread's messages, is both messages), different ones and the other terms ANDed. `is:` is `tag:`,
    /// `mid:` is `id:`. An explicit AND keeps its meaning.
    static func groupingFilters(_ run: [QueryNode]) -> [QueryNode] {
        var out: [QueryNode] = []
        var groups: [String: Int] = [:]  // field -> index in out
        var members: [Int: [QueryNode]] = [:]  // index in out -> its group, ORed at the end (linear in the run)
        for node in run {
            guard case .text(let field?, let value, _, _) = node, !(field == "is" && value == "placeholder"),
                let kind = IndexSchema.fields.first(where: { $0.name == field })?.kind, kind == .boolean,
                field != "mimetype"  // probabilistic in notmuch: its words AND
            else {
                out.append(node)
                continue
            }
            let key = field == "is" ? "tag" : field == "mid" ? "id" : field
            if let i = groups[key] {
                members[i, default: [out[i]]].append(node)
            } else {
                groups[key] = out.count
                out.append(node)
            }
        }
        for (i, group) in members { out[i] = .or(group) }
        return out
    }

    private func startsPrimary(_ t: Token) -> Bool {
        switch t {
        case .word, .phrase, .field, .open, .not, .minus: true
        default: false
        }
    }

    private mutating func parseUnary() throws(QueryError) -> QueryNode {
        if peek == .not || peek == .minus {
            let what = peek == .not ? "NOT" : "-"
            advance()
            guard startsPrimary(peek) else { throw QueryError(position, "expected a term after \(what)") }
            try enter(position)
            defer { depth -= 1 }
            return .not(try parseUnary())
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws(QueryError) -> QueryNode {
        let at = position
        switch peek {
        case .open:
            advance()
            if peek == .close { throw QueryError(position, "empty parentheses") }
            return try bracketed(at: at, until: .close, opening: "(")
        case .word(let w):
            advance()
            return w == "*" ? .all : .text(field: nil, value: w, phrase: false, position: at)
        case .phrase(let p):
            advance()
            return .text(field: nil, value: p, phrase: true, position: at)
        case .field(let written):
            advance()
            // Field names are case-blind (`From:`), but a UserHeader's is its own (`List:` beside `list:`).
            let name = userFields.contains(written) ? written : written.lowercased()
            // A name with digits or `_` that names no field is a word, as before such names could be fields.
            if !written.allSatisfy(\.isLetter), IndexSchema.field(named: name) == nil, !userFields.contains(name),
                !Self.valueFields.contains(name), case .word(let w) = peek
            {
                advance()
                return .text(field: nil, value: written + ":" + w, phrase: false, position: at)
            }
            return try parseFieldValue(name, at: at)
        default:
            throw QueryError(at, "unexpected \(describe(peek))")
        }
    }

    static let valueFields: Set<String> = ["date", "size", "sexp", "lastmod"]

    private mutating func parseFieldValue(_ name: String, at: Int) throws(QueryError) -> QueryNode {
        // notmuch's `sexp:"(…)"`: an S-expression query inside an infix one (no saved queries there).
        if name == "sexp" {
            switch peek {
            case .word(let text), .phrase(let text):
                advance()
                return try SexpQuery.parse(text, userFields: userFields)
            default: throw QueryError(at, "\"sexp:\" needs a quoted S-expression")
            }
        }
        guard IndexSchema.field(named: name) != nil || Self.valueFields.contains(name) || userFields.contains(name) else {
            let known = (IndexSchema.fields.map(\.name) + Self.valueFields.sorted()).joined(separator: " ")
            throw QueryError(at, "unknown field \"\(name):\" (known: \(known))")
        }
        switch peek {
        case .word(let w):
            advance()
            return .text(field: name, value: w, phrase: false, position: at)
        case .phrase(let p)
        where p.hasPrefix("(") && p.hasSuffix(")") && (IndexSchema.field(named: name)?.kind == .text || userFields.contains(name))
            && (try? QueryParser.parse(p, userFields: userFields)) != nil:
            // notmuch's field processors: `subject:"(notmuch or show)"` is a query in that word field (one
            // that does not read as a query, "(Re: x)", stays a phrase).
            advance()
            return Self.apply(field: name, to: try QueryParser.parse(p, userFields: userFields))
        case .phrase(let p):
            advance()
            return .text(field: name, value: p, phrase: true, position: at)
        case .openBrace where name == "thread":
            advance()
            return .threadOf(try bracketed(at: at, until: .closeBrace, opening: "thread:{"))
        case .openBrace where name == "gmail-thread":
            advance()
            return .gmailThreadOf(try bracketed(at: at, until: .closeBrace, opening: "gmail-thread:{"))
        case .open:
            // field:(a b OR c): the field applies to every word inside.
            advance()
            return Self.apply(field: name, to: try bracketed(at: at, until: .close, opening: "\(name):("))
        default:
            throw QueryError(position, "\"\(name):\" needs a value")
        }
    }

    static func apply(field: String, to node: QueryNode) -> QueryNode {
        switch node {
        case .text(nil, let v, let p, let pos): .text(field: field, value: v, phrase: p, position: pos)
        case .and(let xs): .and(xs.map { apply(field: field, to: $0) })
        case .or(let xs): .or(xs.map { apply(field: field, to: $0) })
        case .not(let x): .not(apply(field: field, to: x))
        default: node
        }
    }

    /// A letter then letters, digits or `_` (a `UserHeader`'s name may hold them: `X_1`), or a known
    /// field's name with a hyphen (`gmail-thread`): a word like `re-send:` stays a word.
    static func isFieldName(_ word: Substring) -> Bool {
        guard let first = word.first else { return false }
        return (first.isLetter && word.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" })
            || IndexSchema.field(named: word.lowercased()) != nil
    }

    private func describe(_ t: Token) -> String {
        switch t {
        case .word(let w): "\"\(w)\""
        case .phrase(let p): "\"\\\"\(p)\\\"\""
        case .field(let f): "\"\(f):\""
        case .open: "\"(\""
        case .close: "\")\""
        case .openBrace: "\"{\""
        case .closeBrace: "\"}\""
        case .minus: "\"-\""
        case .and: "AND"
        case .or: "OR"
        case .not: "NOT"
        case .end: "end of query"
        }
    }

    /// Splits the text into tokens with their 1-based positions.
    static func lex(_ text: String) throws(QueryError) -> [(Token, Int)] {
        let chars = Array(text)
        var out: [(Token, Int)] = []
        var i = 0
        func isSpace(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\n" || c == "\r" }
        func isDelimiter(_ c: Character) -> Bool { isSpace(c) || c == "(" || c == ")" || c == "{" || c == "}" || c == "\"" }
        while i < chars.count {
            let c = chars[i]
            let pos = i + 1
            if isSpace(c) { i += 1; continue }
            switch c {
            case "(": out.append((.open, pos)); i += 1; continue
            case ")": out.append((.close, pos)); i += 1; continue
            case "{": out.append((.openBrace, pos)); i += 1; continue
            case "}": out.append((.closeBrace, pos)); i += 1; continue
            case "\"":
                var j = i + 1
                var value = ""
                while j < chars.count {
                    if chars[j] == "\"" {
                        if j + 1 < chars.count && chars[j + 1] == "\"" { value.append("\""); j += 2; continue }  // "" escapes "
                        break
                    }
                    value.append(chars[j])
                    j += 1
                }
                guard j < chars.count else { throw QueryError(pos, "unterminated quote") }
                out.append((.phrase(value), pos))
                i = j + 1
                continue
            case "-"
            where i + 1 < chars.count && !isDelimiter(chars[i + 1])
                && (out.last.map { if case .field = $0.0 { false } else { true } } ?? true):
                out.append((.minus, pos)); i += 1; continue
            default: break
            }
            var j = i
            var word = ""
            while j < chars.count, !isDelimiter(chars[j]) {
                word.append(chars[j])
                j += 1
                // "field:" ends a token when followed by a value.
                if chars[j - 1] == ":", Self.isFieldName(word.dropLast()) {
                    break
                }
            }
            if word.hasSuffix(":"), Self.isFieldName(word.dropLast()) {
                let name = String(word.dropLast())
                guard j < chars.count, !isSpace(chars[j]), chars[j] != ")" else {
                    throw QueryError(pos, "\"\(word)\" needs a value")
                }
                out.append((.field(name), pos))
            } else {
                switch word {
                case _ where word.uppercased() == "AND": out.append((.and, pos))
                case _ where word.uppercased() == "OR": out.append((.or, pos))
                case _ where word.uppercased() == "NOT": out.append((.not, pos))
                // A bare word with no letter or digit (a lone `'`, as notmuch-emacs wraps its queries in)
                // is no term: Xapian's parser passes over it, and so does this one.
                case _
                where word != "*" && !word.contains(where: { $0.isLetter || $0.isNumber })
                    && (out.last.map { if case .field = $0.0 { false } else { true } } ?? true):
                    break
                default: out.append((.word(word), pos))
                }
            }
            i = j
        }
        out.append((.end, chars.count + 1))
        return out
    }
}
