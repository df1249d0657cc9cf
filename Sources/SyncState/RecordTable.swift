#if canImport(Glibc)
    import Glibc
#endif
import Maildir
import SyncEngine

/// Records indexed by UID and by unique name, for replay and for the executor.
/// Invariant: at most one record per non-zero UID and per non-empty unique name.
///
/// The table of a large folder is the biggest thing a run holds, so it is stored compactly (about 100
/// bytes a record instead of about 450 as three dictionaries of Swift strings): unique names as bytes
/// in one arena, a record as a fixed-size slot, the unique-name index as an open-addressing table of
/// slot numbers. `SyncRecord` values (and their strings) are made only when asked for.
public struct RecordTable: Sendable {
    private struct Slot {
        var uid: UInt32
        var flags: MaildirFlags
        /// The unique name's bytes in `arena`; length 0: no unique name (a server-only record).
        var start: UInt32
        var length: UInt32
        var live: Bool
        /// Found by the scan exactly as recorded, and not changed on the server (`settle`).
        var settled = false
        /// Found by the scan otherwise: a second file of its name is not settled either (`settle`).
        var examined = false
    }
    private var slots: [Slot] = []
    private var arena: [UInt8] = []
    private var uidIndex = UIDIndex()
    /// Open addressing, linear probing, at most half full (names of one folder differ only in their tails,
    /// so every probe of a longer run costs a comparison); entries are slot numbers, `empty` or `deleted`.
    private var names: [Int32] = []
    /// Beside each entry of `names`, the top 16 bits of its name's hash: a probe compares bytes only when it
    /// matches, so the probes past other names touch neither their slots nor the arena.
    private var fingerprints: [UInt16] = []
    private var namesUsed = 0  // live entries plus deleted markers
    private(set) public var count = 0
    /// Live records marked by `settle`: left out of `unsettledRecords`, kept in every lookup and the commit.
    private(set) public var settledCount = 0
    private static let empty: Int32 = -1, deleted: Int32 = -2

    public init(_ records: [SyncRecord]) {
        slots.reserveCapacity(records.count)
        uidIndex.reserveCapacity(records.count)
        for r in records { upsert(r) }
    }

    /// Makes room for `more` records with unique names of about `nameBytes` bytes each, so a table that
    /// grows by a known amount (an initial sync) does not double its arrays past what it needs.
    public mutating func reserveCapacity(more: Int, nameBytes: Int = 48) {
        slots.reserveCapacity(slots.count + more)
        arena.reserveCapacity(arena.count + more * nameBytes)
        uidIndex.reserveCapacity(count + more)
        var capacity = max(names.count, 16)
        while (count + more) * 2 > capacity { capacity *= 2 }
        if capacity > names.count { resetNames(capacity); rehashInPlace() }
    }

    /// Inserts `record`, replacing any record that has its UID (if non-zero) or its unique name (if set).
    public mutating func upsert(_ record: SyncRecord) {
        upsert(uid: record.uid, uniqueBytes: record.unique.utf8, flags: record.flags)
    }

    /// `upsert` of a record whose unique name is given as bytes (valid UTF-8), as the state file holds it.
    /// A record replacing one of the same name keeps that name's bytes in the arena.
    public mutating func upsert<Bytes: Collection<UInt8>>(uid: UInt32, uniqueBytes: Bytes, flags: MaildirFlags) {
        withContiguousBytes(uniqueBytes) { upsert(uid: uid, name: $0, flags: flags) }
    }

