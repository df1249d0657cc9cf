/// One thread laid out for display: every message once, in reading order, with its depth.
///
/// Parents (the partition itself never depends on them):
/// - a message's parent is notmuch's "replyto": a clean In-Reply-To, else the last
///   reference, else the last In-Reply-To id (``ThreadInput``); self-references never count;
/// - a ghost's parent comes from References chains, JWZ-style: in `A B C`, B's parent is A
///   and C's is B, first claim wins, claims taken from messages in date order; the
///   In-Reply-To id, if missing from References, extends the chain;
/// - loops (A names B, B names A, or ghost chains that disagree) are cut at their oldest
///   message (ghosts have no date; a loop of ghosts only is cut at its smallest id), which
///   becomes a root, as notmuch makes the oldest message of a cycle top-level.
///
/// Ghosts then stay only as placeholders joining two or more subtrees: a ghost with one
/// child is replaced by that child, a childless ghost disappears. Siblings (and roots) are
/// ordered by date (a ghost by its subtree's oldest date), missing dates first, then by id.
/// Everything is decided from the thread's content, so arrival order cannot change it.
///
/// Versus notmuch's own display (`lib/thread.cc`), which uses the same parent rule: notmuch
/// shows no ghosts, so replies to one missing message appear as separate roots or (for all
/// but the last root) hang under their deepest present reference; here they sit under a
/// placeholder. Roots and siblings are date-ordered in both.
public struct ThreadTree: Sendable, Equatable {
    /// One displayed entry.
    public struct Entry: Sendable, Equatable {
        /// The message's id (a ghost's id for a placeholder).
        public var messageID: String
        /// True for a placeholder standing for a missing message.
        public var isGhost: Bool
        /// 0 for roots.
        public var depth: Int
        /// Index in ``ThreadTree/entries`` of the parent, nil for roots.
        public var parent: Int?
        /// The message's date, nil for ghosts and undated messages.
        public var date: Int64?
    }

    /// The thread.
    public let thread: ThreadID
    /// Pre-order: each entry is followed by its subtree; siblings in date order.
    public let entries: [Entry]

    /// Lays out `members` (id, input; nil input = ghost); they must form one thread.
    init(thread: ThreadID, members: [(String, ThreadInput?)]) {
        self.thread = thread
        var layout = Layout(members)
        self.entries = layout.entries()
    }

    /// The total order used to pick one of several files of one message and to process
    /// messages: by date (nil first), then id, then the rest of the input so it is total.
    static func displayOrder(_ a: ThreadInput, _ b: ThreadInput) -> Bool {
        if a.date != b.date { return (a.date ?? .min) < (b.date ?? .min) }
        if a.messageID != b.messageID { return precedes(a.messageID, b.messageID) }
        if a.references != b.references {
            return a.references.lexicographicallyPrecedes(b.references, by: precedes)
        }
        if a.inReplyTo != b.inReplyTo {
            return a.inReplyTo.lexicographicallyPrecedes(b.inReplyTo, by: precedes)
        }
        return precedes(a.strictInReplyTo ?? "", b.strictInReplyTo ?? "")
    }
}

/// The layout algorithm over local indices 0..<n; all passes are iterative and O(n log n),
/// so a 10,000-deep reply chain neither overflows the stack nor goes quadratic.
private struct Layout {
    let ids: [String]
    let inputs: [ThreadInput?]
    var parent: [Int]  // -1 = root
    let local: [String: Int]

    init(_ members: [(String, ThreadInput?)]) {
        ids = members.map(\.0)
        inputs = members.map(\.1)
        parent = Array(repeating: -1, count: members.count)
        var local: [String: Int] = [:]
        for (i, id) in ids.enumerated() { local[id] = i }
        self.local = local
    }

    func isGhost(_ i: Int) -> Bool { inputs[i] == nil }

    func date(_ i: Int) -> Int64? { inputs[i]?.date }

    /// (date, id) order of real messages: picks where a loop is cut.
    func older(_ a: Int, _ b: Int) -> Bool {
        let da = date(a) ?? .min, db = date(b) ?? .min
        if da != db { return da < db }
        return precedes(ids[a], ids[b])
    }

