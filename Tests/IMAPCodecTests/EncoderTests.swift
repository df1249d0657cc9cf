import IMAPCodec
import Testing

@Suite struct EncoderTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let command: Command
        let expected: String
        var capabilities: Set<Capability> = []
        var testDescription: String { name }
    }

    static let date = InternalDate(year: 1996, month: 7, day: 17, hour: 2, minute: 44, second: 25, zoneMinutes: -420)!

    /// Commands whose encoding is one chunk: the exact line.
    static let oneLine: [Case] = [
        Case(name: "CAPABILITY", command: .capability, expected: "A1 CAPABILITY\r\n"),
        Case(name: "NOOP", command: .noop, expected: "A1 NOOP\r\n"),
        Case(name: "LOGOUT", command: .logout, expected: "A1 LOGOUT\r\n"),
        Case(name: "STARTTLS", command: .startTLS, expected: "A1 STARTTLS\r\n"),
        Case(name: "LOGIN atoms", command: .login(username: "mo", password: "secret"), expected: "A1 LOGIN mo secret\r\n"),
        Case(
            name: "LOGIN quoted", command: .login(username: "mo@example.org", password: "a \"b\\c"),
            expected: "A1 LOGIN mo@example.org \"a \\\"b\\\\c\"\r\n"),
        Case(name: "LOGIN empty password", command: .login(username: "mo", password: ""), expected: "A1 LOGIN mo \"\"\r\n"),
        Case(
            name: "LOGIN literal+ for UTF-8", command: .login(username: "mo", password: "pässword"),
            expected: "A1 LOGIN mo {9+}\r\npässword\r\n", capabilities: [.literalPlus]),
        Case(
            name: "AUTHENTICATE SASL-IR", command: .authenticate(mechanism: "PLAIN", initialResponse: Array("\0mo\0pw".utf8)),
            expected: "A1 AUTHENTICATE PLAIN AG1vAHB3\r\n", capabilities: [.saslIR]),
        Case(
            name: "AUTHENTICATE SASL-IR empty", command: .authenticate(mechanism: "external", initialResponse: []),
            expected: "A1 AUTHENTICATE EXTERNAL =\r\n", capabilities: [.saslIR]),
        Case(
            name: "AUTHENTICATE without IR", command: .authenticate(mechanism: "XOAUTH2", initialResponse: nil),
            expected: "A1 AUTHENTICATE XOAUTH2\r\n"),
        Case(name: "ENABLE", command: .enable([.qresync, .condstore]), expected: "A1 ENABLE QRESYNC CONDSTORE\r\n"),
        Case(name: "LIST", command: .list(reference: MailboxName(""), pattern: "*"), expected: "A1 LIST \"\" *\r\n"),
        Case(
            name: "LIST RETURN",
            command: .list(
                reference: MailboxName(""), pattern: "Lists/%",
                returning: [.specialUse, .status([.messages, .uidNext, .highestModSeq])]),
            expected: "A1 LIST \"\" Lists/% RETURN (SPECIAL-USE STATUS (MESSAGES UIDNEXT HIGHESTMODSEQ))\r\n"),
        Case(
            name: "LIST mUTF-7 pattern", command: .list(reference: MailboxName(""), pattern: "Ärger/*"),
            expected: "A1 LIST \"\" &AMQ-rger/*\r\n"),
        Case(
            name: "STATUS",
            command: .status(MailboxName("Sent Items"), [.messages, .uidNext, .uidValidity, .unseen, .highestModSeq, .size]),
            expected: "A1 STATUS \"Sent Items\" (MESSAGES UIDNEXT UIDVALIDITY UNSEEN HIGHESTMODSEQ SIZE)\r\n"),
        Case(name: "SELECT", command: .select(.inbox), expected: "A1 SELECT INBOX\r\n"),
        Case(name: "SELECT mUTF-7", command: .select(MailboxName("Entwürfe & Co")), expected: "A1 SELECT \"Entw&APw-rfe &- Co\"\r\n"),
        Case(name: "SELECT CONDSTORE", command: .select(.inbox, .condstore), expected: "A1 SELECT INBOX (CONDSTORE)\r\n"),
        Case(
            name: "SELECT QRESYNC", command: .select(.inbox, .qresync(uidValidity: 67890007, modSeq: ModSequence(20050715194045000)!)),
            expected: "A1 SELECT INBOX (QRESYNC (67890007 20050715194045000))\r\n"),
        Case(
            name: "SELECT QRESYNC known UIDs",
            command: .select(
                .inbox,
                .qresync(
                    uidValidity: 67890007, modSeq: ModSequence(20050715194045000)!, knownUIDs: UIDSet([41...41, 43...211, 214...541]))),
            expected: "A1 SELECT INBOX (QRESYNC (67890007 20050715194045000 41,43:211,214:541))\r\n"),
        Case(name: "EXAMINE", command: .examine(MailboxName("a]b")), expected: "A1 EXAMINE a]b\r\n"),
        Case(name: "CREATE", command: .create(MailboxName("Lists/dev")), expected: "A1 CREATE Lists/dev\r\n"),
        Case(name: "DELETE", command: .delete(MailboxName("%x")), expected: "A1 DELETE \"%x\"\r\n"),
        Case(
            name: "UID FETCH", command: .uidFetch(UIDSet(1...UIDSet.star), [.uid, .flags, .internalDate, .rfc822Size, .modSeq, .body()]),
            expected: "A1 UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE MODSEQ BODY.PEEK[])\r\n"),
        Case(
            name: "UID FETCH sections",
            command: .uidFetch(
                UIDSet([1...5, 7...7]),
                [
                    .envelope, .bodyStructure,
                    .body(section: "HEADER.FIELDS (SUBJECT)"), .binary(section: "1", peek: false)
                ]),
            expected: "A1 UID FETCH 1:5,7 (ENVELOPE BODYSTRUCTURE BODY.PEEK[HEADER.FIELDS (SUBJECT)] BINARY[1])\r\n"),
        Case(
            name: "UID FETCH Gmail items",
            command: .uidFetch(UIDSet(1...UIDSet.star), [.uid, .gmailMessageID, .gmailThreadID, .gmailLabels, .flags]),
            expected: "A1 UID FETCH 1:* (UID X-GM-MSGID X-GM-THRID X-GM-LABELS FLAGS)\r\n"),
        Case(
            name: "UID STORE Gmail labels",
            command: .uidStoreGmailLabels(UIDSet(7), .add, [Array("\\Inbox".utf8), Array("Muy Importante".utf8), Array("work".utf8)]),
            expected: "A1 UID STORE 7 +X-GM-LABELS.SILENT (\\Inbox \"Muy Importante\" work)\r\n"),
        Case(
            name: "UID STORE Gmail labels removed, not silent",
            command: .uidStoreGmailLabels(UIDSet([1...2]), .remove, [Array("\\Starred".utf8)], silent: false),
            expected: "A1 UID STORE 1:2 -X-GM-LABELS (\\Starred)\r\n"),
        Case(
            name: "UID SEARCH X-GM-MSGID", command: .uidSearch(.gmailMessageID(1_278_455_344_230_334_866)),
            expected: "A1 UID SEARCH X-GM-MSGID 1278455344230334866\r\n"),
        Case(
            name: "UID SEARCH RETURN (ALL) X-GM-LABELS", command: .uidSearch(.gmailLabel(Array("\\Inbox".utf8)), returnAll: true),
            expected: "A1 UID SEARCH RETURN (ALL) X-GM-LABELS \\Inbox\r\n"),
        Case(
            name: "UID SEARCH X-GM-LABELS user label", command: .uidSearch(.gmailLabel(Array("Lists/dev team".utf8))),
            expected: "A1 UID SEARCH X-GM-LABELS \"Lists/dev team\"\r\n"),
        Case(
            name: "UID FETCH CHANGEDSINCE VANISHED",
            command: .uidFetch(UIDSet(1...UIDSet.star), [.flags], changedSince: ModSequence(12345), vanished: true),
            expected: "A1 UID FETCH 1:* (FLAGS) (CHANGEDSINCE 12345 VANISHED)\r\n"),
        Case(
            name: "UID STORE", command: .uidStore(UIDSet(4), StoreAction(.add, [.seen, .keyword("$Forwarded")])),
            expected: "A1 UID STORE 4 +FLAGS (\\Seen $Forwarded)\r\n"),
        Case(
            name: "UID STORE silent UNCHANGEDSINCE",
            command: .uidStore(
                UIDSet([4...4, 6...8]), StoreAction(.remove, [.deleted], silent: true),
                unchangedSince: ModSequence(12121230045)),
            expected: "A1 UID STORE 4,6:8 (UNCHANGEDSINCE 12121230045) -FLAGS.SILENT (\\Deleted)\r\n"),
        Case(
            name: "UID STORE replace empty", command: .uidStore(UIDSet(1), StoreAction(.replace, [])),
            expected: "A1 UID STORE 1 FLAGS ()\r\n"),
        Case(name: "UID COPY", command: .uidCopy(UIDSet(1...2), MailboxName("Sent")), expected: "A1 UID COPY 1:2 Sent\r\n"),
        Case(name: "UID MOVE", command: .uidMove(UIDSet(5), MailboxName("Trash")), expected: "A1 UID MOVE 5 Trash\r\n"),
        Case(name: "EXPUNGE", command: .expunge, expected: "A1 EXPUNGE\r\n"),
        Case(name: "UID EXPUNGE", command: .uidExpunge(UIDSet([3...3, 5...9])), expected: "A1 UID EXPUNGE 3,5:9\r\n"),
        Case(name: "IDLE", command: .idle, expected: "A1 IDLE\r\n"),
        Case(name: "CLOSE", command: .close, expected: "A1 CLOSE\r\n"),
        Case(name: "UNSELECT", command: .unselect, expected: "A1 UNSELECT\r\n"),
        Case(
            name: "UID SEARCH", command: .uidSearch(.and([.unseen, .since(date), .not(.deleted), .or(.from("a@b"), .subject("hi there"))])),
            expected: "A1 UID SEARCH UNSEEN SINCE 17-Jul-1996 NOT DELETED OR FROM a@b SUBJECT \"hi there\"\r\n"),
        Case(
            name: "UID SEARCH nested and modseq", command: .uidSearch(.or(.and([.seen, .flagged]), .modSeq(ModSequence(7)!))),
            expected: "A1 UID SEARCH OR (SEEN FLAGGED) MODSEQ 7\r\n"),
        Case(
            name: "UID SEARCH RETURN (ALL)", command: .uidSearch(.uid(UIDSet(1...4_000)), returnAll: true),
            expected: "A1 UID SEARCH RETURN (ALL) UID 1:4000\r\n"),
        Case(
            name: "UID SEARCH UTF-8", command: .uidSearch(.subject("grüße")),
            expected: "A1 UID SEARCH CHARSET UTF-8 SUBJECT {7+}\r\ngrüße\r\n", capabilities: [.literalPlus]),
        Case(
            name: "LITERAL- small literal", command: .login(username: "mö", password: "x"),
            expected: "A1 LOGIN {3+}\r\nmö x\r\n", capabilities: [.literalMinus]),
        Case(
            name: "CR LF cannot inject", command: .create(MailboxName(wire: Array("x\r\nA2 DELETE INBOX".utf8))),
            expected: "A1 CREATE {18+}\r\nx\r\nA2 DELETE INBOX\r\n", capabilities: [.literalPlus])
    ]

    @Test(arguments: oneLine)
    func encodesExactBytes(_ c: Case) throws {
        var e = CommandEncoder(capabilities: c.capabilities)
        let encoded = try e.encode(c.command)
        #expect(encoded.tag == "A1")
        #expect(encoded.chunks.count == 1)
        #expect(encoded.chunks.first?.waitForContinuation == false)
        #expect(String(decoding: encoded.bytes, as: UTF8.self) == c.expected)
    }

    func chunks(_ e: EncodedCommand) -> [(Bool, String)] {
        e.chunks.map { c in
            switch c.payload {
            case .bytes(let b): (c.waitForContinuation, String(decoding: b, as: UTF8.self))
            case .messageBody(let n): (c.waitForContinuation, "<body \(n)>")
            }
        }
    }

    @Test func synchronizingLiteralsSplitTheCommand() throws {
        var e = CommandEncoder()
        let c = try e.encode(.login(username: "mö", password: "pä ss"))
        let got = chunks(c)
        #expect(got.map(\.0) == [false, true, true])
        #expect(got.map(\.1) == ["A1 LOGIN {3}\r\n", "mö {6}\r\n", "pä ss\r\n"])
    }

    @Test func literalMinusOnlyUpTo4096() throws {
        var e = CommandEncoder(capabilities: [.literalMinus])
        let big = String(repeating: "é", count: 3000)  // 6000 bytes
        let got = chunks(try e.encode(.login(username: "u", password: big)))
        #expect(got.map(\.0) == [false, true])
        #expect(got[0].1 == "A1 LOGIN u {6000}\r\n")
    }

    @Test func appendStreamsTheBody() throws {
        var e = CommandEncoder()
        let sync = chunks(try e.encode(.append(.inbox, flags: [.seen, .keyword("$Forwarded")], date: Self.date, messageSize: 310)))
        #expect(sync.map(\.0) == [false, true, false])
        #expect(sync.map(\.1) == ["A1 APPEND INBOX (\\Seen $Forwarded) \"17-Jul-1996 02:44:25 -0700\" {310}\r\n", "<body 310>", "\r\n"])
        e.capabilities = [.literalPlus]
        let plus = chunks(try e.encode(.append(MailboxName("Sent"), messageSize: 0)))
        #expect(plus.map(\.0) == [false, false, false])
        #expect(plus.map(\.1) == ["A2 APPEND Sent {0+}\r\n", "<body 0>", "\r\n"])
    }

    @Test func authenticateWithoutSASLIRWaitsForContinuation() throws {
        var e = CommandEncoder()
        let got = chunks(try e.encode(.authenticate(mechanism: "PLAIN", initialResponse: Array("\0mo\0pw".utf8))))
        #expect(got.map(\.0) == [false, true])
        #expect(got.map(\.1) == ["A1 AUTHENTICATE PLAIN\r\n", "AG1vAHB3\r\n"])
        #expect(CommandEncoder.saslResponse(Array("abcd".utf8)) == bytes("YWJjZA==\r\n"))
        #expect(CommandEncoder.done == bytes("DONE\r\n"))
    }

    @Test func tagsIncrease() throws {
        var e = CommandEncoder(tags: TagGenerator(prefix: "mo"))
        #expect(try e.encode(.noop).tag == "mo1")
        #expect(try e.encode(.noop).tag == "mo2")
    }

    @Test func refusesUnencodable() {
        var e = CommandEncoder()
        #expect(throws: IMAPEncodeError.self) { try e.encode(.login(username: "a\0b", password: "x")) }
        #expect(throws: IMAPEncodeError.self) { try e.encode(.uidStore(UIDSet(1), StoreAction(.add, [.keyword("two words")]))) }
        #expect(throws: IMAPEncodeError.self) { try e.encode(.uidStoreGmailLabels(UIDSet(1), .add, [Array("\\In box".utf8)])) }
        #expect(throws: IMAPEncodeError.self) { try e.encode(.uidStore(UIDSet(1), StoreAction(.add, [.recent]))) }
        #expect(throws: IMAPEncodeError.self) { try e.encode(.uidFetch(UIDSet([]), [.uid])) }
        #expect(throws: IMAPEncodeError.self) { try e.encode(.uidFetch(UIDSet(1), [.body(section: "1]\r\nA2 LOGOUT")])) }
    }

    // MARK: - Round trips: data the client sends that also appears in responses.

    static let flagSets: [[Flag]] = [
        [], [.seen], [.answered, .flagged, .deleted, .seen, .draft], [.keyword("$Forwarded"), .keyword("NonJunk"), .extension("\\X-Custom")]
    ]

    @Test(arguments: flagSets)
    func flagsRoundTrip(_ flags: [Flag]) throws {
        var e = CommandEncoder()
        let line = try e.encode(.uidStore(UIDSet(1), StoreAction(.replace, flags))).bytes
        let list = String(decoding: line.dropFirst("A1 UID STORE 1 FLAGS ".utf8.count).dropLast(2), as: UTF8.self)
        let events = try parse(bytes("* 1 FETCH (FLAGS \(list))\r\n"))
        #expect(events[1] == .fetchAttribute(.flags(flags)))
        for f in flags { #expect(Flag(f.description) == f) }
    }

    static let sets: [String] = ["1", "1:5", "1:5,7,9:*", "4294967295", "3,1,2", "10:1"]

    @Test(arguments: sets)
    func uidSetRoundTrip(_ text: String) throws {
        let set = try #require(UIDSet(text))
        var e = CommandEncoder()
        let line = try e.encode(.uidExpunge(set)).bytes
        let wire = String(decoding: line.dropFirst("A1 UID EXPUNGE ".utf8.count).dropLast(2), as: UTF8.self)
        #expect(UIDSet(wire) == set)
        let events = try parse(bytes("* VANISHED \(wire)\r\nA1 OK [COPYUID 9 \(wire) \(wire)] x\r\n"))
        #expect(events.first == .untagged(.vanished(earlier: false, uids: set)))
        #expect(tagged(events).first?.text.code == .copyUID(uidValidity: 9, source: set, destination: set))
    }

    @Test func mailboxNameRoundTrip() throws {
        for name in ["INBOX", "Ärger", "Entwürfe & Co", "日本語", "a\"b", "Lists/dev"] {
            var e = CommandEncoder(capabilities: [.literalPlus])
            let line = try e.encode(.create(MailboxName(name))).bytes
            // The CREATE argument is exactly what a LIST response carries.
            let arg = Array(line.dropFirst("A1 CREATE ".count).dropLast(2))
            let events = try parse(bytes("* LIST () \"/\" ") + arg + bytes("\r\n"))
            guard case .untagged(.list(let l)) = events.first else { Issue.record("\(name)"); continue }
            #expect(l.mailbox.decoded == name)
            #expect(l.mailbox == MailboxName(name))
        }
    }
}

