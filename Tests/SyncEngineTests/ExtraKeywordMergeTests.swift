import Testing
@testable import SyncEngine

/// `ExtraKeywordMerge`, row by row of its rule table, with the unseen sides, the policy's directions and a
/// server that refuses new keywords.
@Suite struct ExtraKeywordMergeTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var base: Set<String>
        var local: Set<String>?
        var server: Set<String>?
        var push = true, pull = true
        var refused: Set<String> = []
        var add: Set<String> = [], remove: Set<String> = []
        var newLocal: Set<String>
        var newBase: Set<String>
        var reasons: [String: ExtraKeywordMerge.Reason] = [:]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "unchanged", base: ["a"], local: ["a"], server: ["a"], newLocal: ["a"], newBase: ["a"]),
        Case(name: "sides not seen are the base", base: ["a"], local: nil, server: nil, newLocal: ["a"], newBase: ["a"]),
        Case(
            name: "local added", base: [], local: ["a"], server: [], add: ["a"], newLocal: ["a"], newBase: ["a"],
            reasons: ["a": .localChanged]),
        Case(
            name: "local removed, server not listed", base: ["a"], local: [], server: nil, remove: ["a"], newLocal: [], newBase: [],
            reasons: ["a": .localChanged]),
        Case(
            name: "server added (a download)", base: [], local: [], server: ["a", "b"], newLocal: ["a", "b"], newBase: ["a", "b"],
            reasons: ["a": .serverChanged, "b": .serverChanged]),
        Case(
            name: "server removed, local file unchanged", base: ["a"], local: nil, server: [], newLocal: [], newBase: [],
            reasons: ["a": .serverChanged]),
        Case(
            name: "both added alike (a run killed before its base)", base: [], local: ["a"], server: ["a"], newLocal: ["a"],
            newBase: ["a"], reasons: ["a": .bothChanged]),
        Case(
            name: "one each way", base: ["a", "b"], local: ["a", "b", "c"], server: ["b"], add: ["c"], newLocal: ["b", "c"],
            newBase: ["b", "c"], reasons: ["a": .serverChanged, "c": .localChanged]),
        Case(
            name: "push off: the local change waits", base: [], local: ["a"], server: [], push: false, newLocal: ["a"], newBase: [],
            reasons: ["a": .localChanged]),
        Case(
            name: "pull off: the server change waits", base: [], local: [], server: ["a"], pull: false, newLocal: [], newBase: [],
            reasons: ["a": .serverChanged]),
        Case(
            name: "refused keyword rides along locally", base: [], local: ["a"], server: [], refused: ["a"], newLocal: ["a"],
            newBase: [], reasons: ["a": .localChanged]),
        Case(
            name: "a refused keyword leaves the base, never read as removed there", base: ["a"], local: ["a"], server: [],
            refused: ["a"], newLocal: ["a"], newBase: [], reasons: ["a": .localChanged]),
        Case(
            name: "case: the server's spelling, and a removal in another case is a removal", base: ["Foo", "Bar"],
            local: ["bar"], server: ["foo", "BAR"], remove: ["foo"], newLocal: ["BAR"], newBase: ["BAR"],
            reasons: ["foo": .localChanged])
    ]

    @Test(arguments: cases) func merge(_ c: Case) {
        let o = ExtraKeywordMerge.merge(
            base: c.base, local: c.local, server: c.server, push: c.push, pull: c.pull, storable: { !c.refused.contains($0) })
        #expect(o.serverAdd == c.add)
        #expect(o.serverRemove == c.remove)
        #expect(o.local == c.newLocal)
        #expect(o.base == c.newBase)
        #expect(o.reasons == c.reasons)
    }

    /// Idempotent: merging again with the sides as the merge left them changes nothing.
    @Test(arguments: cases) func mergeAgainIsANoOp(_ c: Case) {
        let o = ExtraKeywordMerge.merge(
            base: c.base, local: c.local, server: c.server, push: c.push, pull: c.pull, storable: { !c.refused.contains($0) })
        var server = c.server ?? c.base.subtracting(c.refused)
        server.formUnion(o.serverAdd)
        server.subtract(o.serverRemove)
        let again = ExtraKeywordMerge.merge(
            base: o.base, local: o.local, server: server, push: c.push, pull: c.pull, storable: { !c.refused.contains($0) })
        #expect(again.serverAdd.isEmpty && again.serverRemove.isEmpty)
        if c.push && c.pull { #expect(again.local == o.local) }
    }
}