    /// The one upsert: the name hashed once, for the lookup and for the index (the hot loop of loading a
    /// large folder's state). `name` never points into this table.
    private mutating func upsert(uid: UInt32, name: UnsafeBufferPointer<UInt8>, flags: MaildirFlags) {
        let h = name.isEmpty ? 0 : Self.hash(name)
        var reuse: (start: UInt32, length: UInt32)?
        if uid != 0, let i = uidIndex[uid] { reuse = nameRange(i, equalTo: name); removeSlot(Int(i)) }
        if !name.isEmpty, let i = find(name, hash: h) { reuse = reuse ?? nameRange(i, equalTo: name); removeSlot(Int(i)) }
        let range: (start: UInt32, length: UInt32)
        if let reuse {
            range = reuse
        } else {
            let start = UInt32(arena.count)
            arena.append(contentsOf: name)
            range = (start, UInt32(arena.count) - start)
        }
        let index = Int32(slots.count)
        slots.append(Slot(uid: uid, flags: flags, start: range.start, length: range.length, live: true))
        count += 1
        if uid != 0 { uidIndex[uid] = index }
        if range.length > 0 { insertName(index, hash: h) }
    }

    public mutating func remove(uid: UInt32, unique: String) {
        let i: Int32?
        if uid != 0 { i = uidIndex[uid] } else if !unique.isEmpty { i = find(unique) } else { i = nil }
        guard let i, slots[Int(i)].uid == uid, bytesEqual(Int(i), unique) else { return }
        removeSlot(Int(i))
    }

    public func record(uid: UInt32) -> SyncRecord? { uidIndex[uid].map { record(at: Int($0)) } }
    public func record(unique: String) -> SyncRecord? {
        unique.isEmpty ? nil : find(unique).map { record(at: Int($0)) }
    }

    /// The records in no particular order, made one at a time as the sequence is walked.
    public var unorderedRecords: LazyMapSequence<LazyFilterSequence<Range<Int>>, SyncRecord> {
        (0..<slots.count).lazy.filter { [slots] in slots[$0].live }.map { [self] in record(at: $0) }
    }

    /// The records a plan must look at: all but the settled ones.
    public var unsettledRecords: LazyMapSequence<LazyFilterSequence<Range<Int>>, SyncRecord> {
        (0..<slots.count).lazy.filter { [slots] in slots[$0].live && !slots[$0].settled }.map { [self] in record(at: $0) }
    }

    /// What `settle` found for a local file.
    public enum Settling: Equatable, Sendable {
        /// The file matches its pair's record exactly: marked settled, nothing to plan for it.
        case settled
        /// The pair's record was already settled by another file with the same unique name.
        case duplicate
        /// No pair, another flag set, or its UID is in `changedUIDs`: the plan must look at it.
        case unsettled
    }

    /// Marks the pair of a scanned local file settled when the file is exactly as recorded (its syncable
    /// `flags` equal the record's) and the server did not change its message (`changedUIDs`), so a plan
    /// over a large folder with few changes looks only at what changed. Tombstones never settle.
    /// A pair a file did not settle is marked examined, and a later file of the same name is then not
    /// settled either: the plan sees both, and notes the second.
    public mutating func settle(unique: String, flags: MaildirFlags, changedUIDs: Set<UInt32>) -> Settling {
        withContiguousBytes(unique.utf8) { settle(uniqueBytes: $0, flags: flags, changedUIDs: changedUIDs) }
    }

    /// `settle` of a name given as bytes, as the scan reads it from the directory (no string made).
    public mutating func settle(uniqueBytes: UnsafeBufferPointer<UInt8>, flags: MaildirFlags, changedUIDs: Set<UInt32>) -> Settling {
        guard !uniqueBytes.isEmpty, let i = find(uniqueBytes, hash: Self.hash(uniqueBytes)).map(Int.init) else { return .unsettled }
        if slots[i].settled { return .duplicate }
        guard !slots[i].examined, slots[i].uid != 0, slots[i].flags == flags,
            changedUIDs.isEmpty || !changedUIDs.contains(slots[i].uid)
        else {
            slots[i].examined = true
            return .unsettled
        }
        slots[i].settled = true
        settledCount += 1
        return .settled
    }

