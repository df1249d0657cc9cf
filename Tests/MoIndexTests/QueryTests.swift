import Foundation
import Testing
import MoTestSupport
@testable import MoIndex

@Suite struct QueryParserTests {
    @Test(arguments: [
        ("foo:bar", 1, "unknown field \"foo:\""),
        ("(a OR b", 1, "\"(\" is never closed"),
        ("a AND", 6, "expected a term after AND"),
        ("\"open phrase", 1, "unterminated quote"),
        ("a )", 3, "unmatched \")\""),
        ("subject: x", 1, "needs a value")
    ])
    func errorsNamePositionAndProblem(text: String, position: Int, problem: String) {
        #expect {
            try QueryParser.parse(text)
        } throws: { error in
            guard let e = error as? QueryError else { return false }
            return e.position == position && e.problem.contains(problem)
        }
    }

    /// Deep nesting is an error, not a stack overflow: the libFuzzer input that crashed the parser (thousands
    /// of "(", Tests/Fixtures/fuzz/query-deep-nesting), and each nesting form at the limit and past it.
    /// Files of a root that is itself a Maildir folder are stored as `/cur/…`; on disk, one slash.
    @Test func absolutePathsHaveOneSlash() {
        let bare = [IndexRoot(name: "", path: "/m", layout: .verbatim)]
        #expect(IndexRoot.absolutePath("/cur/1:2,S", roots: bare) == "/m/cur/1:2,S")
        #expect(IndexRoot.absolutePath("Lists/cur/1:2,S", roots: bare) == "/m/Lists/cur/1:2,S")
        let named = [IndexRoot(name: "work", path: "/w", layout: .maildirPlusPlus)]
        #expect(IndexRoot.absolutePath("work//cur/1:2,S", roots: named) == "/w/cur/1:2,S")
        #expect(IndexRoot.absolutePath("work/.Lists/cur/1:2,S", roots: named) == "/w/.Lists/cur/1:2,S")
        #expect(IndexRoot.absolutePath("/cur/x", roots: [IndexRoot(name: "", path: "/", layout: .verbatim)]) == "/cur/x")
    }

    @Test func deepNestingIsRefusedNotACrash() throws {
        let bytes = try #require(FileManager.default.contents(atPath: TestPaths.projectRoot + "/Tests/Fixtures/fuzz/query-deep-nesting"))
        let crash = String(decoding: bytes, as: UTF8.self)  // as the fuzz target reads it
        #expect(throws: QueryError.self) { try QueryParser.parse(crash) }
        let n = QueryParser.maxDepth
        #expect(try QueryParser.parse(String(repeating: "(", count: n) + "a" + String(repeating: ")", count: n)) != .all)
        for deep in [
            String(repeating: "(", count: n + 1) + "a" + String(repeating: ")", count: n + 1),
            String(repeating: "NOT ", count: n + 1) + "a",
            String(repeating: "thread:{", count: n + 1) + "a" + String(repeating: "}", count: n + 1),
            String(repeating: "(", count: 100_000)
        ] {
            #expect {
                try QueryParser.parse(deep)
            } throws: { ($0 as? QueryError)?.problem.contains("nested deeper than \(n) levels") == true }
        }
    }

    @Test func structure() throws {
        let q = try QueryParser.parse("from:alice (a OR b) not c")
        guard case .and(let parts) = q else { Issue.record("\(q)"); return }
        #expect(parts.count == 3)
        #expect(parts[0] == .text(field: "from", value: "alice", phrase: false, position: 1))
        if case .or = parts[1] {} else { Issue.record("\(parts[1])") }
        if case .not = parts[2] {} else { Issue.record("\(parts[2])") }
        #expect(try QueryParser.parse("*") == .all)
        #expect(try QueryParser.parse("") == .all)
        // Side by side, exact fields of one name are ORed; not a bracketed one, nor is:placeholder.
        if case .and(let parts) = try QueryParser.parse("tag:a (tag:b)") {
            #expect(parts.count == 2)
        } else {
            Issue.record("tag:a (tag:b)")
        }
        if case .and = try QueryParser.parse("tag:a is:placeholder") {} else { Issue.record("tag:a is:placeholder") }
        if case .or = try QueryParser.parse("tag:a is:b") {} else { Issue.record("tag:a is:b") }
        // A quoted (…) that is no query stays a phrase.
        if case .text("subject", "(Re: meeting)", true, _) = try QueryParser.parse("subject:\"(Re: meeting)\"") {
        } else {
            Issue.record("subject:\"(Re: meeting)\"")
        }
        // notmuch's field processor: a quoted (…) is a query in the field.
        if case .or(let parts) = try QueryParser.parse("subject:\"(a or \"\"b c\"\")\""), parts.count == 2,
            case .text("subject", "a", false, _) = parts[0], case .text("subject", "b c", true, _) = parts[1]
        {
        } else {
            Issue.record("subject:\"(a or \"\"b c\"\")\"")
        }
        // notmuch-emacs wraps queries in ' ': a lone apostrophe is no term, as in Xapian's parser.
        if case .text(let field, let value, _, _) = try QueryParser.parse("' from:alice '") {
            #expect(field == "from" && value == "alice")
        } else {
            Issue.record("' from:alice '")
        }
        if case .threadOf = try QueryParser.parse("thread:{from:a}") {} else { Issue.record("thread:{}") }
        // Gmail mode's conversation field: a hyphenated known field; other hyphenated words stay words.
        #expect(try QueryParser.parse("gmail-thread:1234") == .text(field: "gmail-thread", value: "1234", phrase: false, position: 1))
        if case .gmailThreadOf = try QueryParser.parse("gmail-thread:{from:a}") {} else { Issue.record("gmail-thread:{}") }
        #expect(try QueryParser.parse("re-send:x") == .text(field: nil, value: "re-send:x", phrase: false, position: 1))
    }

    @Test func datesAndSizes() {
        let now = DateExpression.local(2024, 3, 15) + 3600
        let r = DateExpression.range("2024-01-01..2024-03-31", now: now)!
        #expect(r.low == DateExpression.local(2024, 1, 1) && r.high == DateExpression.local(2024, 4, 1) - 1)
        #expect(DateExpression.range("..2023", now: now)!.high == DateExpression.local(2024, 1, 1) - 1)
        #expect(DateExpression.range("yesterday", now: now)!.low == DateExpression.local(2024, 3, 14))
        #expect(DateExpression.range("soon", now: now) == nil)
        // Relative ends stand for their unit, as notmuch 0.37 reads them (its answers on messages 0–30, 360, 400
        // and 420 days old at noon, today Tuesday 2026-11-24; weeks run Sunday to Saturday).
        let tuesday = DateExpression.local(2026, 11, 24) + 23 * 3600 + 44 * 60
        let ages: [Int64] = Array(0...30) + [360, 400, 420]
        func matching(_ q: String) -> [Int64] {
            let r = DateExpression.range(q, now: tuesday)!
            return ages.filter {
                let t = DateExpression.local(2026, 11, 24 - Int32($0)) + 12 * 3600
                return (r.low ?? .min) <= t && t <= (r.high ?? .max)
            }
        }
        #expect(matching("2w..2w") == Array(10...16))
        #expect(matching("1w..1w") == Array(3...9))
        #expect(matching("..1w") == Array(3...30) + [360, 400, 420])
        #expect(matching("1w..") == Array(0...9))
        #expect(matching("30d..10d") == Array(10...30))
        #expect(matching("1y..1y") == [360, 400, 420])
        #expect(matching("1m..1m") == Array(24...30))  // our m is a month (notmuch's is a minute: none)
        #expect(matching("3d..1d") == [1, 2, 3])
        #expect(matching("2w") == Array(0...13))  // alone: since then (notmuch: that week)
        #expect(SizeExpression.range(">1M")!.low == 1_048_577)
    }

    /// notmuch's other absolute forms (its T500): month/day/year, day-Mon-year, a time with a zone, and
    /// `A..!` for A's own span.
    @Test func otherDateForms() {
        let now = DateExpression.local(2024, 3, 15)
        let day = (DateExpression.local(2010, 12, 16), DateExpression.local(2010, 12, 17) - 1)
        for q in ["12/16/2010", "16-Dec-2010", "2010-12-16..12/16/2010", "2010-12-16..!", "16-december-2010"] {
            let r = DateExpression.range(q, now: now)
            #expect(r?.low == day.0 && r?.high == day.1, "\(q)")
        }
        // 02:19:26 at -0800 is 10:19:26 UTC; 04:49:52 at -06:00 is 10:49:52 UTC (1258539566, 1258541392).
        let r = DateExpression.range("18-Nov-2009_02:19:26-0800..2009-11-18_04:49:52-06:00", now: now)
        #expect(r?.low == 1_258_539_566 && r?.high == 1_258_541_392)
        let minute = DateExpression.range("2009-11-18t10:19z", now: now)
        #expect(minute?.low == 1_258_539_540 && minute?.high == 1_258_539_599)
        for bad in ["13/01/2010", "18-Foo-2009", "2009-11-18_25:00", "2009-11-18_10:00+99", "1/2/3", "12/16/10"] {
            #expect(DateExpression.range(bad, now: now) == nil, "\(bad)")
        }
        #expect(SizeExpression.range("10k..20k")!.low == 10240 && SizeExpression.range("10k..20k")!.high == 20480)
    }

    @Test func folding() {
        #expect(TextFolding.fold("Café Ångström") == "Cafe Angstrom")
        #expect(TextFolding.fold("plain") == "plain")
        #expect(TextFolding.fold("한국어") == "한국어")
    }
}

