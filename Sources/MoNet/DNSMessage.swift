import MoCore

/// A DNS query or answer that cannot be used, naming what was asked.
public struct DNSError: MoError, Equatable {
    public enum Code: Sendable, Equatable {
        /// The name cannot be asked for (a label too long, a byte outside letters, digits, `-` and `_`).
        case badName
        /// The answer breaks RFC 1035 or a limit: truncated, a compression loop, a count beyond the bytes.
        case malformed
        /// The server answered with an error code (SERVFAIL, REFUSED, ...) or a truncated (TC) answer.
        case failed
        /// No answer in time, or the socket failed.
        case network
    }
    public let code: Code
    public let name: String
    public let detail: String

    public init(_ code: Code, name: String, _ detail: String) {
        self.code = code
        self.name = name
        self.detail = detail
    }

    public var kind: ErrorKind {
        switch code {
        case .badName: .usage
        case .malformed: .protocolViolation
        case .failed, .network: .temporary
        }
    }
    public var description: String { "DNS \(escapedForMessage(name)): \(detail)" }
}

/// One SRV record (RFC 2782). `target` is a host name of letters, digits, `-` and dots; "." (no labels)
/// means the service is not offered.
public struct SRVRecord: Sendable, Equatable {
    public var priority: UInt16
    public var weight: UInt16
    public var port: UInt16
    public var target: String

    public init(priority: UInt16, weight: UInt16, port: UInt16, target: String) {
        self.priority = priority
        self.weight = weight
        self.port = port
        self.target = target
    }

    /// Whether the record names a server: a target of "." says the service is not offered (RFC 2782), and
    /// port 0 is none.
    public var offersService: Bool { target != "." && port != 0 }
}

/// DNS messages (RFC 1035 §4): the encoding of one query, and a strict, bounded parser of the answer that
/// keeps the SRV records of the name asked for. Pure: bytes in, values out.
///
/// The parser trusts no count and no offset: every read is checked against the message's end, a name
/// is at most 255 bytes, every compression pointer must point strictly before the previous one (so no
/// loop can form, and a name costs at most its bytes), and a record's data must end exactly where its
/// length says.
public enum DNSMessage {
    public static let typeSRV: UInt16 = 33
    static let typeOPT: UInt16 = 41
    static let classIN: UInt16 = 1
    /// Our EDNS0 UDP payload size (RFC 6891; 1232 avoids IP fragmentation, the DNS flag day 2020 value).
    public static let udpPayload = 1232
    /// SRV records kept from one answer; the rest are ignored.
    static let maxRecords = 32

    /// A recursive query (RD set) for `name`, with an OPT record offering `udpPayload`.
    public static func query(id: UInt16, name: String, type: UInt16) throws(DNSError) -> [UInt8] {
        var out: [UInt8] = []
        out.append16(id)
        out.append16(0x0100)  // RD
        out.append16(1); out.append16(0); out.append16(0); out.append16(1)
        out += try encodeName(name)
        out.append16(type); out.append16(classIN)
        out.append(0)  // OPT: root name
        out.append16(typeOPT); out.append16(UInt16(udpPayload))
        out += [0, 0, 0, 0]  // extended RCODE, version 0, no DO bit
        out.append16(0)  // no options
        return out
    }

    /// `_imaps._tcp.example.org` as labels. Only letters, digits, `-` and `_` (the service labels): any
    /// other byte could not come from a mail domain and is refused rather than sent.
    static func encodeName(_ name: String) throws(DNSError) -> [UInt8] {
        var trimmed = Substring(name)
        if trimmed.hasSuffix(".") { trimmed = trimmed.dropLast() }
        var out: [UInt8] = []
        for label in trimmed.split(separator: ".", omittingEmptySubsequences: false) {
            let bytes = Array(label.utf8)
            guard !bytes.isEmpty, bytes.count <= 63 else {
                throw DNSError(.badName, name: name, "a label is empty or longer than 63 bytes")
            }
            guard bytes.allSatisfy({ isHostNameByte($0) || $0 == UInt8(ascii: "_") }) else {
                throw DNSError(.badName, name: name, "not a domain name")
            }
            out.append(UInt8(bytes.count))
            out += bytes
        }
        out.append(0)
        guard out.count <= 255 else { throw DNSError(.badName, name: name, "longer than 255 bytes") }
        return out
    }

