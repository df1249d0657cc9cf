import Testing
import Threading

/// The tree of the (single) thread containing `inputs[0]`, as "id@depth" strings, ghosts as "(id)@depth".
func layout(_ inputs: [ThreadInput]) -> [String] {
    let idx = index(inputs)
    let tree = idx.tree(of: idx.threadID(of: inputs[0].messageID)!)!
    return tree.entries.map { ($0.isGhost ? "(\($0.messageID))" : $0.messageID) + "@\($0.depth)" }
}

@Suite struct ThreadTreeTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var inputs: [ThreadInput]
        var expected: [String]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "reply chain",
            inputs: [
                msg("a", date: 1), msg("b", irt: ["a"], refs: ["a"], date: 2),
                msg("c", irt: ["b"], refs: ["a", "b"], date: 3)
            ],
            expected: ["a@0", "b@1", "c@2"]),
        Case(
            name: "siblings ordered by date, not id or arrival",
            inputs: [
                msg("a", date: 1), msg("c", irt: ["a"], date: 3), msg("b", irt: ["a"], date: 5),
                msg("d", irt: ["a"], date: 2)
            ],
            expected: ["a@0", "d@1", "c@1", "b@1"]),
        Case(
            name: "ghost with two children stays as a placeholder",
            inputs: [msg("b", refs: ["g"], date: 2), msg("c", refs: ["g"], date: 1)],
            expected: ["(g)@0", "c@1", "b@1"]),
        Case(
            name: "ghost with one child is pruned",
            inputs: [msg("a", date: 1), msg("c", irt: ["g"], refs: ["a", "g"], date: 3)],
            expected: ["a@0", "c@1"]),
        Case(
            name: "ghost chain from References places a reply under its real ancestor",
            inputs: [
                msg("a", date: 1), msg("d", irt: ["g2"], refs: ["a", "g1", "g2"], date: 4),
                msg("e", irt: ["g2"], refs: ["a", "g1", "g2"], date: 5)
            ],
            expected: ["a@0", "(g2)@1", "d@2", "e@2"]),
        Case(
            name: "clean In-Reply-To beats the last reference",
            inputs: [
                msg("a", date: 1), msg("b", irt: ["a"], date: 2),
                msg("c", irt: ["a"], refs: ["a", "b"], date: 3)
            ],
            expected: ["a@0", "b@1", "c@1"]),
        Case(
            name: "junk In-Reply-To loses to the last reference",
            inputs: [
                msg("a", date: 1), msg("b", irt: ["a"], date: 2),
                ThreadInput(messageID: "c", inReplyTo: ["x", "a"], references: ["a", "b"], date: 3)
            ],
            expected: ["a@0", "b@1", "c@2"]),  // ghost x hangs under b, childless: pruned
        Case(
            name: "self-reference is ignored",
            inputs: [msg("a", irt: ["a"], refs: ["a"], date: 1), msg("b", irt: ["a"], date: 2)],
            expected: ["a@0", "b@1"]),
        Case(
            name: "reference loop is cut at the oldest message",
            inputs: [msg("b", irt: ["a"], refs: ["a"], date: 2), msg("a", irt: ["b"], refs: ["b"], date: 1)],
            expected: ["a@0", "b@1"]),
        Case(
            name: "three-message loop",
            inputs: [msg("a", irt: ["c"], date: 3), msg("b", irt: ["a"], date: 1), msg("c", irt: ["b"], date: 2)],
            expected: ["b@0", "c@1", "a@2"]),
        Case(
            name: "disagreeing ghost chains do not loop",
            inputs: [
                msg("m", refs: ["g1", "g2"], date: 1), msg("n", refs: ["g2", "g1"], date: 2),
                msg("o", refs: ["g1"], date: 3)
            ],
            expected: ["(g1)@0", "m@1", "n@1", "o@1"]),  // g1<->g2 cut at g1; g2 kept one child
        Case(
            name: "undated messages sort first",
            inputs: [msg("a", date: 1), msg("b", irt: ["a"], date: 5), msg("c", irt: ["a"])],
            expected: ["a@0", "c@1", "b@1"])
    ]

    @Test(arguments: cases)
    func treeCase(_ c: Case) {
        #expect(layout(c.inputs) == c.expected)
        for order in permutations(c.inputs) where c.inputs.count <= 5 {
            #expect(layout(order) == c.expected)
        }
    }

    @Test func parentIndicesAndDepthsAgree() {
        let idx = index([
            msg("a", date: 1), msg("b", irt: ["a"], date: 2), msg("c", irt: ["b"], date: 3),
            msg("d", irt: ["a"], date: 4)
        ])
        let tree = idx.tree(of: idx.threadID(of: "a")!)!
        #expect(tree.entries.map(\.parent) == [nil, 0, 1, 0])
        for entry in tree.entries {
            #expect(entry.depth == (entry.parent.map { tree.entries[$0].depth + 1 } ?? 0))
        }
        #expect(tree.entries.map(\.date) == [1, 2, 3, 4])
        #expect(idx.tree(of: ThreadID(rawValue: "0000000000000000")) == nil)
    }
}