@Suite struct QueryOnFixturesTests {
    @Test func fieldsOnRealMessages() throws {
        let tree = try IndexedTree()
        try tree.update()
        let all = try tree.ids("*")
        #expect(all.count > 15)
        #expect(try tree.ids("has:attachment").count >= 1)
        #expect(try tree.ids("mimetype:text/html").count >= 1)
        let html = try tree.ids("mimetype:text/html")
        #expect(try tree.ids("mimetype:text/*").isSuperset(of: html))
        #expect(try tree.ids("flag:seen") == all)
        #expect(try tree.ids("flag:unread").isEmpty)
        #expect(try tree.ids("NOT flag:seen").isEmpty)
        #expect(try tree.ids("size:>0") == all)
        #expect(try tree.ids("size:>100M").isEmpty)
        #expect(try tree.ids("date:..1970").count < all.count)
        // Case and diacritics do not matter.
        let index = try tree.index()
        let some = try index.messages(.matchAll()).first { !$0.record.subject.isEmpty && $0.record.subject.first!.isLetter }!
        let word = String(some.record.subject.split(separator: " ").first!.filter(\.isLetter))
        #expect(try tree.ids("subject:\(word.uppercased())").contains(some.record.id))
        #expect(try tree.ids("id:\(some.record.id)") == [some.record.id])
        #expect(try tree.ids("thread:\(some.thread)").contains(some.record.id))
        #expect(try tree.ids("\(word.prefix(3).lowercased())*").contains(some.record.id))
    }

