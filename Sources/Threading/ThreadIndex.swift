/// What one ``ThreadIndex/add(_:)`` or ``ThreadIndex/remove(messageID:)`` did to thread ids.
public struct ThreadIndexChange: Equatable, Sendable {
    /// The thread the message is in afterwards; nil if the message is not (or no longer) real.
    public var thread: ThreadID?
    /// Thread ids that stopped existing, each with the id its messages now carry
    /// ("thread X became Y"): merges, and anchor changes (see ``ThreadID``).
    public var renamed: [ThreadID: ThreadID] = [:]
    /// Thread ids that stopped existing with no successor (their last real message was removed).
    public var deleted: [ThreadID] = []

    /// A change record (for tests and callers that build expectations).
    public init(thread: ThreadID?, renamed: [ThreadID: ThreadID] = [:], deleted: [ThreadID] = []) {
        self.thread = thread
        self.renamed = renamed
        self.deleted = deleted
    }
}

/// Incremental threading the way notmuch does it at index time: a message joins the thread of
/// every id in its References and In-Reply-To; ids not seen yet become *ghosts* that a later
/// message can fill in; a message that links two threads merges them. The partition is the
/// connected components of the "links to" graph, so arrival order does not matter.
///
/// Removal follows notmuch (`_notmuch_message_delete`): threads are never split. A removed
/// message becomes a ghost while its thread still has a real message; when the last real
/// message goes, the thread and all its ghosts go. So after removals a thread can be larger
/// than a fresh index of the remaining messages would make it; ``rebuilt()`` gives the fresh
/// answer. Thread ids ignore ghosts, so an unsplit thread keeps its id across a rebuild.
///
/// Invariants: every set has at least one real message after each public call; a set's
/// `anchor` is its smallest real id; `idOfRoot`/`rootOfID` describe exactly the live sets.
public struct ThreadIndex: Sendable {
    // Nodes are messages and ghosts, indexed by Int32. Nodes of a deleted thread lose their
    // `nodeOf` entry and are never reused (a little memory until `rebuilt()`).
    private var ids: [String] = []
    private var nodeOf: [String: Int32] = [:]
    private var copies: [[ThreadInput]] = []  // distinct inputs; empty = ghost
    // Union-find (per node; meaningful on roots where noted).
    private var up: [Int32] = []
    private var size: [Int32] = []  // root: members
    private var realCount: [Int32] = []  // root: real members
    private var anchor: [Int32] = []  // root: smallest real member, -1 if none
    private var ring: [Int32] = []  // circular member list; splicing two rings merges them
    private var idOfRoot: [Int32: ThreadID] = [:]
    private var rootOfID: [ThreadID: Int32] = [:]

    /// An empty index.
    public init() {}

    /// Real messages.
    public private(set) var messageCount = 0
    /// Threads (sets with at least one real message).
    public var threadCount: Int { rootOfID.count }
    /// Ghosts: ids that are referenced, or were removed, but have no message.
    public var ghostCount: Int { nodeOf.count - messageCount }

    // MARK: - Updates

    /// Adds one message (one file of it). Adding an id already present as a real message
    /// (a duplicate file) links its headers too, as notmuch does with every file of a message.
    @discardableResult
    public mutating func add(_ input: ThreadInput) -> ThreadIndexChange {
        let node = intern(input.messageID)
        let links = input.links
        var before = Set<ThreadID>()
        if let id = idOfRoot[find(node)] { before.insert(id) }
        for link in links {
            if let other = nodeOf[link], let id = idOfRoot[find(other)] { before.insert(id) }
        }
        for id in before { retire(id) }

        if copies[Int(node)].isEmpty {
            messageCount += 1
            let root = find(node)
            realCount[Int(root)] += 1
            anchor[Int(root)] = smaller(anchor[Int(root)], node)
        }
        if !copies[Int(node)].contains(input) { copies[Int(node)].append(input) }
        for link in links { union(node, intern(link)) }

        let root = find(node)
        let id = ThreadID(anchor: ids[Int(anchor[Int(root)])])
        register(id, root)
        var change = ThreadIndexChange(thread: id)
        for old in before where old != id { change.renamed[old] = id }
        return change
    }

    /// Removes a message (all its files). It stays as a ghost while its thread has another
    /// real message; otherwise the whole thread, ghosts included, is dropped. Removing an
    /// unknown id or a ghost changes nothing.
    @discardableResult
    public mutating func remove(messageID: String) -> ThreadIndexChange {
        guard let node = nodeOf[messageID], !copies[Int(node)].isEmpty else {
            return ThreadIndexChange(thread: nil)
        }
        let root = find(node)
        let old = idOfRoot[root]!
        copies[Int(node)] = []
        messageCount -= 1
        realCount[Int(root)] -= 1
        retire(old)
        if realCount[Int(root)] == 0 {
            for member in members(root) { nodeOf[ids[Int(member)]] = nil }
            return ThreadIndexChange(thread: nil, deleted: [old])
        }
        if anchor[Int(root)] == node {
            // O(thread size); removals are rare next to additions.
            anchor[Int(root)] = members(root).filter { !copies[Int($0)].isEmpty }
                .reduce(-1, smaller)
        }
        let id = ThreadID(anchor: ids[Int(anchor[Int(root)])])
        register(id, root)
        var change = ThreadIndexChange(thread: nil)
        if id != old { change.renamed[old] = id }
        return change
    }

