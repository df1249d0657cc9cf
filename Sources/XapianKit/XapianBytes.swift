import CXapian

/// Byte strings as Xapian takes them: terms, data, values, metadata keys and values. Xapian treats them as
/// plain bytes (any byte, NUL included); a `String` goes in as its UTF-8.
public protocol XapianBytes {
    /// Calls `body` with the bytes. The pointer is valid only during the call and may be nil when the count
    /// is 0.
    func withXapianBytes<R>(_ body: (UnsafePointer<CChar>?, Int) -> R) -> R
}

extension String: XapianBytes {
    public func withXapianBytes<R>(_ body: (UnsafePointer<CChar>?, Int) -> R) -> R {
        var copy = self  // withUTF8 may make the storage contiguous, hence mutating
        return copy.withUTF8 { utf8 in utf8.withMemoryRebound(to: CChar.self) { body($0.baseAddress, $0.count) } }
    }
}

extension Substring: XapianBytes {
    public func withXapianBytes<R>(_ body: (UnsafePointer<CChar>?, Int) -> R) -> R {
        var copy = self
        return copy.withUTF8 { utf8 in utf8.withMemoryRebound(to: CChar.self) { body($0.baseAddress, $0.count) } }
    }
}

extension Array: XapianBytes where Element == UInt8 {
    public func withXapianBytes<R>(_ body: (UnsafePointer<CChar>?, Int) -> R) -> R {
        withUnsafeBufferPointer { bytes in bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress, $0.count) } }
    }
}

extension ArraySlice: XapianBytes where Element == UInt8 {
    public func withXapianBytes<R>(_ body: (UnsafePointer<CChar>?, Int) -> R) -> R {
        withUnsafeBufferPointer { bytes in bytes.withMemoryRebound(to: CChar.self) { body($0.baseAddress, $0.count) } }
    }
}

extension UnsafeRawBufferPointer: XapianBytes {
    public func withXapianBytes<R>(_ body: (UnsafePointer<CChar>?, Int) -> R) -> R {
        body(baseAddress?.assumingMemoryBound(to: CChar.self), count)
    }
}

/// Encodings of numbers for value slots.
public enum XapianValue {
    /// `number` encoded so that byte order equals numeric order (Xapian's `sortable_serialise`), for slots
    /// that are sorted or searched with a `.number` range.
    public static func sortable(_ number: Double) -> [UInt8] {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 16) { buffer in
            let count = mo_xapian_sortable_serialise(number, buffer.baseAddress!)
            return buffer.prefix(count).map { UInt8(bitPattern: $0) }
        }
    }

    /// The number that `sortable(_:)` encoded in `bytes`.
    public static func number(fromSortable bytes: some XapianBytes) -> Double {
        bytes.withXapianBytes { mo_xapian_sortable_unserialise($0, $1) }
    }
}

/// Runs a shim call that returns a new byte string, and copies it into an array (freeing the C copy).
func xapianBytesCall(
    _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, UnsafeMutablePointer<Int>, XapianErrorOut) -> Int32
) throws(XapianError) -> [UInt8] {
    var out: UnsafeMutablePointer<CChar>? = nil
    var count = 0
    _ = try xapianCall { body(&out, &count, $0) }
    return takeXapianString(out, count)
}

/// Copies and frees a byte string the shim allocated.
func takeXapianString(_ string: UnsafeMutablePointer<CChar>?, _ count: Int) -> [UInt8] {
    guard let string else { return [] }
    defer { mo_xapian_free_string(string) }
    return UnsafeRawBufferPointer(start: string, count: count).map { $0 }
}

/// Drains and frees a term list.
func collectTerms(_ list: OpaquePointer) throws(XapianError) -> [(term: [UInt8], count: Int)] {
    defer { mo_xapian_termlist_free(list) }
    var terms: [(term: [UInt8], count: Int)] = []
    while true {
        var out: UnsafeMutablePointer<CChar>? = nil
        var length = 0
        var count: UInt32 = 0
        let more = try xapianCall { mo_xapian_termlist_next(list, &out, &length, &count, $0) }
        if more == 0 { return terms }
        terms.append((takeXapianString(out, length), Int(count)))
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// Calls `body` with `strings` as a C array of byte pointers and one of their lengths (for C functions that
/// take lists of names). The pointers are valid only during the call.
func withXapianByteArrays<R>(
    _ strings: [String],
    _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int>?) -> R
) -> R {
    let copies: [UnsafePointer<CChar>?] = strings.map { UnsafePointer(strdup($0)) }
    defer { for c in copies { free(UnsafeMutablePointer(mutating: c)) } }
    let lens = strings.map { $0.utf8.count }
    return copies.withUnsafeBufferPointer { p in lens.withUnsafeBufferPointer { l in body(p.baseAddress, l.baseAddress) } }
}