    /// `from:` and `subject:` match words as written, bare words and `to:` also by their stem: notmuch
    /// 0.37's answers on the same messages (Debian's notmuch, asked by hand), as a table.
    @Test(arguments: [
        ("subject:rpm", ["s2", "s4"]), ("subject:rpm's", ["s1"]), ("subject:RPMs", ["s3"]), ("rpm", ["s1", "s2", "s4"]),
        ("from:run", ["f2"]), ("from:running", ["f1"]), ("to:jump", ["f1", "f2"]), ("to:jumping", ["f1", "f2"]),
        ("subject:running", []), ("running", ["s5", "f1", "f2"])
    ])
    func stemmingFollowsNotmuchPerField(query: String, expected: [String]) throws {
        let tree = try IndexedTree(folders: [:])
        let cur = tree.maildir + "/INBOX/cur"
        try FileManager.default.createDirectory(atPath: cur, withIntermediateDirectories: true)
        for sub in ["new", "tmp"] {
            try FileManager.default.createDirectory(atPath: tree.maildir + "/INBOX/" + sub, withIntermediateDirectories: true)
        }
        let messages = [
            ("s1", "A <a@x>", "B <b@x>", "RPM's build", "x"), ("s2", "A <a@x>", "B <b@x>", "rpm build", "x"),
            ("s3", "A <a@x>", "B <b@x>", "RPMs are here", "x"), ("s4", "A <a@x>", "B <b@x>", "the rpm-based way", "x"),
            ("s5", "A <a@x>", "B <b@x>", "plain", "he keeps running"),
            ("f1", "Running Man <rm@x>", "Jumping Jack <jj@x>", "x", "x"), ("f2", "Run <r@x>", "Jump <j@x>", "x", "x")
        ]
        for (i, m) in messages.enumerated() {
            let text = "From: \(m.1)\nTo: \(m.2)\nSubject: \(m.3)\nMessage-ID: <\(m.0)@x>\nDate: Mon, 1 Jan 2024 10:00:00 +0000\n\n\(m.4)\n"
            try text.write(toFile: "\(cur)/\(1000 + i).m.host:2,S", atomically: false, encoding: .utf8)
        }
        try tree.update()
        #expect(try tree.ids(query) == Set(expected.map { $0 + "@x" }))
    }

