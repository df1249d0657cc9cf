import CXapian

/// Values of several slots for many documents, read in one pass over each slot's value stream
/// (`XapianDatabase.values(of:slots:)`). Reading a stream costs about as much as reading a few hundred
/// documents one by one, so this is how results are listed without reading document data.
public struct XapianValueTable {
    /// Concatenated cells: native-endian UInt32 length, then the bytes.
    private let bytes: [UInt8]
    /// Start of each cell's bytes in `bytes`, and one past the end (cell i is starts[i] ..< ends[i]).
    private var starts: [Int] = []
    private var ends: [Int] = []
    public let columns: Int
    public var rows: Int { columns == 0 ? 0 : starts.count / columns }

    init(packed: [UInt8], columns: Int) {
        bytes = packed
        self.columns = columns
        var at = 0
        bytes.withUnsafeBytes { raw in
            while at + 4 <= raw.count {
                let n = Int(raw.loadUnaligned(fromByteOffset: at, as: UInt32.self))
                starts.append(at + 4)
                ends.append(min(at + 4 + n, raw.count))
                at += 4 + n
            }
        }
    }

    /// The bytes of the value in `column` for document `row` (empty if it has none).
    public func bytes(_ row: Int, _ column: Int) -> ArraySlice<UInt8> {
        let i = row * columns + column
        return bytes[starts[i]..<ends[i]]
    }

    public func string(_ row: Int, _ column: Int) -> String {
        String(decoding: bytes(row, column), as: UTF8.self)
    }

    public func isEmpty(_ row: Int, _ column: Int) -> Bool {
        let i = row * columns + column
        return starts[i] == ends[i]
    }
}

extension XapianDatabase {
    /// The ids of the matching documents ranked `offset ..< offset + limit` in `sort` order (as `search`,
    /// without weights or counts).
    public func matchingDocumentIDs(
        _ query: XapianQuery, sort: XapianSort = .relevance, offset: Int = 0, limit: Int
    ) throws(XapianError) -> [XapianDocumentID] {
        let enquire = try xapianCreate { mo_xapian_enquire_new(handle.raw, $0) }
        defer { mo_xapian_enquire_free(enquire) }
        _ = try xapianCall { mo_xapian_enquire_set_query(enquire, query.raw, $0) }
        switch sort {
        case .relevance:
            _ = try xapianCall { mo_xapian_enquire_sort_by_relevance(enquire, $0) }
        case .value(let slot, let descending):
            _ = try xapianCall { mo_xapian_enquire_sort_by_value(enquire, slot, descending ? 1 : 0, $0) }
        }
        let mset = try xapianCreate {
            mo_xapian_enquire_get_mset(enquire, UInt32(clamping: offset), UInt32(clamping: limit), 0, $0)
        }
        defer { mo_xapian_mset_free(mset) }
        var size: UInt32 = 0
        _ = try xapianCall { mo_xapian_mset_counts(mset, &size, nil, nil, nil, $0) }
        var ids = [XapianDocumentID](repeating: 0, count: Int(size))
        _ = try ids.withUnsafeMutableBufferPointer { buffer throws(XapianError) in
            try xapianCall { mo_xapian_mset_docids(mset, buffer.baseAddress, buffer.count, $0) }
        }
        return ids
    }

    /// The values in `slots` (the table's columns, in this order) of `documents` (its rows, in this order).
    public func values(of documents: [XapianDocumentID], slots: [UInt32]) throws(XapianError) -> XapianValueTable {
        let packed = try documents.withUnsafeBufferPointer { ids throws(XapianError) in
            try slots.withUnsafeBufferPointer { s throws(XapianError) in
                try xapianBytesCall { out, count, err in
                    mo_xapian_db_values(handle.raw, ids.baseAddress, ids.count, s.baseAddress, s.count, out, count, err)
                }
            }
        }
        return XapianValueTable(packed: packed, columns: slots.count)
    }

    /// Every value stored in `slot`, in document id order (one column; documents without one are left out).
    public func valueStream(slot: UInt32) throws(XapianError) -> XapianValueTable {
        let packed = try xapianBytesCall { mo_xapian_db_value_stream(handle.raw, slot, $0, $1, $2) }
        return XapianValueTable(packed: packed, columns: 1)
    }
}
