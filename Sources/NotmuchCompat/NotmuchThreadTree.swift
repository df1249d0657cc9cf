/// The tree `notmuch show` prints for one thread (`_resolve_thread_relationships` in notmuch's
/// lib/thread.cc), step for step, so a thread with missing messages is laid out as notmuch lays it out.
/// mo's own ``Threading/ThreadTree`` (placeholders for missing messages) is mo-index's display; this is
/// notmuch's, whose front ends expect its shape.
///
/// With the members oldest first (ties in index order):
///
/// | step | rule |
/// |------|------|
/// | 1. reply-to | every member but the oldest whose reply-to id (a clean In-Reply-To, else the last reference, else the last In-Reply-To id) is in the thread becomes that message's reply; the others are maybe-top-level |
/// | 2. oldest   | the oldest is tried last: maybe-top-level (at the end of the list) when the list is empty or its reply-to is not in the thread |
/// | 3. depths   | each maybe-top-level message's subtree is labelled with depths from 0 |
/// | 4. references | each maybe-top-level message but the last (or every one, once one is top level) hangs under the deepest of its references in the thread (byte order of ids, the first at the greatest depth); one with none is top level |
/// | 5. order    | top level and every reply list sorted by date, stable |
///
/// Depths are not relabelled in step 4, as in notmuch.
public enum NotmuchThreadTree {
    public struct Member: Sendable {
        public var id: String
        /// notmuch's reply-to id (its `replyto` term), if any.
        public var replyTo: String?
        /// Every id of References and In-Reply-To but the message's own (notmuch's `reference` terms).
        public var references: Set<String>
        public var date: Int64

        public init(id: String, replyTo: String?, references: Set<String>, date: Int64) {
            self.id = id
            self.replyTo = replyTo
            self.references = references
            self.date = date
        }
    }

    public struct Node: Equatable, Sendable {
        public var id: String
        public var replies: [Node]
    }

    /// `members` oldest first (the caller orders ties).
    public static func layout(_ members: [Member]) -> [Node] {
        guard !members.isEmpty else { return [] }
        var index: [String: Int] = [:]
        for (i, m) in members.enumerated() where index[m.id] == nil { index[m.id] = i }
        var replies = [[Int]](repeating: [], count: members.count)
        func viaReplyTo(_ i: Int) -> Bool {
            guard let r = members[i].replyTo, !r.isEmpty, let parent = index[r] else { return false }
            replies[parent].append(i)
            return true
        }
        // 1, 2
        var maybeTop: [Int] = []
        for i in members.indices.dropFirst() where !viaReplyTo(i) { maybeTop.append(i) }
        if maybeTop.isEmpty || !viaReplyTo(0) { maybeTop.append(0) }
        // 3
        var depth = [Int](repeating: 0, count: members.count)
        var labelled = Set<Int>()
        func label(_ i: Int, _ d: Int) {
            guard labelled.insert(i).inserted else { return }  // a cycle of replies is walked once
            depth[i] = d
            for c in replies[i] { label(c, d + 1) }
            labelled.remove(i)
        }
        for r in maybeTop { label(r, 0) }
        // 4
        var top: [Int] = []
        for (k, r) in maybeTop.enumerated() {
            guard k < maybeTop.count - 1 || !top.isEmpty else {
                top.append(r)
                continue
            }
            var parent: Int?
            for ref in members[r].references.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                guard let p = index[ref] else { continue }
                if parent == nil || depth[p] > depth[parent!] { parent = p }
            }
            if let parent { replies[parent].append(r) } else { top.append(r) }
        }
        // 5
        var visiting = Set<Int>()
        func build(_ list: [Int]) -> [Node] {
            let sorted = list.enumerated().sorted { (members[$0.element].date, $0.offset) < (members[$1.element].date, $1.offset) }
            return sorted.compactMap { _, i -> Node? in
                guard visiting.insert(i).inserted else { return nil }
                defer { visiting.remove(i) }
                return Node(id: members[i].id, replies: build(replies[i]))
            }
        }
        return build(top)
    }
}
