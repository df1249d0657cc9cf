/// A sequence set or UID set (RFC 3501 `sequence-set`, RFC 4315 `uid-set`): ranges such as `1:5,7,9:*`.
///
/// `*` (the largest number in use) is represented by `UInt32.max`. Ranges keep the server's order, since
/// COPYUID pairs source and destination UIDs by position; each range is stored low...high.
/// Use `normalized()` for a sorted, merged form.
public struct UIDSet: Sendable, Hashable, CustomStringConvertible {
    /// `*`.
    public static let star: UInt32 = .max

    public private(set) var ranges: [ClosedRange<UInt32>]

    /// The ranges in the given order. Numbers must be non-zero.
    public init(_ ranges: [ClosedRange<UInt32>]) {
        precondition(ranges.allSatisfy { $0.lowerBound > 0 }, "UID 0 does not exist")
        self.ranges = ranges
    }
    public init(_ range: ClosedRange<UInt32>) { self.init([range]) }
    public init(_ uid: UInt32) { self.init([uid...uid]) }

    /// The most compact set holding these UIDs (sorted, runs collapsed). Zeros are ignored.
    public init<S: Sequence>(uids: S) where S.Element == UInt32 {
        var out: [ClosedRange<UInt32>] = []
        for u in uids.sorted() where u > 0 {
            if let last = out.last, u <= last.upperBound &+ 1 && last.upperBound != .max {
                if u > last.upperBound { out[out.count - 1] = last.lowerBound...u }
            } else {
                out.append(u...u)
            }
        }
        ranges = out
    }

    /// Parses the wire form (`1:5,7,9:*`). Nil on any syntax error, 0, or an empty string.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        guard let (set, end) = bytes.withUnsafeBufferPointer({ UIDSet.parse($0, from: 0) }), end == bytes.count
        else { return nil }
        self = set
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// Compact wire form: `1:5,7,9:*`.
    public var description: String {
        var s = ""
        for (i, r) in ranges.enumerated() {
            if i > 0 { s += "," }
            s += UIDSet.render(r.lowerBound)
            if r.upperBound != r.lowerBound { s += ":" + UIDSet.render(r.upperBound) }
        }
        return s
    }
    static func render(_ n: UInt32) -> String { n == star ? "*" : String(n) }

    public func contains(_ uid: UInt32) -> Bool { ranges.contains { $0.contains(uid) } }

    /// How many numbers the set names (`*` counted as `UInt32.max`), duplicates counted again.
    public var count: Int { ranges.reduce(0) { $0 + Int($1.upperBound - $1.lowerBound) + 1 } }

    /// Sorted, overlapping and adjacent ranges merged.
    public func normalized() -> UIDSet {
        var out: [ClosedRange<UInt32>] = []
        for r in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = out.last, last.upperBound == .max || r.lowerBound <= last.upperBound + 1 {
                out[out.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                out.append(r)
            }
        }
        var s = self
        s.ranges = out
        return s
    }

    /// Every number in wire order. Do not call on sets containing `*`, nor on a set from the server: a
    /// hostile `1:4000000000` would allocate gigabytes. Use `elements(among:)` or `clamped(to:)` there.
    public var elements: [UInt32] { ranges.flatMap { Array($0) } }

    /// The numbers of the set that are among `known` (`knownCount` of them; `isKnown` tests one), in no
    /// particular order. Work and memory follow the smaller of the set and what is known, never what a
    /// server's range merely names.
    public func elements(
        among known: some Sequence<UInt32>, knownCount: Int,
        isKnown: (UInt32) -> Bool
    ) -> [UInt32] {
        if count <= knownCount { return ranges.flatMap { $0 }.filter(isKnown) }
        let sorted = normalized().ranges
        return known.filter { uid in
            // Binary search for the last range starting at or below `uid`.
            var lo = 0, hi = sorted.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if sorted[mid].lowerBound <= uid { lo = mid + 1 } else { hi = mid }
            }
            return lo > 0 && sorted[lo - 1].contains(uid)
        }
    }

    /// `elements(among:knownCount:isKnown:)` for a Set or a Dictionary's keys (O(1) `contains`).
    public func elements<Known: Collection<UInt32>>(among known: Known) -> [UInt32] {
        elements(among: known, knownCount: known.count, isKnown: { known.contains($0) })
    }

    /// The set cut to `bound` (e.g. below a UIDNEXT we know), ranges outside it dropped.
    public func clamped(to bound: ClosedRange<UInt32>) -> UIDSet {
        var s = self
        s.ranges = ranges.compactMap { r in r.overlaps(bound) ? r.clamped(to: bound) : nil }
        return s
    }

    /// The numbers of `bound` the set does not name, as ranges (no number is listed: a server's sparse
    /// answer over a large bound costs its ranges).
    public func complement(within bound: ClosedRange<UInt32>) -> UIDSet {
        var out: [ClosedRange<UInt32>] = []
        var next = bound.lowerBound  // the first number not yet covered or emitted
        var done = false
        for r in normalized().ranges where !done && r.upperBound >= next {
            if r.lowerBound > bound.upperBound { break }
            if r.lowerBound > next { out.append(next...(r.lowerBound - 1)) }
            if r.upperBound >= bound.upperBound { done = true } else { next = r.upperBound + 1 }
        }
        if !done { out.append(next...bound.upperBound) }
        var s = self
        s.ranges = out
        return s
    }

    /// Whether the set names a number not in `known`, without listing the set (a range longer than `known`
    /// must hold one).
    public func hasElement(notIn known: Set<UInt32>) -> Bool {
        ranges.contains { r in r.count > known.count || r.contains { !known.contains($0) } }
    }

    // sequence-set    = (seq-number / seq-range) ["," sequence-set]
    // seq-range       = seq-number ":" seq-number
    // seq-number      = nz-number / "*"
    /// Parses a set starting at `from`; stops at the first byte that cannot continue it. Nil when no valid set
    /// starts there, or a number is 0 or does not fit in 32 bits.
    static func parse(_ p: UnsafeBufferPointer<UInt8>, from: Int) -> (UIDSet, Int)? {
        var i = from
        var ranges: [ClosedRange<UInt32>] = []
        func number() -> UInt32? {
            guard i < p.count else { return nil }
            if p[i] == UInt8(ascii: "*") { i += 1; return star }
            var v: UInt64 = 0, digits = 0
            while i < p.count, p[i] >= UInt8(ascii: "0"), p[i] <= UInt8(ascii: "9") {
                v = v * 10 + UInt64(p[i] - UInt8(ascii: "0"))
                guard v <= UInt64(UInt32.max) else { return nil }
                i += 1; digits += 1
            }
            guard digits > 0, v > 0 else { return nil }
            return UInt32(v)
        }
        while true {
            guard let a = number() else { return nil }
            var b = a
            if i < p.count, p[i] == UInt8(ascii: ":") {
                i += 1
                guard let n = number() else { return nil }
                b = n
            }
            ranges.append(min(a, b)...max(a, b))
            guard i < p.count, p[i] == UInt8(ascii: ",") else { break }
            i += 1
        }
        var set = UIDSet([])
        set.ranges = ranges
        return (set, i)
    }
}
