import Testing
@testable import MoNet

/// The DNS query encoding and the strict answer parser, on byte fixtures: a real dnsmasq answer, then
/// compressed, empty, failed and hostile ones.
@Suite struct DNSMessageTests {
    static let name = "_imaps._tcp.example.test"
    /// `_imaps._tcp.example.test` in wire form: it starts at offset 12 of every message below.
    static let qname: [UInt8] =
        [6] + Array("_imaps".utf8) + [4] + Array("_tcp".utf8) + [7] + Array("example".utf8)
        + [4] + Array("test".utf8) + [0]

    /// Header + question; `answers` appended as they are.
    static func message(
        id: UInt16 = 0x1234, flags: UInt16 = 0x8580, qd: UInt16 = 1, an: UInt16, question: [UInt8] = qname,
        _ answers: [UInt8] = []
    ) -> [UInt8] {
        var m: [UInt8] = [
            UInt8(id >> 8), UInt8(id & 0xFF), UInt8(flags >> 8), UInt8(flags & 0xFF),
            0, UInt8(qd), UInt8(an >> 8), UInt8(an & 0xFF), 0, 0, 0, 0
        ]
        m += question + [0, 33, 0, 1]
        return m + answers
    }
    /// An SRV record owned by the question's name (a pointer to offset 12), with `rdata` as given.
    static func srv(_ rdata: [UInt8], owner: [UInt8] = [0xC0, 12], length: Int? = nil) -> [UInt8] {
        let n = length ?? rdata.count
        return owner + [0, 33, 0, 1, 0, 0, 0x0E, 0x10, UInt8(n >> 8), UInt8(n & 0xFF)] + rdata
    }
    static let mailTarget: [UInt8] = [4] + Array("mail".utf8) + [0xC0, 24]  // mail + "example.test" at offset 24

