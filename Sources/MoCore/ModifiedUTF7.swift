/// IMAP mailbox-name encoding, RFC 3501 §5.1.3 ("modified UTF-7").
///
/// Printable US-ASCII (0x20–0x7E) stands for itself, except `&`, written `&-`. Every other character is
/// UTF-16 (surrogate pairs for non-BMP) in modified base64 (`,` instead of `/`, no padding) between `&`
/// and `-`. All work is done on UTF-8 bytes and UTF-16 code units, never on `Character`s, so a combining
/// mark can never hide a byte from the checks.
public enum ModifiedUTF7 {
    /// Encodes a mailbox name for the wire. The result is printable ASCII; consecutive non-ASCII
    /// characters always go into one base64 run (adjacent runs are never produced).
    public static func encode(_ name: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(name.utf8.count)
        var pending: [UInt16] = []  // code units of the current shifted run

        func flush() {
            guard !pending.isEmpty else { return }
            out.append(UInt8(ascii: "&"))
            var bits: UInt32 = 0, count = 0
            for unit in pending {
                bits = (bits << 16) | UInt32(unit); count += 16
                while count >= 6 {
                    count -= 6
                    out.append(alphabet[Int((bits >> UInt32(count)) & 0x3F)])
                }
                bits &= (1 << UInt32(count)) - 1
            }
            if count > 0 { out.append(alphabet[Int((bits << UInt32(6 - count)) & 0x3F)]) }
            out.append(UInt8(ascii: "-"))
            pending.removeAll(keepingCapacity: true)
        }

        for scalar in name.unicodeScalars {
            let v = scalar.value
            if v >= 0x20 && v <= 0x7E {
                flush()
                out.append(UInt8(v))
                if v == UInt8(ascii: "&") { out.append(UInt8(ascii: "-")) }  // "&" → "&-"
            } else {
                pending.append(contentsOf: UTF16.encode(scalar)!)
            }
        }
        flush()
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes a wire-form mailbox name. Throws `ModifiedUTF7Error` on anything RFC 3501 forbids:
    /// raw non-printable or non-ASCII bytes, a bad base64 character, an unterminated `&`, non-zero or
    /// too many leftover bits, lone surrogates, and printable ASCII hidden in a base64 run.
    /// Adjacent runs (`&AOQ-&APY-`) are accepted, since they decode unambiguously.
    public static func decode(_ wire: String) throws(ModifiedUTF7Error) -> String {
        let bytes = Array(wire.utf8)
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count)
        func fail(_ reason: String) -> ModifiedUTF7Error { ModifiedUTF7Error(input: wire, reason: reason) }

        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            guard b >= 0x20 && b <= 0x7E else {
                throw fail(b >= 0x80 ? "raw non-ASCII byte at offset \(i)" : "raw control character at offset \(i)")
            }
            if b != UInt8(ascii: "&") { units.append(UInt16(b)); i += 1; continue }
            let start = i
            i += 1
            var bits: UInt32 = 0, count = 0, chars = 0
            var run: [UInt16] = []
            while true {
                guard i < bytes.count else { throw fail("unterminated \"&\" at offset \(start)") }
                let c = bytes[i]; i += 1
                if c == UInt8(ascii: "-") { break }
                guard let v = sextet(c) else {
                    throw fail("invalid base64 character \(describe(c)) at offset \(i - 1)")
                }
                chars += 1
                bits = (bits << 6) | UInt32(v); count += 6
                if count >= 16 {
                    count -= 16
                    run.append(UInt16(truncatingIfNeeded: bits >> UInt32(count)))
                    bits &= (1 << UInt32(count)) - 1
                }
            }
            if chars == 0 { units.append(UInt16(ascii: "&")); continue }  // "&-"
            // Only the padding of the last sextet may remain, and it must be zero.
            guard count < 6, bits == 0, !run.isEmpty else {
                throw fail("base64 run at offset \(start) does not end on a UTF-16 boundary")
            }
            if let u = run.first(where: { $0 >= 0x20 && $0 <= 0x7E }) {
                throw fail("printable ASCII \(describe(UInt8(u))) encoded in base64 at offset \(start)")
            }
            units.append(contentsOf: run)
        }

        var scalars = String.UnicodeScalarView()
        var it = units.makeIterator()
        var decoder = UTF16()
        loop: while true {
            switch decoder.decode(&it) {
            case .scalarValue(let s): scalars.append(s)
            case .emptyInput: break loop
            case .error: throw fail("unpaired UTF-16 surrogate")
            }
        }
        return String(scalars)
    }

    private static let alphabet: [UInt8] =
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,".utf8)

    private static func sextet(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: ","): return 63
        default: return nil
        }
    }

    private static func describe(_ c: UInt8) -> String {
        c >= 0x20 && c <= 0x7E ? "\"\(Character(Unicode.Scalar(c)))\"" : "0x" + String(c, radix: 16, uppercase: true)
    }
}

private extension UInt16 {
    init(ascii: Unicode.Scalar) { self = UInt16(ascii.value) }
}

/// A mailbox name that is not valid modified UTF-7.
public struct ModifiedUTF7Error: MoError, Equatable {
    /// The offending wire-form name.
    public let input: String
    /// What is wrong, e.g. `unterminated "&" at offset 4`.
    public let reason: String
    public var kind: ErrorKind { .data }
    public var description: String { "invalid modified UTF-7 in \(quotedForMessage(input)): \(reason)" }
}
