import Maildir

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

/// Matching messages in result order, with the fields asked for, read from value streams rather than from
/// document data (see `IndexSchema` slots 3–7). Holds the same values as the `MessageRecord`s of the same
/// search: `id`, `date`, `from`, `subject` equal the record's, `flags`/`isUnread` equal `IndexedMessage`'s.
public struct MessageListing {
    public let documentIDs: [XapianDocumentID]
    let table: XapianValueTable
    /// The table column of each slot read.
    let column: [UInt32: Int]
    /// Messages per thread in the whole index, for the threads of the listing (when asked for).
    public let threadSizes: [String: Int]

    public var count: Int { documentIDs.count }

    private func col(_ slot: UInt32) -> Int {
        guard let c = column[slot] else { preconditionFailure("listing field for slot \(slot) was not read") }
        return c
    }

    public func id(_ i: Int) -> String { table.string(i, col(IndexSchema.Slot.messageID)) }
    public func thread(_ i: Int) -> String { table.string(i, col(IndexSchema.Slot.thread)) }
    public func from(_ i: Int) -> String { table.string(i, col(IndexSchema.Slot.from)) }
    public func subject(_ i: Int) -> String { table.string(i, col(IndexSchema.Slot.subject)) }

    /// The Date header in seconds, nil if the message has none.
    public func date(_ i: Int) -> Int64? {
        if !table.isEmpty(i, col(IndexSchema.Slot.noDate)) { return nil }
        let seconds = XapianValue.number(fromSortable: table.bytes(i, col(IndexSchema.Slot.date)))
        return seconds >= 9.2e18 ? Int64.max : seconds <= -9.2e18 ? Int64.min : Int64(seconds)
    }

    /// The union of the files' flags, S included.
    public func flags(_ i: Int) -> MaildirFlags {
        var flags = MaildirFlags()
        for b in table.bytes(i, col(IndexSchema.Slot.flags)) where b != UInt8(ascii: "u") {
            if let f = MaildirFlags(letter: b) { flags.insert(f) }
        }
        return flags
    }

    /// No file has S.
    public func isUnread(_ i: Int) -> Bool { table.bytes(i, col(IndexSchema.Slot.flags)).first == UInt8(ascii: "u") }
}

extension MailIndex {
    /// Matching messages in `order`, `offset ..< offset + limit`, with `fields` read from value slots; with
    /// `threadSizes`, also the size of each thread in the listing. One consistent revision: a reopen
    /// (an update committed meanwhile) redoes all of it.
    public func listing(_ query: XapianQuery, order: ResultOrder = .newest, fields: Set<ListingField>,
                        threadSizes: Bool = false, offset: Int = 0, limit: Int = Int(Int32.max)) throws -> MessageListing {
        var slots: [UInt32] = []
        for field in ListingField.allCases where fields.contains(field) || (threadSizes && field == .thread) {
            slots += field.slots
        }
        let column = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1, $0) })
        return try retrying {
            let ids = try db.matchingDocumentIDs(query, sort: order.xapian, offset: offset, limit: limit)
            let table = try db.values(of: ids, slots: slots)
            var sizes: [String: Int] = [:]
            if threadSizes, let c = column[IndexSchema.Slot.thread] {
                var threads = Set<String>()
                for row in 0..<ids.count { threads.insert(table.string(row, c)) }
                sizes = try self.threadSizes(threads)
            }
            return MessageListing(documentIDs: ids, table: table, column: column, threadSizes: sizes)
        }
    }

    /// The number of messages of each thread: term frequencies for a few threads, one pass over the
    /// thread value stream for many (each message has exactly one `G` term and the same value in slot 2).
    func threadSizes(_ threads: Set<String>) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        if threads.count <= 256 {
            for t in threads { sizes[t] = try db.termFrequency(IndexSchema.Prefix.thread + t) }
            return sizes
        }
        let stream = try db.valueStream(slot: IndexSchema.Slot.thread)
        var all: [ArraySlice<UInt8>: Int] = [:]
        for row in 0..<stream.rows { all[stream.bytes(row, 0), default: 0] += 1 }
        for t in threads { sizes[t] = all[ArraySlice(t.utf8)] ?? 0 }
        return sizes
    }
}
