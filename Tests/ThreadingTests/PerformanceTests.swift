import Testing
import Threading

/// Scale checks. Bounds are loose enough for debug builds on a loaded 2-core machine; they
/// catch quadratic behaviour, not regressions of a few percent. Timings are printed; release
/// figures (`swift test -c release --filter PerformanceTests`) are in the module's report.
@Suite struct PerformanceTests {
    /// A deterministic shuffle (64-bit LCG), so arrival order is scrambled but reproducible.
    static func shuffled<T>(_ items: [T], seed: UInt64 = 42) -> [T] {
        var a = items, state = seed
        for i in stride(from: a.count - 1, to: 0, by: -1) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            a.swapAt(i, Int((state >> 33) % UInt64(i + 1)))
        }
        return a
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func time<T>(_ label: String, _ body: () -> T) -> (T, Double) {
        let clock = ContinuousClock()
        var result: T?
        let elapsed = clock.measure { result = body() }
        print("\(label): \(String(format: "%.3f", seconds(elapsed))) s")
        return (result!, seconds(elapsed))
    }

    /// 32,500 messages in 3,250 ten-message threads, arriving shuffled, each reply carrying
    /// its whole ancestor chain in References.
    @Test func thirtyTwoThousandMessages() {
        var inputs: [ThreadInput] = []
        for t in 0..<3_250 {
            var chain: [String] = []
            for m in 0..<10 {
                let id = "\(m).\(t).\(t &* 7919 % 1000)@host\(t % 17).example.org"
                // Replies alternate between the previous message and the root.
                let parentChain = m % 3 == 2 ? Array(chain.prefix(1)) : chain
                inputs.append(
                    ThreadInput(
                        messageID: id, inReplyTo: parentChain.suffix(1), references: parentChain,
                        date: Int64(t * 100 + m)))
                chain = parentChain + [id]
            }
        }
        let arrival = Self.shuffled(inputs)
        let (index, elapsed) = Self.time("add 32,500 messages") {
            var index = ThreadIndex()
            for input in arrival { index.add(input) }
            return index
        }
        #expect(index.threadCount == 3_250)
        #expect(index.messageCount == 32_500)
        #expect(elapsed < 10)
        let (count, treeTime) = Self.time("3,250 trees") {
            index.threadIDs.reduce(0) { $0 + index.tree(of: $1)!.entries.count }
        }
        #expect(count == 32_500)
        #expect(treeTime < 10)
    }

    /// LKML-style: a 3,000-message patch discussion, every message naming up to 150 ancestors.
    @Test func longReferencesChains() {
        var inputs: [ThreadInput] = []
        var ids: [String] = []
        for m in 0..<3_000 {
            let id = "patch-\(m)@lkml.example"
            let parent = m == 0 ? nil : (m % 4 == 0 ? m / 2 : m - 1)
            var refs: [String] = []
            var p = parent
            while let q = p, refs.count < 150 { refs.append(ids[q]); p = q == 0 ? nil : (q % 4 == 0 ? q / 2 : q - 1) }
            inputs.append(
                ThreadInput(
                    messageID: id, inReplyTo: parent.map { [ids[$0]] } ?? [],
                    references: refs.reversed(), date: Int64(m)))
            ids.append(id)
        }
        let (index, elapsed) = Self.time("add 3,000 messages x 150 references") {
            var index = ThreadIndex()
            for input in Self.shuffled(inputs) { index.add(input) }
            return index
        }
        #expect(index.threadCount == 1)
        #expect(elapsed < 10)
        let (tree, treeTime) = Self.time("tree of 3,000") { index.tree(of: index.threadIDs[0])! }
        #expect(tree.entries.count == 3_000)
        #expect(tree.entries[0].messageID == "patch-0@lkml.example")
        #expect(treeTime < 10)
    }

    /// 10,000 replies to one message, and a 10,000-deep chain (no recursion, no quadratic walk).
    @Test func hugeThreads() {
        let flat =
            [ThreadInput(messageID: "root@x", date: 0)]
            + (1...10_000).map { ThreadInput(messageID: "r\($0)@x", inReplyTo: ["root@x"], references: ["root@x"], date: Int64($0)) }
        let (flatIndex, flatTime) = Self.time("10,000 replies to one message") {
            var index = ThreadIndex()
            for input in Self.shuffled(flat) { index.add(input) }
            _ = index.tree(of: index.threadIDs[0])
            return index
        }
        #expect(flatIndex.threadCount == 1)
        #expect(flatTime < 10)

        let deep = (0..<10_000).map { m in
            ThreadInput(
                messageID: "d\(m)@x", inReplyTo: m == 0 ? [] : ["d\(m - 1)@x"],
                references: (max(0, m - 20)..<m).map { "d\($0)@x" }, date: Int64(m))
        }
        let (tree, deepTime) = Self.time("10,000-deep chain, add + tree") {
            var index = ThreadIndex()
            for input in Self.shuffled(deep) { index.add(input) }
            return index.tree(of: index.threadIDs[0])!
        }
        #expect(tree.entries.last?.depth == 9_999)
        #expect(deepTime < 10)
    }
}
