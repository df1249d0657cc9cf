import CXapian

/// A byte buffer the shim allocated, freed with the last reference.
final class XapianBuffer {
    let base: UnsafeRawPointer?
    let count: Int
    init(_ base: UnsafeMutablePointer<CChar>?, count: Int) {
        self.base = UnsafeRawPointer(base)
        self.count = count
    }
    deinit { if let base { mo_xapian_free_string(UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: CChar.self))) } }
}

/// Values of several slots for many documents, read in one pass over each slot's value stream
/// (`XapianDatabase.values(of:slots:)`). Reading a stream costs about as much as reading a few hundred
/// documents one by one, so this is how results are listed without reading document data.
/// The shim's buffer is used in place: `cells + 1` UInt32 offsets, then the values' bytes.
public struct XapianValueTable {
    private let buffer: XapianBuffer
    public let columns: Int
    public let rows: Int

    /// `buffer` holds `rows * columns` cells.
    init(_ buffer: XapianBuffer, columns: Int, rows: Int) {
        precondition(buffer.count >= (rows * columns + 1) * 4, "value table shorter than its offsets")
        self.buffer = buffer
        self.columns = columns
        self.rows = rows
    }

    @inline(__always)
    private func range(_ cell: Int) -> (start: Int, end: Int) {
        let base = buffer.base!
        let header = (rows * columns + 1) * 4
        let a = Int(base.loadUnaligned(fromByteOffset: cell * 4, as: UInt32.self))
        let b = Int(base.loadUnaligned(fromByteOffset: cell * 4 + 4, as: UInt32.self))
        return (header + a, header + b)
    }

    /// Calls `body` with the bytes of the value in `column` for document `row` (empty if it has none).
    public func withBytes<R>(_ row: Int, _ column: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try withExtendedLifetime(buffer) {
            let (start, end) = range(row * columns + column)
            return try body(UnsafeRawBufferPointer(start: buffer.base! + start, count: end - start))
        }
    }

    public func string(_ row: Int, _ column: Int) -> String {
        withBytes(row, column) { String(decoding: $0, as: UTF8.self) }
    }

    public func bytes(_ row: Int, _ column: Int) -> [UInt8] {
        withBytes(row, column) { Array($0) }
    }

    public func isEmpty(_ row: Int, _ column: Int) -> Bool {
        withBytes(row, column) { $0.isEmpty }
    }
}

extension XapianDatabase {
    /// The ids of the matching documents ranked `offset ..< offset + limit` in `sort` order (as `search`,
    /// without weights or counts).
    public func matchingDocumentIDs(
        _ query: XapianQuery, sort: XapianSort = .relevance, offset: Int = 0, limit: Int
    ) throws(XapianError) -> [XapianDocumentID] {
        try withMatches(query, sort: sort, offset: offset, limit: limit, checkAtLeast: 0) { mset throws(XapianError) in
            var size: UInt32 = 0
            _ = try xapianCall { mo_xapian_mset_counts(mset, &size, nil, nil, nil, $0) }
            var ids = [XapianDocumentID](repeating: 0, count: Int(size))
            _ = try ids.withUnsafeMutableBufferPointer { buffer throws(XapianError) in
                try xapianCall { mo_xapian_mset_docids(mset, buffer.baseAddress, buffer.count, $0) }
            }
            return ids
        }
    }

    /// The values in `slots` (the table's columns, in this order) of `documents` (its rows, in this order).
    public func values(of documents: [XapianDocumentID], slots: [UInt32]) throws(XapianError) -> XapianValueTable {
        var out: UnsafeMutablePointer<CChar>? = nil
        var count = 0
        _ = try documents.withUnsafeBufferPointer { ids throws(XapianError) in
            try slots.withUnsafeBufferPointer { s throws(XapianError) in
                try xapianCall { mo_xapian_db_values(handle.raw, ids.baseAddress, ids.count, s.baseAddress, s.count, &out, &count, $0) }
            }
        }
        return XapianValueTable(XapianBuffer(out, count: count), columns: slots.count, rows: documents.count)
    }

    /// The terms starting with `prefix` (in byte order) that some of `documents` hold, each with those
    /// documents (ascending): each term's posting list is read once, skipping to the documents asked, where
    /// reading each document's term list would decompress every term it holds.
    public func terms(withPrefix prefix: some XapianBytes, among documents: [XapianDocumentID]) throws(XapianError) -> [(
        term: [UInt8], documents: [XapianDocumentID]
    )] {
        var out: UnsafeMutablePointer<CChar>? = nil
        var count = 0
        _ = try documents.withUnsafeBufferPointer { ids throws(XapianError) in
            try xapianCall { err in
                prefix.withXapianBytes { mo_xapian_db_terms_among(handle.raw, $0, $1, ids.baseAddress, ids.count, &out, &count, err) }
            }
        }
        let buffer = XapianBuffer(out, count: count)
        return withExtendedLifetime(buffer) {
            guard let base = buffer.base else { return [] }
            var result: [(term: [UInt8], documents: [XapianDocumentID])] = []
            var at = 0
            func u32() -> Int? {
                guard at + 4 <= count else { return nil }
                defer { at += 4 }
                return Int(base.loadUnaligned(fromByteOffset: at, as: UInt32.self))
            }
            while at < count, let length = u32(), at + length <= count {
                let term = Array(UnsafeRawBufferPointer(start: base + at, count: length))
                at += length
                guard let n = u32(), at + n * 4 <= count else { break }
                result.append((term, (0..<n).compactMap { _ in u32().map(XapianDocumentID.init) }))
            }
            return result
        }
    }

    /// Every value stored in `slot`, in document id order (one column; documents without one are left out).
    public func valueStream(slot: UInt32) throws(XapianError) -> XapianValueTable {
        var out: UnsafeMutablePointer<CChar>? = nil
        var count = 0
        var cells = 0
        _ = try xapianCall { mo_xapian_db_value_stream(handle.raw, slot, &out, &count, &cells, $0) }
        return XapianValueTable(XapianBuffer(out, count: count), columns: 1, rows: cells)
    }
}