@Suite struct ValueTests {
    @Test func uidSetBasics() throws {
        #expect(UIDSet(uids: [9, 1, 2, 3, 5, 7, 8]).description == "1:3,5,7:9")
        #expect(UIDSet([5...9, 1...6, 12...12]).normalized().description == "1:9,12")
        #expect(UIDSet("1:*")?.description == "1:*")
        #expect(UIDSet("5:3")?.ranges == [3...5])
        #expect(UIDSet("") == nil && UIDSet("0") == nil && UIDSet("1,") == nil && UIDSet("4294967296") == nil)
        #expect(UIDSet("1:3,7")?.contains(7) == true)
        #expect(UIDSet("1:3,7")?.count == 4)
        #expect(UIDSet("2,4:5")?.elements == [2, 4, 5])
    }

    @Test(arguments: [
        ("17-Jul-1996 02:44:25 -0700", Int64(837596665)),
        ("01-Jan-1970 00:00:00 +0000", Int64(0)),
        ("29-Feb-2024 23:59:59 +0100", Int64(1709247599)),
        ("31-Dec-1969 23:00:00 -0100", Int64(0))
    ])
    func internalDate(_ text: String, _ epoch: Int64) throws {
        let d = try #require(InternalDate(Array(text.utf8)))
        #expect(d.epochSeconds == epoch)
        #expect(d.description == text)
        let back = InternalDate(epochSeconds: epoch, zoneMinutes: d.zoneMinutes)
        #expect(back == d)
    }

    @Test func capabilityAndAttributeNormalisation() {
        #expect(Capability("literal+") == .literalPlus)
        #expect(MailboxAttribute("\\SENT") == .sent && MailboxAttribute.sent.isSpecialUse)
        #expect(MailboxName(wire: Array("inbox".utf8)).isInbox)
        #expect(MailboxName(wire: Array("&Jjo".utf8)).decoded == nil)
    }
}