    /// Marks settled the server-only records whose flags hold `mark` (a window's outside records,
    /// `SyncRecord.outsideMark`) and whose UID is not in `changedUIDs`: nothing local can change them, so
    /// only a server change needs them planned. Those with a unique name (a pair being let go) stay.
    public mutating func settleServerOnly(marked mark: MaildirFlags, except changedUIDs: Set<UInt32>) {
        for i in slots.indices where slots[i].live && !slots[i].settled && slots[i].length == 0 && slots[i].uid != 0 {
            guard slots[i].flags.contains(mark), !changedUIDs.contains(slots[i].uid) else { continue }
            slots[i].settled = true
            settledCount += 1
        }
    }

    /// The settled records `settleServerOnly` marked (no unique name), still settled: to leave out of a
    /// count of pairs. O(records).
    public func settledServerOnlyCount(marked mark: MaildirFlags) -> Int {
        slots.reduce(0) { $0 + ($1.live && $1.settled && $1.length == 0 && $1.flags.contains(mark) ? 1 : 0) }
    }

    /// Takes back `settle` for the record of `uid`, when the server turns out to have changed its message
    /// after all; returns the record if it was settled.
    public mutating func unsettle(uid: UInt32) -> SyncRecord? {
        guard uid != 0, let i = uidIndex[uid].map(Int.init), slots[i].settled else { return nil }
        slots[i].settled = false
        settledCount -= 1
        return record(at: i)
    }

    /// The records sorted by UID (then unique name), so files are stable. Sorting costs: call once.
    public var records: [SyncRecord] {
        orderedSlots().map { record(at: $0) }
    }

    /// Calls `body` with each record's UID, unique-name bytes and flags, sorted as `records` is, without
    /// making strings (for writing the state file).
    public func forEachSorted(_ body: (UInt32, ArraySlice<UInt8>, MaildirFlags) throws -> Void) rethrows {
        for i in orderedSlots() {
            let s = slots[i]
            try body(s.uid, arena[Int(s.start)..<Int(s.start + s.length)], s.flags)
        }
    }

    private func orderedSlots() -> [Int] {
        var order = (0..<slots.count).filter { slots[$0].live }
        order.sort { a, b in
            let x = slots[a], y = slots[b]
            if x.uid != y.uid { return x.uid < y.uid }
            return arena[Int(x.start)..<Int(x.start + x.length)]
                .lexicographicallyPrecedes(arena[Int(y.start)..<Int(y.start + y.length)])
        }
        return order
    }

    private func record(at i: Int) -> SyncRecord {
        let s = slots[i]
        let unique = s.length == 0 ? "" : String(decoding: arena[Int(s.start)..<Int(s.start + s.length)], as: UTF8.self)
        return SyncRecord(uid: s.uid, unique: unique, flags: s.flags)
    }

    private func nameRange(_ i: Int32, equalTo unique: UnsafeBufferPointer<UInt8>) -> (start: UInt32, length: UInt32)? {
        let s = slots[Int(i)]
        return s.length > 0 && bytesEqual(Int(i), unique) ? (s.start, s.length) : nil
    }

    private func bytesEqual(_ i: Int, _ unique: String) -> Bool { bytesEqual(i, unique.utf8) }

    private func bytesEqual<Bytes: Collection<UInt8>>(_ i: Int, _ unique: Bytes) -> Bool {
        withContiguousBytes(unique) { bytesEqual(i, $0) }
    }

    /// Compares a slot's name with a buffer (memcmp: the hot loop of loading and settling a large folder).
    private func bytesEqual(_ i: Int, _ unique: UnsafeBufferPointer<UInt8>) -> Bool {
        let s = slots[i]
        guard Int(s.length) == unique.count else { return false }
        guard s.length > 0 else { return true }
        return arena.withUnsafeBufferPointer { memcmp($0.baseAddress! + Int(s.start), unique.baseAddress!, unique.count) == 0 }
    }

    private mutating func removeSlot(_ i: Int) {
        guard slots[i].live else { return }
        slots[i].live = false
        count -= 1
        if slots[i].settled { settledCount -= 1 }
        let s = slots[i]
        if s.uid != 0, uidIndex[s.uid] == Int32(i) { uidIndex[s.uid] = nil }
        if s.length > 0 {
            var p = probeStart(slotHash(i))
            while names[p] != Self.empty {
                if names[p] == Int32(i) { names[p] = Self.deleted; break }
                p = (p + 1) & (names.count - 1)
            }
        }
    }