    /// A fresh index of the real messages here: what re-indexing from scratch would give.
    public func rebuilt() -> ThreadIndex {
        var index = ThreadIndex()
        for node in nodeOf.values.sorted() { for input in copies[Int(node)] { index.add(input) } }
        return index
    }

    // MARK: - Queries

    /// The thread of a message or ghost, nil for an unknown id.
    public func threadID(of messageID: String) -> ThreadID? {
        guard let node = nodeOf[messageID] else { return nil }
        return idOfRoot[findReadOnly(node)]
    }

    /// Whether `messageID` is a real message (false for ghosts and unknown ids).
    public func containsMessage(_ messageID: String) -> Bool {
        guard let node = nodeOf[messageID] else { return false }
        return !copies[Int(node)].isEmpty
    }

    /// Whether `messageID` is known only as a ghost.
    public func isGhost(_ messageID: String) -> Bool {
        guard let node = nodeOf[messageID] else { return false }
        return copies[Int(node)].isEmpty
    }

    /// All thread ids, sorted.
    public var threadIDs: [ThreadID] { rootOfID.keys.sorted() }

    /// The real messages of a thread, sorted by id; empty for an unknown thread.
    public func messageIDs(in thread: ThreadID) -> [String] {
        memberIDs(thread, real: true)
    }

    /// The ghosts of a thread, sorted by id.
    public func ghostIDs(in thread: ThreadID) -> [String] {
        memberIDs(thread, real: false)
    }

    /// Every thread's real messages, each sorted; threads in id order.
    public func partition() -> [[String]] {
        threadIDs.map { messageIDs(in: $0) }
    }

    /// The display tree of a thread (see ``ThreadTree``), nil for an unknown thread.
    public func tree(of thread: ThreadID) -> ThreadTree? {
        guard let root = rootOfID[thread] else { return nil }
        let nodes = members(root)
        let inputs = nodes.map { node -> ThreadInput? in
            copies[Int(node)].min(by: ThreadTree.displayOrder)
        }
        return ThreadTree(thread: thread, members: zip(nodes, inputs).map { (ids[Int($0)], $1) })
    }

    // MARK: - Internals

    private mutating func intern(_ id: String) -> Int32 {
        if let node = nodeOf[id] { return node }
        let node = Int32(ids.count)
        ids.append(id)
        nodeOf[id] = node
        copies.append([])
        up.append(node)
        size.append(1)
        realCount.append(0)
        anchor.append(-1)
        ring.append(node)
        return node
    }

    private mutating func find(_ node: Int32) -> Int32 {
        var x = node
        while up[Int(x)] != x {
            up[Int(x)] = up[Int(up[Int(x)])]  // path halving
            x = up[Int(x)]
        }
        return x
    }

    private func findReadOnly(_ node: Int32) -> Int32 {
        var x = node
        while up[Int(x)] != x { x = up[Int(x)] }
        return x
    }

    private mutating func union(_ a: Int32, _ b: Int32) {
        var ra = find(a), rb = find(b)
        if ra == rb { return }
        if size[Int(ra)] < size[Int(rb)] { swap(&ra, &rb) }
        up[Int(rb)] = ra
        size[Int(ra)] += size[Int(rb)]
        realCount[Int(ra)] += realCount[Int(rb)]
        anchor[Int(ra)] = smaller(anchor[Int(ra)], anchor[Int(rb)])
        ring.swapAt(Int(ra), Int(rb))
    }

    /// The node with the smaller id; -1 means none.
    private func smaller(_ a: Int32, _ b: Int32) -> Int32 {
        if a < 0 { return b }
        if b < 0 { return a }
        return precedes(ids[Int(b)], ids[Int(a)]) ? b : a
    }

    private func members(_ root: Int32) -> [Int32] {
        var out = [root]
        var x = ring[Int(root)]
        while x != root {
            out.append(x)
            x = ring[Int(x)]
        }
        return out
    }

    private func memberIDs(_ thread: ThreadID, real: Bool) -> [String] {
        guard let root = rootOfID[thread] else { return [] }
        return members(root).filter { copies[Int($0)].isEmpty != real }.map { ids[Int($0)] }
            .sorted(by: precedes)
    }

    private mutating func retire(_ id: ThreadID) {
        if let root = rootOfID.removeValue(forKey: id) { idOfRoot[root] = nil }
    }

    private mutating func register(_ id: ThreadID, _ root: Int32) {
        idOfRoot[root] = id
        rootOfID[id] = root
    }
}
