import Testing
import Threading

/// Shorthand: `msg("b", irt: ["a"], refs: ["a"], date: 2)`.
func msg(_ id: String, irt: [String] = [], refs: [String] = [], date: Int64? = nil) -> ThreadInput {
    ThreadInput(messageID: id, inReplyTo: irt, references: refs, date: date)
}

/// From raw header values, as notmuch reads them: `headerInput("<r@x>", irt: "Joe <joe@x> <p@x>")`.
func headerInput(_ messageID: String, irt: String? = nil, refs: String? = nil) -> ThreadInput {
    ThreadInput(messageIDHeader: messageID, inReplyToHeader: irt, referencesHeader: refs, syntheticMessageID: "")
}

func index(_ inputs: [ThreadInput]) -> ThreadIndex {
    var index = ThreadIndex()
    for input in inputs { index.add(input) }
    return index
}

func partition(_ index: ThreadIndex) -> Set<Set<String>> {
    Set(index.partition().map(Set.init))
}

/// All orderings of `items` (Heap's algorithm).
func permutations<T>(_ items: [T]) -> [[T]] {
    var a = items, out: [[T]] = []
    func generate(_ k: Int) {
        if k <= 1 { out.append(a); return }
        for i in 0..<k {
            generate(k - 1)
            a.swapAt(k % 2 == 0 ? i : 0, k - 1)
        }
    }
    generate(a.count)
    return out
}