    // MARK: - Unique-name index

    /// FNV-1a over eight bytes at a time (the tail byte by byte), then a finalizer that spreads every input
    /// bit over the low bits the probe uses: names of one folder differ in a few bytes of their tails.
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        var i = 0
        let raw = UnsafeRawBufferPointer(bytes)
        while i + 8 <= raw.count {
            h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x100_0000_01b3
            i += 8
        }
        while i < raw.count { h = (h ^ UInt64(raw[i])) &* 0x100_0000_01b3; i += 1 }
        h ^= h >> 33; h = h &* 0xff51_afd7_ed55_8ccd; h ^= h >> 33  // murmur3's fmix64, halved
        return h
    }

    /// The hash of a slot's name (which must have one).
    private func slotHash(_ i: Int) -> UInt64 {
        let s = slots[i]
        return arena.withUnsafeBufferPointer { Self.hash(UnsafeBufferPointer(rebasing: $0[Int(s.start)..<Int(s.start + s.length)])) }
    }

    private func probeStart(_ h: UInt64) -> Int { Int(truncatingIfNeeded: h) & (names.count - 1) }
    private static func fingerprint(_ h: UInt64) -> UInt16 { UInt16(truncatingIfNeeded: h >> 48) }

    private mutating func resetNames(_ capacity: Int) {
        names = Array(repeating: Self.empty, count: capacity)
        fingerprints = Array(repeating: 0, count: capacity)
    }

    private func find(_ unique: String) -> Int32? { find(unique.utf8) }

    private func find<Bytes: Collection<UInt8>>(_ unique: Bytes) -> Int32? {
        withContiguousBytes(unique) { find($0, hash: Self.hash($0)) }
    }

    private func find(_ unique: UnsafeBufferPointer<UInt8>, hash h: UInt64) -> Int32? {
        guard !names.isEmpty, !unique.isEmpty else { return nil }
        var p = probeStart(h)
        let print = Self.fingerprint(h)
        while names[p] != Self.empty {
            let i = names[p]
            if i >= 0, fingerprints[p] == print, bytesEqual(Int(i), unique) { return i }
            p = (p + 1) & (names.count - 1)
        }
        return nil
    }

    private mutating func insertName(_ index: Int32, hash h: UInt64) {
        // A rehash indexes every live slot, this new one included.
        if (namesUsed + 1) * 2 > names.count { rehash(); return }
        var p = probeStart(h)
        while names[p] >= 0 { p = (p + 1) & (names.count - 1) }
        if names[p] == Self.empty { namesUsed += 1 }
        names[p] = index
        fingerprints[p] = Self.fingerprint(h)
    }

    private mutating func rehash() {
        var capacity = 16
        while count * 3 + 2 > capacity { capacity *= 2 }
        resetNames(capacity)
        rehashInPlace()
    }

    /// Indexes every live named slot into `names` (all `empty`, a power of two long).
    private mutating func rehashInPlace() {
        let capacity = names.count
        namesUsed = 0
        for (i, s) in slots.enumerated() where s.live && s.length > 0 {
            let h = slotHash(i)
            var p = probeStart(h)
            while names[p] != Self.empty { p = (p + 1) & (capacity - 1) }
            names[p] = Int32(i)
            fingerprints[p] = Self.fingerprint(h)
            namesUsed += 1
        }
    }
}

/// Runs `body` over bytes in place where they are contiguous (native strings, arrays, their slices), else
/// over a copy: the one way this module's byte readers (the table's names, `StateCodec.plainRecord`) get a
/// buffer. A free function, so a mutating method may pass a closure that changes `self`.
func withContiguousBytes<Bytes: Collection<UInt8>, R>(_ bytes: Bytes, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if let r = bytes.withContiguousStorageIfAvailable(body) { return r }
    return Array(bytes).withUnsafeBufferPointer(body)
}
