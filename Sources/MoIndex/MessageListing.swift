import Maildir
import XapianKit

/// What a listing reads per message; each is one value slot (IndexSchema slots 0 and 2–7).
public enum ListingField: Sendable, CaseIterable {
    case id, thread, date, from, subject, flags

    var slots: [UInt32] {
        switch self {
        case .id: [IndexSchema.Slot.messageID]
        case .thread: [IndexSchema.Slot.thread]
        case .date: [IndexSchema.Slot.date, IndexSchema.Slot.noDate]
        case .from: [IndexSchema.Slot.from]
        case .subject: [IndexSchema.Slot.subject]
        case .flags: [IndexSchema.Slot.flags]
        }
    }
}

/// A thread id as a hash key: the 16 hex digits as a number (no String per message), anything else as is.
public enum ThreadKey: Hashable, Sendable {
    case hex(UInt64)
    case other(String)

    init(_ bytes: UnsafeRawBufferPointer) {
        if bytes.count == 16 {
            var n: UInt64 = 0
            var ok = true
            for b in bytes {
                let d: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
                default: ok = false; d = 0
                }
                n = n << 4 | UInt64(d)
            }
            if ok { self = .hex(n); return }
        }
        self = .other(String(decoding: bytes, as: UTF8.self))
    }
}

/// Matching messages in result order, with the fields asked for, read from value streams rather than from
/// document data (see `IndexSchema` slots 3–7). Holds the same values as the `MessageRecord`s of the same
/// search: `id`, `date`, `from`, `subject` equal the record's, `flags`/`isUnread` equal `IndexedMessage`'s.
public struct MessageListing {
    public let documentIDs: [XapianDocumentID]
    let table: XapianValueTable
    /// The table column of each slot read.
    let column: [UInt32: Int]
    /// Messages per thread in the whole index, for (at least) the threads of the listing, when asked for.
    let threadSizes: ThreadKeyTable

    public var count: Int { documentIDs.count }

    private func col(_ slot: UInt32) -> Int {
        guard let c = column[slot] else { preconditionFailure("listing field for slot \(slot) was not read") }
        return c
    }

    public func id(_ i: Int) -> String { table.string(i, col(IndexSchema.Slot.messageID)) }
    public func thread(_ i: Int) -> String { table.string(i, col(IndexSchema.Slot.thread)) }
    public func threadKey(_ i: Int) -> ThreadKey { table.withBytes(i, col(IndexSchema.Slot.thread)) { ThreadKey($0) } }
    public func from(_ i: Int) -> String { table.string(i, col(IndexSchema.Slot.from)) }
    public func subject(_ i: Int) -> String { table.string(i, col(IndexSchema.Slot.subject)) }

    /// The number of messages in the thread of message `i` (listings made with `threadSizes`).
    public func threadSize(_ i: Int) -> Int { threadSizes[threadKey(i)] ?? 0 }

    /// The Date header in seconds, nil if the message has none.
    public func date(_ i: Int) -> Int64? {
        if !table.isEmpty(i, col(IndexSchema.Slot.noDate)) { return nil }
        let seconds = table.withBytes(i, col(IndexSchema.Slot.date)) { XapianValue.number(fromSortable: $0) }
        return seconds >= 9.2e18 ? Int64.max : seconds <= -9.2e18 ? Int64.min : Int64(seconds)
    }

    /// The union of the files' flags, S included.
    public func flags(_ i: Int) -> MaildirFlags {
        table.withBytes(i, col(IndexSchema.Slot.flags)) { bytes in
            var flags = MaildirFlags()
            for b in bytes where b != UInt8(ascii: "u") {
                if let f = MaildirFlags(letter: b) { flags.insert(f) }
            }
            return flags
        }
    }

    /// No file has S.
    public func isUnread(_ i: Int) -> Bool {
        table.withBytes(i, col(IndexSchema.Slot.flags)) { $0.first == UInt8(ascii: "u") }
    }
}