    /// In an index of accounts, a folder named without its account is that folder in every account; one
    /// named with its account stays in it.
    @Test func aFolderWithoutItsAccountIsInEveryAccount() throws {
        let tree = try IndexedTree(folders: [:])
        var roots: [IndexRoot] = []
        for (n, account) in ["work", "home"].enumerated() {
            for folder in ["Archive", "INBOX"] {
                for sub in ["cur", "new", "tmp"] {
                    try FileManager.default.createDirectory(
                        atPath: "\(tree.maildir)/\(account)/\(folder)/\(sub)", withIntermediateDirectories: true)
                }
                let text = "From: a@x\nSubject: s\nMessage-ID: <\(account)-\(folder)@x>\n\nbody\n"
                try text.write(
                    toFile: "\(tree.maildir)/\(account)/\(folder)/cur/\(1000 + n).m.host:2,S", atomically: false, encoding: .utf8)
            }
            roots.append(IndexRoot(name: account, path: "\(tree.maildir)/\(account)", layout: .verbatim))
        }
        _ = try IndexUpdater(indexPath: tree.indexPath, roots: roots).run()
        #expect(try tree.ids("folder:Archive") == ["work-Archive@x", "home-Archive@x"])
        #expect(try tree.ids("folder:work/Archive") == ["work-Archive@x"])
        #expect(try tree.ids("folder:Arch*") == ["work-Archive@x", "home-Archive@x"])
        #expect(try tree.ids("folder:home/*") == ["home-Archive@x", "home-INBOX@x"])
        #expect(try tree.ids("folder:Sent").isEmpty)
    }

    /// notmuch's regular-expression form: POSIX extended, unanchored, against the header (from, subject)
    /// or the terms (exact fields); a bad one is named.
    @Test func regularExpressions() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml"]])
        try tree.update()
        #expect(try tree.ids("from:/./").count == 1)
        #expect(try tree.ids("subject:/./").count == 1)
        #expect(try tree.ids("from:\"/^no such sender$/\"").isEmpty)
        #expect(try tree.ids("folder:/^INB/").count == 1)
        #expect(try tree.ids("folder:/^Sent$/").isEmpty)
        #expect { try tree.ids("from:/unbalanced[/") } throws: {
            ($0 as? QueryError)?.problem.contains("Regexp error") == true
        }
        #expect(try tree.ids("subject:\"/\"").isEmpty)  // a lone slash is no expression
    }

    /// Thousands of ids side by side (notmuch-emacs' and `new`'s queries) are one unweighted filter: the
    /// same messages as few ids find.
    @Test func manyIdsSideBySide() throws {
        let tree = try IndexedTree()
        try tree.update()
        let all = try tree.ids("*")
        let query = (all.map { "id:" + NotmuchDump.booleanTerm($0) } + (0..<200).map { "id:absent-\($0)@example.org" }).joined(
            separator: " ")
        #expect(try tree.ids(query) == all)
        #expect(try tree.ids(query + " and tag:nonesuch").isEmpty)
    }

    @Test func unknownFlagIsAnError() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml"]])
        try tree.update()
        #expect(throws: QueryError.self) { try tree.ids("flag:shiny") }
    }
}

/// notmuch's S-expression queries read into the infix tree (notmuch-sexp-queries(7)).
@Suite struct SexpQueryTests {
    static func t(_ field: String?, _ value: String, phrase: Bool = false) -> QueryNode {
        .text(field: field, value: value, phrase: phrase, position: 1)
    }

