import Testing
@testable import MoCore

@Suite struct ModifiedUTF7Tests {
    /// (decoded, wire) pairs that must round-trip exactly.
    static let pairs: [(String, String)] = [
        ("", ""),
        ("INBOX", "INBOX"),
        ("&", "&-"),
        ("Tom & Jerry", "Tom &- Jerry"),
        ("Entwürfe", "Entw&APw-rfe"),
        ("äöü", "&AOQA9gD8-"),
        ("~peter/mail/台北/日本語", "~peter/mail/&U,BTFw-/&ZeVnLIqe-"),
        ("受信トレイ", "&U9dP4TDIMOwwpA-"),
        ("😀", "&2D3eAA-"),
        ("a😀b€", "a&2D3eAA-b&IKw-"),
        ("tab\there", "tab&AAk-here"),
        ("Sent Items", "Sent Items")
    ]

    @Test(arguments: pairs)
    func roundTrip(_ decoded: String, _ wire: String) throws {
        #expect(ModifiedUTF7.encode(decoded) == wire)
        #expect(try ModifiedUTF7.decode(wire) == decoded)
    }

    @Test func adjacentRunsAreAcceptedButNeverProduced() throws {
        #expect(try ModifiedUTF7.decode("&AOQ-&APY-") == "äö")
        #expect(ModifiedUTF7.encode("äö") == "&AOQA9g-")
    }

    static let malformed: [(String, String)] = [
        ("Entw&APw", #"invalid modified UTF-7 in "Entw&APw": unterminated "&" at offset 4"#),
        ("&", #"invalid modified UTF-7 in "&": unterminated "&" at offset 0"#),
        ("a&AP/w-", #"invalid modified UTF-7 in "a&AP/w-": invalid base64 character "/" at offset 4"#),
        ("&AGE=-", #"invalid modified UTF-7 in "&AGE=-": invalid base64 character "=" at offset 4"#),
        ("&AGE-", #"invalid modified UTF-7 in "&AGE-": printable ASCII "a" encoded in base64 at offset 0"#),
        ("&APx-", #"invalid modified UTF-7 in "&APx-": base64 run at offset 0 does not end on a UTF-16 boundary"#),
        ("&A-", #"invalid modified UTF-7 in "&A-": base64 run at offset 0 does not end on a UTF-16 boundary"#),
        ("&AOQA-", #"invalid modified UTF-7 in "&AOQA-": base64 run at offset 0 does not end on a UTF-16 boundary"#),
        ("&2D0-", #"invalid modified UTF-7 in "&2D0-": unpaired UTF-16 surrogate"#),
        ("Entwürfe", #"invalid modified UTF-7 in "Entwürfe": raw non-ASCII byte at offset 4"#),
        ("a\nb", #"invalid modified UTF-7 in "a\u{A}b": raw control character at offset 1"#),
        ("a\u{0}b", #"invalid modified UTF-7 in "a\u{0}b": raw control character at offset 1"#)
    ]

    @Test(arguments: malformed)
    func malformedIsRefused(_ wire: String, _ message: String) {
        #expect {
            _ = try ModifiedUTF7.decode(wire)
        } throws: { error in
            (error as? ModifiedUTF7Error)?.description == message && (error as? ModifiedUTF7Error)?.kind == .data
        }
    }

    @Test func everyBMPAndAstralSampleRoundTrips() throws {
        var s = ""
        for v in stride(from: 0x01, to: 0x2FFFF, by: 97) {
            if let u = Unicode.Scalar(v) { s.unicodeScalars.append(u) }
        }
        let wire = ModifiedUTF7.encode(s)
        #expect(wire.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E })
        #expect(try ModifiedUTF7.decode(wire).unicodeScalars.elementsEqual(s.unicodeScalars))
    }
}