    mutating func entries() -> [ThreadTree.Entry] {
        assignParents()
        breakLoops()
        return emit(prune())
    }

    mutating func assignParents() {
        let messages = inputs.indices.filter { inputs[$0] != nil }
            .sorted { ThreadTree.displayOrder(inputs[$0]!, inputs[$1]!) }
        for m in messages {
            let input = inputs[m]!
            if let p = input.preferredParent.flatMap({ local[$0] }) { parent[m] = p }
            var chain = input.references
            for irt in input.inReplyTo where !chain.contains(irt) { chain.append(irt) }
            var previous: Int?
            for id in chain where id != input.messageID {
                guard let node = local[id] else { continue }
                if let previous, previous != node, isGhost(node), parent[node] < 0 {
                    parent[node] = previous
                }
                previous = node
            }
        }
    }

    /// Cuts every parent cycle once, at its oldest message (else smallest ghost id). O(n):
    /// each node is walked once; `state` 1 = on the current path, 2 = finished.
    mutating func breakLoops() {
        var state = Array(repeating: UInt8(0), count: ids.count)
        for start in ids.indices where state[start] == 0 {
            var path: [Int] = []
            var x = start
            while x >= 0, state[x] == 0 {
                state[x] = 1
                path.append(x)
                x = parent[x]
            }
            if x >= 0, state[x] == 1 {
                let cycle = path[path.firstIndex(of: x)!...]
                let reals = cycle.filter { !isGhost($0) }
                let cut =
                    reals.isEmpty
                    ? cycle.min { precedes(ids[$0], ids[$1]) }!
                    : reals.min(by: older)!
                parent[cut] = -1
            }
            for node in path { state[node] = 2 }
        }
    }

    /// Children lists after dropping ghosts with fewer than two children; returns roots.
    /// Also computes each subtree's oldest date for ordering placeholders.
    func prune() -> (roots: [Int], children: [[Int]], key: [Int64?]) {
        var children = Array(repeating: [Int](), count: ids.count)
        var roots: [Int] = []
        for i in ids.indices {
            if parent[i] >= 0 { children[parent[i]].append(i) } else { roots.append(i) }
        }
        // Post-order without recursion: reverse of a pre-order where children follow parents.
        var order: [Int] = []
        var stack = roots
        while let x = stack.popLast() {
            order.append(x)
            stack.append(contentsOf: children[x])
        }
        var kept = children
        var key = inputs.map { $0?.date }
        var hasKey = inputs.map { $0 != nil }
        for x in order.reversed() {
            var out: [Int] = []
            for c in children[x] {
                if isGhost(c), kept[c].count < 2 { out.append(contentsOf: kept[c]) } else { out.append(c) }
            }
            kept[x] = out
            if isGhost(x) {
                for c in out where hasKey[c] {
                    if !hasKey[x] || (key[c] ?? .min) < (key[x] ?? .min) {
                        key[x] = key[c]
                        hasKey[x] = true
                    }
                }
            }
        }
        var top: [Int] = []
        for r in roots {
            if isGhost(r), kept[r].count < 2 { top.append(contentsOf: kept[r]) } else { top.append(r) }
        }
        return (top, kept, key)
    }

    func emit(_ pruned: (roots: [Int], children: [[Int]], key: [Int64?])) -> [ThreadTree.Entry] {
        let key = pruned.key
        func before(_ a: Int, _ b: Int) -> Bool {
            let ka = key[a] ?? .min, kb = key[b] ?? .min
            if ka != kb { return ka < kb }
            return precedes(ids[a], ids[b])
        }
        var entries: [ThreadTree.Entry] = []
        entries.reserveCapacity(ids.count)
        // Stack of (node, depth, parent entry); pushed in reverse so the oldest pops first.
        var stack: [(Int, Int, Int?)] = pruned.roots.sorted(by: before).reversed().map { ($0, 0, nil) }
        while let (x, depth, up) = stack.popLast() {
            let index = entries.count
            entries.append(
                .init(
                    messageID: ids[x], isGhost: isGhost(x), depth: depth, parent: up, date: date(x)))
            for c in pruned.children[x].sorted(by: before).reversed() {
                stack.append((c, depth + 1, index))
            }
        }
        return entries
    }
}