    @Test func forms() throws {
        #expect(try SexpQuery.parse("()") == .all)
        #expect(try SexpQuery.parse("(and)") == .all)
        #expect(try SexpQuery.parse("(or)") == .not(.all))
        #expect(
            try SexpQuery.parse("(and wonderful \"wizard x\")") == .and([Self.t(nil, "wonderful"), Self.t(nil, "wizard x", phrase: true)]))
        // Fields combine by their operator: tag with and, id with or.
        #expect(try SexpQuery.parse("(tag inbox unread)") == .and([Self.t("tag", "inbox"), Self.t("tag", "unread")]))
        #expect(try SexpQuery.parse("(id a b)") == .or([Self.t("id", "a"), Self.t("id", "b")]))
        #expect(try SexpQuery.parse("(not a b)") == .and([.not(Self.t(nil, "a")), .not(Self.t(nil, "b"))]))
        #expect(try SexpQuery.parse("(date 2009-10-01 *)") == Self.t("date", "2009-10-01.."))
        #expect(try SexpQuery.parse("(subject (starts-with wiz))") == Self.t("subject", "wiz*"))
        #expect(try SexpQuery.parse("(thread (of (from alice)))") == .threadOf(Self.t("from", "alice")))
        #expect(try SexpQuery.parse("(infix \"tag:a\")") == .text(field: "tag", value: "a", phrase: false, position: 1))
    }

    /// Saved queries: `squery.NAME` (S-expressions, macros with `,param`), `query.NAME` (infix).
    @Test func savedQueriesAndMacros() throws {
        let saved: [String: String] = [
            "squery.Inbox": "(tag inbox)", "squery.Subj": "(macro (s) (subject ,s))",
            "squery.Two": "(macro (a b) (and (Subj ,a) (tag ,b)))", "query.old": "from:alice"
        ]
        let parse = { (q: String) throws(QueryError) -> QueryNode in try SexpQuery.parse(q) { saved[$0] } }
        #expect(try parse("(Inbox)") == Self.t("tag", "inbox"))
        #expect(try parse("(Subj maildir)") == Self.t("subject", "maildir"))
        #expect(try parse("(Two x y)") == .and([Self.t("subject", "x"), Self.t("tag", "y")]))
        #expect(try parse("(query old)") == .text(field: "from", value: "alice", phrase: false, position: 1))
        #expect(try parse("(query none)") == .not(.all))
        for (q, problem) in [
            ("(Subj)", "too few arguments to macro"), ("(Subj a b)", "too many arguments to macro"),
            ("(subject (rx ,u))", "undefined parameter 'u'"), ("(macro (a) a)", "macro definition not permitted here"),
            ("(Unknown x)", "unknown prefix 'Unknown'")
        ] {
            #expect { try parse(q) } throws: { ($0 as? QueryError)?.problem == problem }
        }
    }

    /// notmuch's words for what it cannot read.
    @Test(arguments: [
        ("(", "invalid s-expression: '('"), ("(foo)", "unknown prefix 'foo'"),
        ("((foo))", "unexpected list in field/operation position"), ("(subject (subject foo))", "nested field: 'subject' inside 'subject'"),
        ("(starts-with a b)", "'starts-with' expects single atom as argument"),
        ("(body (starts-with foo))", "'body' does not support wildcard queries"), ("(regex x)", "illegal 'regex' outside field"),
        ("(body (rx foo))", "'rx' not supported in field 'body'"), ("(property a)", "(property …) is not supported by mo-index"),
        ("(to (lastmod))", "nested field: 'lastmod' inside 'to'"), ("(lastmod apples)", "bad 'from' revision: 'apples'"),
        ("(lastmod 1 pears)", "bad 'to' revision: 'pears'"), ("(lastmod (to))", "expected atom as first argument of 'lastmod'"),
        ("(lastmod 1 (to))", "expected atom as second argument of 'lastmod'"),
        ("(lastmod 1 2 3)", "'lastmod' expects maximum of two arguments"), ("(id (of x))", "'of' unsupported inside 'id'"),
        ("(query)", "'query' expects single atom as argument"), ("(to (query x))", "'query' not supported inside 'to'"),
        ("(body *)", "'body' does not support wildcard queries")
    ])
    func errors(_ text: String, _ problem: String) {
        #expect { try SexpQuery.parse(text) } throws: { ($0 as? QueryError)?.problem == problem }
    }
}