extension MailIndex {
    /// Matching messages in `order`, `offset ..< offset + limit`, with `fields` read from value slots; with
    /// `threadSizes`, also the size of each thread in the listing. One consistent revision: a reopen
    /// (an update committed meanwhile) redoes all of it.
    public func listing(
        _ query: XapianQuery, order: ResultOrder = .newest, fields: Set<ListingField>,
        threadSizes: Bool = false, offset: Int = 0, limit: Int = Int(Int32.max)
    ) throws -> MessageListing {
        var slots: [UInt32] = []
        for field in ListingField.allCases where fields.contains(field) || (threadSizes && field == .thread) {
            slots += field.slots
        }
        let column = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1, $0) })
        return try retrying {
            let ids = try db.matchingDocumentIDs(query, sort: order.xapian, offset: offset, limit: limit)
            let table = try db.values(of: ids, slots: slots)
            var sizes = ThreadKeyTable()
            if threadSizes, let c = column[IndexSchema.Slot.thread] {
                sizes = try self.threadSizes((0..<ids.count).map { row in table.withBytes(row, c) { ThreadKey($0) } })
            }
            return MessageListing(documentIDs: ids, table: table, column: column, threadSizes: sizes)
        }
    }

    /// The number of threads holding a match (one pass over the matches' thread values).
    public func threadCount(_ query: XapianQuery) throws -> Int {
        let listing = try self.listing(query, order: .relevance, fields: [.thread])
        var keys = Set<ThreadKey>()
        for row in 0..<listing.count { keys.insert(listing.threadKey(row)) }
        return keys.count
    }

    /// The number of messages of each thread (`threads` may repeat): term frequencies for a few, one pass
    /// over the thread value stream for many (each message has exactly one `G` term and the same value in
    /// slot 2); then the table also holds every other thread.
    func threadSizes(_ threads: [ThreadKey]) throws -> ThreadKeyTable {
        if threads.count <= 256 {
            var sizes = ThreadKeyTable(capacity: threads.count)
            for key in threads where sizes[key] == nil {
                let id: String
                switch key {
                case .hex(let n):
                    let hex = String(n, radix: 16)
                    id = String(repeating: "0", count: 16 - hex.count) + hex
                case .other(let s): id = s
                }
                sizes[key] = try db.termFrequency(IndexSchema.Prefix.thread + id)
            }
            return sizes
        }
        let stream = try db.valueStream(slot: IndexSchema.Slot.thread)
        var all = ThreadKeyTable(capacity: stream.rows)
        for row in 0..<stream.rows {
            let key = stream.withBytes(row, 0) { ThreadKey($0) }
            all[key] = (all[key] ?? 0) + 1
        }
        return all
    }
}

/// ThreadKey → Int without Swift's per-lookup SipHash: open addressing over the 64-bit key for hex
/// thread ids (all of them in a sound index), a Dictionary for anything else. Listing all threads does a
/// few lookups per message, which made hashing the largest cost after reading the values.
public struct ThreadKeyTable {
    private var keys: [UInt64]
    private var values: [Int]
    private var used: [Bool]
    private var mask: Int
    private var filled = 0
    private var other: [String: Int] = [:]

    public init(capacity: Int = 16) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        keys = Array(repeating: 0, count: size)
        values = Array(repeating: 0, count: size)
        used = Array(repeating: false, count: size)
        mask = size - 1
    }

    @inline(__always)
    private func slot(_ key: UInt64) -> (index: Int, found: Bool) {
        var i = Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
        while used[i] {
            if keys[i] == key { return (i, true) }
            i = (i + 1) & mask
        }
        return (i, false)
    }

    public subscript(key: ThreadKey) -> Int? {
        get {
            switch key {
            case .hex(let n): let s = slot(n); return s.found ? values[s.index] : nil
            case .other(let s): return other[s]
            }
        }
        set {
            switch key {
            case .other(let s): other[s] = newValue
            case .hex(let n):
                guard let newValue else { preconditionFailure("ThreadKeyTable does not remove") }
                let s = slot(n)
                if s.found { values[s.index] = newValue; return }
                keys[s.index] = n
                values[s.index] = newValue
                used[s.index] = true
                filled += 1
                if filled * 2 > keys.count { grow() }
            }
        }
    }

    private mutating func grow() {
        let old = (keys, values, used)
        keys = Array(repeating: 0, count: old.0.count * 2)
        values = Array(repeating: 0, count: old.0.count * 2)
        used = Array(repeating: false, count: old.0.count * 2)
        mask = keys.count - 1
        for i in old.0.indices where old.2[i] {
            let s = slot(old.0[i])
            keys[s.index] = old.0[i]
            values[s.index] = old.1[i]
            used[s.index] = true
        }
    }
}
