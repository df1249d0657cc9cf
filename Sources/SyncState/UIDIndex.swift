/// `RecordTable`'s index from UID to slot number. A large folder's load inserts one entry per record and
/// a scan looks many up, so this is an open-addressing table of 8-byte buckets (the UID in the high half,
/// the slot in the low half; 0 is an empty bucket, as UID 0 is never indexed): one cache line per lookup,
/// where a `Dictionary` hashes with SipHash and keeps keys and values apart.
///
/// Invariants: the bucket count is a power of two and at most half the buckets are used; linear probing,
/// and deletion shifts the following run back (no tombstones), so every key sits between its home bucket
/// and the first empty one after it.
struct UIDIndex: Sendable {
    private var buckets: [UInt64] = []
    private(set) var count = 0

    subscript(uid: UInt32) -> Int32? {
        get {
            guard uid != 0, !buckets.isEmpty else { return nil }
            var p = home(uid)
            while buckets[p] != 0 {
                if UInt32(truncatingIfNeeded: buckets[p] >> 32) == uid { return Int32(truncatingIfNeeded: buckets[p]) }
                p = (p + 1) & (buckets.count - 1)
            }
            return nil
        }
        set {
            precondition(uid != 0, "UID 0 is never indexed")
            if let newValue { insert(uid, newValue) } else { remove(uid) }
        }
    }

    /// Room for `total` entries without growing.
    mutating func reserveCapacity(_ total: Int) {
        var capacity = max(buckets.count, 16)
        while total * 2 > capacity { capacity *= 2 }
        if capacity > buckets.count { rebuild(capacity) }
    }

    private mutating func insert(_ uid: UInt32, _ slot: Int32) {
        if (count + 1) * 2 > buckets.count { rebuild(max(16, buckets.count * 2)) }
        let entry = UInt64(uid) << 32 | UInt64(UInt32(bitPattern: slot))
        var p = home(uid)
        while buckets[p] != 0 {
            if UInt32(truncatingIfNeeded: buckets[p] >> 32) == uid { buckets[p] = entry; return }
            p = (p + 1) & (buckets.count - 1)
        }
        buckets[p] = entry
        count += 1
    }

    private mutating func remove(_ uid: UInt32) {
        guard !buckets.isEmpty else { return }
        let mask = buckets.count - 1
        var hole = home(uid)
        while UInt32(truncatingIfNeeded: buckets[hole] >> 32) != uid {
            if buckets[hole] == 0 { return }
            hole = (hole + 1) & mask
        }
        // Backward shift: an entry after the hole moves into it unless its home lies cyclically in
        // (hole, here], where it would then sit before its home.
        var here = hole
        while true {
            here = (here + 1) & mask
            if buckets[here] == 0 { break }
            let h = home(UInt32(truncatingIfNeeded: buckets[here] >> 32))
            let staysPut = hole <= here ? (hole < h && h <= here) : (hole < h || h <= here)
            if staysPut { continue }
            buckets[hole] = buckets[here]
            hole = here
        }
        buckets[hole] = 0
        count -= 1
    }

    private mutating func rebuild(_ capacity: Int) {
        let old = buckets
        buckets = Array(repeating: 0, count: capacity)
        count = 0
        for entry in old where entry != 0 {
            insert(UInt32(truncatingIfNeeded: entry >> 32), Int32(truncatingIfNeeded: entry))
        }
    }

    /// Fibonacci hashing: the product's high bits, so runs of consecutive UIDs spread over the table.
    private func home(_ uid: UInt32) -> Int {
        Int(truncatingIfNeeded: (UInt64(uid) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (buckets.count - 1)
    }
}