@Suite struct ThreadIndexTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var inputs: [ThreadInput]
        var threads: Set<Set<String>>
        var ghosts: Set<String>
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "simple reply chain",
            inputs: [msg("a"), msg("b", irt: ["a"], refs: ["a"]), msg("c", irt: ["b"], refs: ["a", "b"])],
            threads: [["a", "b", "c"]], ghosts: []),
        Case(
            name: "unrelated messages stay apart",
            inputs: [msg("a"), msg("b"), msg("c", refs: ["b"])],
            threads: [["a"], ["b", "c"]], ghosts: []),
        Case(
            name: "ghost parent joins two siblings",
            inputs: [msg("b", refs: ["g"]), msg("c", irt: ["g"])],
            threads: [["b", "c"]], ghosts: ["g"]),
        Case(
            name: "late message merges two threads",
            inputs: [
                msg("a"), msg("b", refs: ["a"]), msg("c"), msg("d", refs: ["c"]),
                msg("e", refs: ["a", "c"])
            ],
            threads: [["a", "b", "c", "d", "e"]], ghosts: []),
        Case(
            name: "any reference links, not only the last (notmuch uses all of References)",
            inputs: [msg("a"), msg("x", refs: ["a", "gap", "b"]), msg("b")],
            threads: [["a", "b", "x"]], ghosts: ["gap"]),
        Case(
            name: "self-reference links nothing",
            inputs: [msg("a", irt: ["a"], refs: ["a"]), msg("b", refs: ["b"])],
            threads: [["a"], ["b"]], ghosts: []),
        Case(
            name: "reference loop",
            inputs: [msg("a", irt: ["b"], refs: ["b"]), msg("b", irt: ["a"], refs: ["a"])],
            threads: [["a", "b"]], ghosts: []),
        Case(
            name: "duplicate Message-ID: one message, links of every copy",
            inputs: [msg("a"), msg("a", refs: ["x"]), msg("b", refs: ["x"]), msg("a")],
            threads: [["a", "b"]], ghosts: ["x"]),
        Case(
            name: "synthetic id for a message without Message-ID",
            inputs: [msg("notmuch-sha1-0123"), msg("b", refs: ["notmuch-sha1-0123"])],
            threads: [["notmuch-sha1-0123", "b"]], ghosts: []),
        Case(
            name: "junk In-Reply-To still links its bracketed ids",
            inputs: [msg("p@x"), headerInput("<r@x>", irt: "Joe <joe@x> of today <p@x>")],
            threads: [["p@x", "r@x"]], ghosts: ["joe@x"]),
        Case(
            name: "References without brackets link nothing",
            inputs: [msg("p@x"), headerInput("<r@x>", refs: "p@x  <q@x>\n\t")],
            threads: [["p@x"], ["r@x"]], ghosts: ["q@x"]),
        Case(
            name: "one-character ids are dropped as notmuch drops them",
            inputs: [msg("p"), headerInput("<r>", irt: "<p>")],
            threads: [["p"], ["<r>"]], ghosts: [])
    ]

    @Test(arguments: cases)
    func partitionCase(_ c: Case) {
        let idx = index(c.inputs)
        #expect(partition(idx) == c.threads)
        let ghosts = Set(idx.threadIDs.flatMap { idx.ghostIDs(in: $0) })
        #expect(ghosts == c.ghosts)
        #expect(idx.messageCount == Set(c.inputs.map(\.messageID)).count)
        // Arrival order never matters, for the partition or for the thread ids.
        let reversed = index(c.inputs.reversed())
        #expect(partition(reversed) == c.threads)
        #expect(reversed.threadIDs == idx.threadIDs)
    }

    static let fourMessages = [
        msg("a", date: 1),
        msg("b", irt: ["a"], refs: ["a"], date: 2),
        msg("c", irt: ["b"], refs: ["a", "b"], date: 3),
        msg("d", irt: ["a"], refs: ["a"], date: 4)
    ]

    @Test func everyPermutationGivesTheSamePartitionAndTree() {
        let reference = index(Self.fourMessages)
        let id = reference.threadID(of: "a")!
        let tree = reference.tree(of: id)
        for order in permutations(Self.fourMessages) {
            let idx = index(order)
            #expect(partition(idx) == [["a", "b", "c", "d"]])
            #expect(idx.threadID(of: "d") == id)
            #expect(idx.tree(of: id) == tree)
        }
    }

    @Test func everyPermutationOfAGhostJoinedThreadAgrees() {
        let inputs = [
            msg("b", refs: ["g"]), msg("c", refs: ["g", "b"]), msg("d", refs: ["h"]),
            msg("e", refs: ["g", "h"])
        ]
        let reference = index(inputs)
        for order in permutations(inputs) {
            let idx = index(order)
            #expect(partition(idx) == [["b", "c", "d", "e"]])
            #expect(idx.threadIDs == reference.threadIDs)
        }
    }

    // MARK: - Thread ids

    @Test func threadIDIsTheHashOfTheSmallestRealID() {
        let idx = index([msg("m5@x", refs: ["a-ghost@x"]), msg("m3@x", refs: ["m5@x"])])
        let id = idx.threadID(of: "m5@x")!
        #expect(id == ThreadID(anchor: "m3@x"))  // the ghost "a-ghost@x" is smaller but ignored
        #expect(id.rawValue.count == 16)
        #expect(id.rawValue.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(idx.threadID(of: "a-ghost@x") == id)
        #expect(idx.threadID(of: "unknown") == nil)
    }

    @Test func addReportsMergesAndAnchorChangesAsRenames() {
        var idx = ThreadIndex()
        let t2 = idx.add(msg("m2@x")).thread!
        let t9 = idx.add(msg("m9@x", refs: ["m5@x"])).thread!
        #expect(t2 != t9)
        // m5 links m9's thread (via its ghost) and m2's: the two merge under m2's anchor.
        let merge = idx.add(msg("m5@x", refs: ["m2@x"]))
        #expect(merge.thread == t2)
        #expect(merge.renamed == [t9: t2])
        // A smaller id joining moves the anchor: every message's thread id changes.
        let smaller = idx.add(msg("m1@x", irt: ["m9@x"]))
        let t1 = ThreadID(anchor: "m1@x")
        #expect(smaller == ThreadIndexChange(thread: t1, renamed: [t2: t1]))
        #expect(idx.threadIDs == [t1])
        #expect(idx.messageIDs(in: t1) == ["m1@x", "m2@x", "m5@x", "m9@x"])
        // A larger id joining changes nothing.
        #expect(idx.add(msg("m7@x", refs: ["m1@x"])) == ThreadIndexChange(thread: t1))
    }

    // MARK: - Removal

    @Test func removedMessageBecomesAGhostWhileItsThreadLives() {
        var idx = index([msg("a"), msg("b", refs: ["a"])])
        let t = idx.threadID(of: "a")!
        #expect(idx.remove(messageID: "b") == ThreadIndexChange(thread: nil))
        #expect(idx.isGhost("b"))
        #expect(!idx.containsMessage("b"))
        #expect(idx.messageIDs(in: t) == ["a"])
        #expect(idx.ghostIDs(in: t) == ["b"])
        // Adding it back fills the ghost; same thread.
        #expect(idx.add(msg("b")).thread == t)
        // Removing the last real message drops the thread with its ghosts.
        idx.remove(messageID: "b")
        #expect(idx.remove(messageID: "a") == ThreadIndexChange(thread: nil, deleted: [t]))
        #expect(idx.threadCount == 0 && idx.messageCount == 0 && idx.ghostCount == 0)
        #expect(!idx.isGhost("a") && !idx.isGhost("b"))
        #expect(idx.remove(messageID: "a") == ThreadIndexChange(thread: nil))  // unknown: no-op
    }

    @Test func removingTheAnchorRenamesTheThread() {
        var idx = index([msg("a"), msg("b", refs: ["a"])])
        let change = idx.remove(messageID: "a")
        #expect(change.renamed == [ThreadID(anchor: "a"): ThreadID(anchor: "b")])
        #expect(idx.threadID(of: "b") == ThreadID(anchor: "b"))
        #expect(idx.rebuilt().threadIDs == idx.threadIDs)  // unsplit: same id as a fresh index
    }

    /// notmuch never splits a thread on removal; a fresh index of what remains may.
    @Test func removalDoesNotSplitButRebuildDoes() {
        var idx = index([msg("p"), msg("a", refs: ["p"]), msg("q", refs: ["a"])])
        idx.remove(messageID: "a")
        #expect(partition(idx) == [["p", "q"]])
        #expect(partition(idx.rebuilt()) == [["p"], ["q"]])
        #expect(idx.rebuilt().ghostCount == 1)  // "a", still named by q
    }

    @Test func rebuildKeepsEveryCopyOfADuplicate() {
        let idx = index([msg("a", refs: ["x"]), msg("a", refs: ["y"]), msg("b", refs: ["y"]), msg("c", refs: ["x"])])
        #expect(partition(idx) == [["a", "b", "c"]])
        #expect(partition(idx.rebuilt()) == partition(idx))
        #expect(idx.rebuilt().threadIDs == idx.threadIDs)
    }
}