    /// The SRV records for `name` in the answer to query `id`; [] for NXDOMAIN or no such records.
    /// Records whose target is not a host name are left out. Throws for anything malformed.
    public static func parseSRVAnswer(_ bytes: [UInt8], id: UInt16, name: String) throws(DNSError) -> [SRVRecord] {
        var r = DNSReader(bytes: bytes, name: name)
        let question = try encodeName(name)
        guard try r.u16() == id else { throw r.malformed("the answer is for another query") }
        let flags = try r.u16()
        guard flags & 0x8000 != 0, (flags >> 11) & 0xF == 0 else { throw r.malformed("not an answer to a standard query") }
        guard flags & 0x0200 == 0 else { throw DNSError(.failed, name: name, "the answer was truncated (TC)") }
        let qd = try r.u16(), an = try r.u16()
        _ = try r.u16(); _ = try r.u16()  // authority and additional: not read
        guard qd == 1 else { throw r.malformed("\(qd) questions in the answer") }
        let asked = try r.name()
        guard equalNames(asked, question) else { throw r.malformed("the answer repeats another question") }
        guard try r.u16() == typeSRV, try r.u16() == classIN else { throw r.malformed("the answer repeats another question") }
        switch flags & 0xF {
        case 0: break
        case 3: return []  // NXDOMAIN
        case let rcode:
            let names = [1: "FORMERR", 2: "SERVFAIL", 4: "NOTIMP", 5: "REFUSED"]
            throw DNSError(.failed, name: name, "the server answered \(names[Int(rcode)] ?? "RCODE \(rcode)")")
        }
        var records: [SRVRecord] = []
        for _ in 0..<an {
            let owner = try r.name()
            let type = try r.u16(), klass = try r.u16()
            _ = try r.u32()  // TTL
            let length = Int(try r.u16())
            let end = r.offset + length
            guard end <= bytes.count else { throw r.malformed("a record's data runs past the end") }
            // Only SRV records of the name asked (a CNAME chain is not followed: SRV owners are not aliases).
            if type == typeSRV && klass == classIN && equalNames(owner, question) {
                let priority = try r.u16(), weight = try r.u16(), port = try r.u16()
                let target = try r.name()
                guard r.offset == end else { throw r.malformed("an SRV record's length does not match its data") }
                if records.count < maxRecords, let host = hostName(target) {
                    records.append(SRVRecord(priority: priority, weight: weight, port: port, target: host))
                }
            }
            r.offset = end
        }
        return records
    }

    /// Wire-form names compared as DNS does: ASCII letters without case.
    static func equalNames(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        // Length bytes are at most 63, below "A": lowering them changes nothing.
        func lower(_ x: UInt8) -> UInt8 { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(x) ? x | 0x20 : x }
        return a.count == b.count && zip(a, b).allSatisfy { lower($0) == lower($1) }
    }

    /// The dotted text of a wire name if every label is a host label (letters, digits, `-`), "." for the
    /// root; nil otherwise (such a name must not reach a config file or a terminal).
    static func hostName(_ wire: [UInt8]) -> String? {
        var labels: [String] = []
        var i = 0
        while i < wire.count, wire[i] != 0 {
            let n = Int(wire[i])
            let label = wire[(i + 1)..<(i + 1 + n)]
            guard label.allSatisfy(isHostNameByte), label.first != UInt8(ascii: "-") else { return nil }
            labels.append(String(decoding: label, as: UTF8.self).lowercased())
            i += 1 + n
        }
        return labels.isEmpty ? "." : labels.joined(separator: ".")
    }
}

/// A cursor over a DNS message; every read is bounds-checked.
struct DNSReader {
    let bytes: [UInt8]
    /// The name asked, for messages.
    let asked: String
    var offset = 0

    init(bytes: [UInt8], name: String) {
        self.bytes = bytes
        self.asked = name
    }

    func malformed(_ detail: String) -> DNSError { DNSError(.malformed, name: asked, "bad answer: \(detail)") }

    mutating func u16() throws(DNSError) -> UInt16 {
        guard offset + 2 <= bytes.count else { throw malformed("truncated at byte \(offset)") }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func u32() throws(DNSError) -> UInt32 {
        UInt32(try u16()) << 16 | UInt32(try u16())
    }

    /// A name in wire form (length-prefixed labels and the final 0), compression pointers followed.
    /// The cursor ends after the name's bytes at its own place (after the first pointer, if any).
    mutating func name() throws(DNSError) -> [UInt8] {
        var out: [UInt8] = []
        var pos = offset
        var jumped = false
        // A pointer must point before the place the name (or the previous pointer's target) starts.
        var limit = offset
        while true {
            guard pos < bytes.count else { throw malformed("truncated in a name") }
            let length = Int(bytes[pos])
            switch length & 0xC0 {
            case 0x00:
                if length == 0 {
                    out.append(0)
                    if !jumped { offset = pos + 1 }
                    return out
                }
                guard pos + 1 + length <= bytes.count else { throw malformed("truncated in a name") }
                guard out.count + 1 + length + 1 <= 255 else { throw malformed("a name longer than 255 bytes") }
                out += bytes[pos...(pos + length)]
                pos += 1 + length
            case 0xC0:
                guard pos + 1 < bytes.count else { throw malformed("truncated in a name") }
                let target = (length & 0x3F) << 8 | Int(bytes[pos + 1])
                guard target < limit else { throw malformed("a compression pointer that does not point backward") }
                if !jumped { offset = pos + 2; jumped = true }
                limit = target
                pos = target
            default:
                throw malformed("label type \(length >> 6) is not supported")
            }
        }
    }
}

extension Array where Element == UInt8 {
    mutating func append16(_ v: UInt16) {
        append(UInt8(v >> 8)); append(UInt8(v & 0xFF))
    }
}

/// A byte of a host name's label (LDH: letters, digits, hyphen).
public func isHostNameByte(_ b: UInt8) -> Bool {
    ASCII.isDigit(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
        || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || b == UInt8(ascii: "-")
}
