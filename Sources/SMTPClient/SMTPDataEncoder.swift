#if canImport(Glibc)
    import Glibc
#endif

/// Turns message bytes into the DATA stream (RFC 5321 §4.5.2), one chunk at a time.
///
/// - Every line ending becomes CRLF: CRLF stays, a bare LF becomes CRLF, a bare CR becomes CRLF (bare CR
///   and LF must not be sent, §2.3.8).
/// - A line starting with `.` gets a second `.` (dot-stuffing), so no line of the message ends DATA.
/// - `finish` ends the last line if the message did not, then writes the terminating `.` line.
/// Runs of ordinary bytes are copied in bulk (found with `memchr`), so a 20 MB message costs one pass.
/// State (a CR at the end of a chunk, line start) carries across chunks, so any chunking gives the same output.
public struct SMTPDataEncoder: Sendable {
    private var atLineStart = true
    private var pendingCR = false

    public init() {}

    /// Appends the encoding of `input` to `out`.
    public mutating func encode(_ input: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let n = input.count
        let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n"), dot = UInt8(ascii: ".")
        var i = 0
        var nextLF = -1  // index of the next LF at or after i (n when none); -1 when not yet searched
        while i < n {
            let b = base[i]
            if pendingCR {
                pendingCR = false
                out.append(cr); out.append(lf)
                atLineStart = true
                if b == lf { i += 1; continue }
            }
            if b == cr { pendingCR = true; i += 1; continue }
            if b == lf { out.append(cr); out.append(lf); atLineStart = true; i += 1; continue }
            if atLineStart {
                if b == dot { out.append(dot) }
                atLineStart = false
            }
            // Copy the run up to the next CR or LF. The LF search is cached, and the CR search is bounded by
            // that LF, so the whole chunk is scanned a bounded number of times.
            if nextLF < i {
                if let p = memchr(base + i, Int32(lf), n - i) {
                    nextLF = base.distance(to: p.assumingMemoryBound(to: UInt8.self))
                } else {
                    nextLF = n
                }
            }
            var end = nextLF
            if let p = memchr(base + i, Int32(cr), nextLF - i) {
                end = base.distance(to: p.assumingMemoryBound(to: UInt8.self))
            }
            out.append(contentsOf: UnsafeBufferPointer(start: base + i, count: end - i))
            i = end
        }
    }

    /// Convenience for tests and small messages.
    public mutating func encode(_ input: [UInt8], into out: inout [UInt8]) {
        input.withUnsafeBytes { encode($0, into: &out) }
    }

    /// Appends the end of the stream: CRLF if the last line is open, then `.` CRLF.
    public mutating func finish(into out: inout [UInt8]) {
        if pendingCR || !atLineStart { out.append(contentsOf: [UInt8(ascii: "\r"), UInt8(ascii: "\n")]) }
        pendingCR = false
        out.append(contentsOf: [UInt8(ascii: "."), 13, 10])
        atLineStart = true
    }

    /// Encodes a whole message at once.
    public static func encodeAll(_ message: [UInt8]) -> [UInt8] {
        var encoder = SMTPDataEncoder()
        var out: [UInt8] = []
        out.reserveCapacity(message.count + message.count / 32 + 3)
        encoder.encode(message, into: &out)
        encoder.finish(into: &out)
        return out
    }
}

/// Facts about a message that decide MAIL FROM parameters, gathered in one pass.
public struct MessageScan: Sendable, Equatable {
    /// Bytes as the DATA stream will carry them (every line ended by CRLF), without dot-stuffing and the
    /// final `.` line.
    public var wireSize: Int
    /// Any byte ≥ 0x80 anywhere.
    public var has8Bit: Bool
    /// Any byte ≥ 0x80 in the header section (raw UTF-8 headers, RFC 6532).
    public var headerHas8Bit: Bool

    public init(_ message: UnsafeRawBufferPointer) {
        var size = message.count, eight = false, headerEight = false
        var inHeader = true, lineStart = true
        var previous: UInt8 = 0
        for b in message {
            if b == UInt8(ascii: "\n") {
                if previous != UInt8(ascii: "\r") { size += 1 }
                // An empty line ends the header section.
                if lineStart && inHeader { inHeader = false }
                lineStart = true
            } else if b == UInt8(ascii: "\r") {
                // Counted at the following byte: a CR not followed by LF becomes CRLF.
            } else {
                if previous == UInt8(ascii: "\r") { size += 1; if lineStart && inHeader { inHeader = false }; lineStart = true }
                if b >= 0x80 { eight = true; if inHeader { headerEight = true } }
                lineStart = false
            }
            if b == UInt8(ascii: "\r") && previous == UInt8(ascii: "\r") { size += 1 }
            previous = b
        }
        if previous == UInt8(ascii: "\r") { size += 1 }
        if previous != UInt8(ascii: "\r") && previous != UInt8(ascii: "\n") && !message.isEmpty { size += 2 }  // the CRLF `finish` supplies
        wireSize = size
        has8Bit = eight
        headerHas8Bit = headerEight
    }

    public init(_ message: [UInt8]) {
        self = message.withUnsafeBytes { MessageScan($0) }
    }
}
