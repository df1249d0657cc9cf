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
        if case .threadOf = try QueryParser.parse("thread:{from:a}") {} else { Issue.record("thread:{}") }
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

    @Test func unknownFlagIsAnError() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml"]])
        try tree.update()
        #expect(throws: QueryError.self) { try tree.ids("flag:shiny") }
    }
}