    @Test func queryBytes() throws {
        let q = try DNSMessage.query(id: 0x1234, name: Self.name, type: 33)
        #expect(
            q == [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1] + Self.qname + [0, 33, 0, 1]
                + [0, 0, 41, 0x04, 0xD0, 0, 0, 0, 0, 0, 0])
    }

    @Test(arguments: [
        "a..example.org", String(repeating: "a", count: 64) + ".org", "exa mple.org", "ex\u{1B}.org",
        ".", "", "é.example.org", Array(repeating: "abcdefghij", count: 26).joined(separator: ".")
    ])
    func badNamesAreNotAsked(name: String) {
        #expect(throws: DNSError.self) { try DNSMessage.query(id: 1, name: name, type: 33) }
    }

    /// The answer dnsmasq 2.90 gave to this query: one record, the target written out in full.
    @Test func dnsmasqAnswer() throws {
        let bytes = hex(
            "123485800001000100000000065f696d617073045f746370076578616d706c6504746573740000210001"
                + "c00c002100010000000000190000000103e1046d61696c076578616d706c65047465737400")
        #expect(
            try DNSMessage.parseSRVAnswer(bytes, id: 0x1234, name: Self.name)
                == [SRVRecord(priority: 0, weight: 1, port: 993, target: "mail.example.test")])
    }

    @Test func compressedTargetAndSeveralRecords() throws {
        let a = Self.srv([0, 10, 0, 5, 0x03, 0xE1] + Self.mailTarget)
        let b = Self.srv([0, 20, 0, 1, 0x03, 0xE1] + [5] + Array("mail2".utf8) + [0xC0, 24])
        let records = try DNSMessage.parseSRVAnswer(Self.message(an: 2, a + b), id: 0x1234, name: "_IMAPS._tcp.Example.TEST.")
        #expect(records.map(\.target) == ["mail.example.test", "mail2.example.test"])
        #expect(records.map(\.priority) == [10, 20])
    }

    @Test func emptyAndFailedAnswers() throws {
        #expect(try DNSMessage.parseSRVAnswer(Self.message(flags: 0x8583, an: 0), id: 0x1234, name: Self.name) == [])  // NXDOMAIN
        #expect(try DNSMessage.parseSRVAnswer(Self.message(an: 0), id: 0x1234, name: Self.name) == [])  // NODATA
        let failed = #expect(throws: DNSError.self) {
            try DNSMessage.parseSRVAnswer(Self.message(flags: 0x8582, an: 0), id: 0x1234, name: Self.name)
        }
        #expect(failed?.code == .failed && failed?.description == "DNS _imaps._tcp.example.test: the server answered SERVFAIL")
        let truncated = #expect(throws: DNSError.self) {
            try DNSMessage.parseSRVAnswer(Self.message(flags: 0x8780, an: 0), id: 0x1234, name: Self.name)
        }
        #expect(truncated?.code == .failed)
    }

    /// Records of other names or types are passed over; a target that is not a host name is dropped.
    @Test func otherRecordsAndHostileTargets() throws {
        let cname = [0xC0, 12, 0, 5, 0, 1, 0, 0, 0, 0, 0, 2, 0xC0, 24] as [UInt8]
        let otherOwner = Self.srv([0, 0, 0, 0, 0, 143] + Self.mailTarget, owner: [0xC0, 19])  // _tcp.example.test
        let escape = Self.srv([0, 0, 0, 0, 0, 143] + [5] + Array("ma\u{1B}[1".utf8) + [0xC0, 24])
        let root = Self.srv([0, 0, 0, 0, 0, 0, 0])
        let good = Self.srv([0, 1, 0, 0, 0x03, 0xE1] + Self.mailTarget)
        let records = try DNSMessage.parseSRVAnswer(
            Self.message(an: 5, cname + otherOwner + escape + root + good), id: 0x1234, name: Self.name)
        #expect(
            records == [
                SRVRecord(priority: 0, weight: 0, port: 0, target: "."),
                SRVRecord(priority: 1, weight: 0, port: 993, target: "mail.example.test")
            ])
    }

    /// Each of these is refused as malformed, never read past its end, never looped on.
    @Test(arguments: [
        ("header cut short", [0x12, 0x34, 0x85, 0x80, 0, 1] as [UInt8]),
        ("another ID", message(id: 0x4321, an: 0)),
        ("a query, not an answer", message(flags: 0x0100, an: 0)),
        ("two questions", message(qd: 2, an: 0)),
        ("another question", message(an: 0, question: [4] + Array("_imap".utf8.dropLast()) + [0])),
        ("more answers than bytes", message(an: 3, srv([0, 0, 0, 1, 0x03, 0xE1] + mailTarget))),
        ("a record's data past the end", message(an: 1, srv([0, 0, 0, 1, 0x03, 0xE1] + mailTarget, length: 200))),
        ("an SRV length that does not match", message(an: 1, srv([0, 0, 0, 1, 0x03, 0xE1] + mailTarget + [0], length: 14))),
        // The SRV target starts at offset 60 (12 header + 26 name + 4 + 12 record fields + 6).
        ("a pointer to itself", message(an: 1, srv([0, 0, 0, 1, 0x03, 0xE1, 0xC0, 60]))),
        ("a pointer forward", message(an: 1, srv([0, 0, 0, 1, 0x03, 0xE1, 0xC0, 200]))),
        ("a pointer back to its own name's start", message(an: 1, srv([0, 0, 0, 1, 0x03, 0xE1, 1, 0x61, 0xC0, 60]))),
        ("a loop through the question", message(an: 1, question: [1, 0x61, 0xC0, 12], srv([0, 0, 0, 1, 0x03, 0xE1, 0]))),
        ("label type 01", message(an: 1, srv([0, 0, 0, 1, 0x03, 0xE1, 0x41, 0]))),
        ("a name cut short", message(an: 1, srv([0, 0, 0, 1, 0x03, 0xE1, 9, 0x61]))),
        ("a pointer cut short", message(an: 1, srv([0, 0, 0, 1, 0x03, 0xE1, 0xC0]))),
        (
            "a name over 255 bytes",
            message(
                an: 1,
                srv(
                    [0, 0, 0, 1, 0x03, 0xE1]
                        + Array(repeating: [63] + Array(repeating: UInt8(0x61), count: 63), count: 4).flatMap { $0 } + [0]))
        )
    ])
    func hostileAnswers(label: String, bytes: [UInt8]) {
        let error = #expect(throws: DNSError.self, "\(label)") { try DNSMessage.parseSRVAnswer(bytes, id: 0x1234, name: Self.name) }
        #expect(error?.code == .malformed, "\(label)")
    }

    /// Every prefix of a valid answer is refused cleanly (no crash, no read past the end).
    @Test func everyTruncationIsRefused() throws {
        let full = Self.message(an: 1, Self.srv([0, 0, 0, 1, 0x03, 0xE1] + Self.mailTarget))
        _ = try DNSMessage.parseSRVAnswer(full, id: 0x1234, name: Self.name)
        for n in 0..<full.count {
            #expect(throws: DNSError.self) { try DNSMessage.parseSRVAnswer(Array(full[..<n]), id: 0x1234, name: Self.name) }
        }
    }

    @Test func resolvConf() {
        let text = "# comment\nsearch example.org\nnameserver 10.0.0.1\nnameserver\tfe80::1%eth0\noptions ndots:2\n"
        #expect(DNSResolver.nameservers(resolvConf: text) == ["10.0.0.1", "fe80::1"])
        #expect(DNSResolver.system(environment: ["MO_DNS_SERVER": "127.0.0.1:5353"]).port == 5353)
        #expect(DNSResolver.system(environment: ["MO_DNS_SERVER": "[::1]:53"]).host == "::1")
    }
}

func hex(_ s: String) -> [UInt8] {
    var out: [UInt8] = []
    var it = s.makeIterator()
    while let a = it.next(), let b = it.next() { out.append(UInt8(String([a, b]), radix: 16)!) }
    return out
}
