/// Line-end conversion between the IMAP/SMTP wire (CRLF) and Maildir files (LF), streaming: bytes may
/// arrive in chunks of any size, and a CR at the end of one chunk is resolved by the next.
///
/// Invariant: `toLF` then `toCRLF` restores the wire bytes whenever the wire form had no bare LF, and
/// `toCRLF` then `toLF` restores the file bytes whenever the file had no CR — which is what round-tripping
/// a message through the Maildir needs. A lone CR (not followed by LF) passes through unchanged both ways.
public struct CRLFToLF: Sendable {
    private var pendingCR = false
    public init() {}

    /// Converts one chunk; output may lag by one byte (a trailing CR) until the next chunk or `finish()`.
    public mutating func convert(_ input: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + input.count + 1)
        for b in input {
            if pendingCR {
                pendingCR = false
                if b == UInt8(ascii: "\n") { out.append(UInt8(ascii: "\n")); continue }
                out.append(UInt8(ascii: "\r"))
            }
            if b == UInt8(ascii: "\r") { pendingCR = true } else { out.append(b) }
        }
    }

    public mutating func convert(_ input: [UInt8], into out: inout [UInt8]) {
        input.withUnsafeBytes { convert($0, into: &out) }
    }

    /// Emits a CR held back at the end of the last chunk.
    public mutating func finish(into out: inout [UInt8]) {
        if pendingCR { out.append(UInt8(ascii: "\r")); pendingCR = false }
    }
}

/// File bytes to wire form over chunks: every LF not already preceded by CR (in this chunk or at the end of
/// the last) becomes CRLF.
public struct LFToCRLF: Sendable {
    private var previous: UInt8 = 0
    public init() {}

    public mutating func convert(_ input: ArraySlice<UInt8>, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + input.count + input.count / 32)
        for b in input {
            if b == UInt8(ascii: "\n") && previous != UInt8(ascii: "\r") { out.append(UInt8(ascii: "\r")) }
            out.append(b)
            previous = b
        }
    }
}

public enum LineEndings {
    /// Wire form of file bytes: every LF not already preceded by CR becomes CRLF.
    public static func toCRLF(_ input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var converter = LFToCRLF()
        converter.convert(input[...], into: &out)
        return out
    }

    /// File form of wire bytes: CRLF becomes LF.
    public static func toLF(_ input: [UInt8]) -> [UInt8] {
        var converter = CRLFToLF()
        var out: [UInt8] = []
        converter.convert(input, into: &out)
        converter.finish(into: &out)
        return out
    }

    /// The size the bytes will have on the wire (RFC822.SIZE): each bare LF gains a CR.
    public static func wireSize(_ input: UnsafeRawBufferPointer) -> Int {
        var size = input.count
        var previous: UInt8 = 0
        for b in input {
            if b == UInt8(ascii: "\n") && previous != UInt8(ascii: "\r") { size += 1 }
            previous = b
        }
        return size
    }
}
