#if canImport(Glibc)
    import Glibc
#endif

/// Writes one JSON document incrementally: a listing of tens of thousands of results goes out in 64 KiB
/// chunks, never as one string. The top level is always an object that starts with `format_version`
/// (`beginDocument`), so every output says which format it is. Fields and layout: docs/json.md.
///
/// Invariant: what has been written is a prefix of one valid document; misuse (a value where a key is
/// due, closing the wrong container) is a programming error and traps.
public struct JSONWriter {
    private var buffer: [UInt8] = []
    private let sink: ([UInt8]) -> Void
    private var open: [Container] = []
    private var keyWritten = false

    private struct Container {
        var isObject: Bool
        var count = 0
        /// Each element on a line of its own (lists of results: line tools and jq both work on them).
        var onePerLine = false
    }

    /// `sink` receives the bytes in order, in chunks; the default is standard output.
    public init(sink: @escaping ([UInt8]) -> Void = writeStandardOutput) {
        self.sink = sink
    }

    /// `{"format_version":N`: the start of every JSON output.
    public mutating func beginDocument() {
        precondition(open.isEmpty && buffer.isEmpty, "one document per writer")
        beginObject()
        field("format_version", .int(JSONFormat.version))
    }

    /// Closes the document, ends it with a newline, and hands everything to the sink.
    public mutating func endDocument() {
        endObject()
        precondition(open.isEmpty, "unclosed containers")
        buffer.append(UInt8(ascii: "\n"))
        flush()
    }

    public mutating func key(_ name: String) {
        precondition(open.last?.isObject == true && !keyWritten, "a key belongs in an object, before its value")
        separate()
        appendJSONQuoted(name, to: &buffer)
        buffer.append(UInt8(ascii: ":"))
        keyWritten = true
    }

    public mutating func field(_ name: String, _ value: JSONValue) {
        key(name)
        write(value)
    }

    /// A whole value: an array element, or the value of the key just written.
    public mutating func write(_ value: JSONValue) {
        valuePosition()
        value.append(to: &buffer)
        if buffer.count >= 1 << 16 { flush() }
    }

    public mutating func beginObject() {
        valuePosition()
        buffer.append(UInt8(ascii: "{"))
        open.append(Container(isObject: true))
    }

    public mutating func endObject() { close(object: true, UInt8(ascii: "}")) }

    public mutating func beginArray(onePerLine: Bool = false) {
        valuePosition()
        buffer.append(UInt8(ascii: "["))
        open.append(Container(isObject: false, onePerLine: onePerLine))
    }

    public mutating func endArray() { close(object: false, UInt8(ascii: "]")) }

    /// Before a value: after its key in an object, else as the next array element (or the document itself).
    private mutating func valuePosition() {
        if let last = open.last, last.isObject {
            precondition(keyWritten, "a value in an object needs its key first")
            keyWritten = false
        } else if !open.isEmpty {
            separate()
        } else {
            precondition(buffer.isEmpty, "one top-level value")
        }
    }

    private mutating func separate() {
        if open[open.count - 1].count > 0 { buffer.append(UInt8(ascii: ",")) }
        if open[open.count - 1].onePerLine { buffer.append(UInt8(ascii: "\n")) }
        open[open.count - 1].count += 1
    }

    private mutating func close(object: Bool, _ byte: UInt8) {
        precondition(open.last?.isObject == object && !keyWritten, "closing a container that is not open")
        if open.removeLast().onePerLine { buffer.append(UInt8(ascii: "\n")) }
        buffer.append(byte)
    }

    private mutating func flush() {
        if !buffer.isEmpty { sink(buffer) }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writes all of `bytes` to standard output (fd 1) after flushing stdio's buffers, so text a program
/// printed before stays before. A closed pipe (`| head`) just ends the output.
public func writeStandardOutput(_ bytes: [UInt8]) {
    fflush(nil)
    _ = bytes.withUnsafeBytes { writeAll(1, $0) }
}
