import IMAPCodec
import Testing

/// Hand-made responses covering grammar corners and server quirks. Each case runs under every `Feed`.
@Suite struct ParserEdgeTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let input: String
        let expected: [ResponseEvent]
        var testDescription: String { name }
    }

    static func list(_ attrs: [MailboxAttribute], _ delim: Character?, _ wire: String, _ ext: [ListResponse.ExtendedItem] = [])
        -> ResponseEvent
    {
        .untagged(
            .list(
                ListResponse(
                    attributes: attrs, delimiter: delim.map { $0.asciiValue! },
                    mailbox: MailboxName(wire: bytes(wire)), extendedItems: ext)))
    }
    static func ok(_ code: ResponseCode?, _ text: String) -> ResponseEvent {
        .untagged(.ok(ResponseText(code: code, text: text)))
    }
    static func tok(_ tag: String, _ code: ResponseCode?, _ text: String) -> ResponseEvent {
        .tagged(TaggedResponse(tag: tag, status: .ok, text: ResponseText(code: code, text: text)))
    }

    static let cases: [Case] = [
        Case(
            name: "literal mailbox name", input: "* LIST (\\HasNoChildren) \"/\" {6}\r\nab\"c d\r\n",
            expected: [list([.hasNoChildren], "/", "ab\"c d")]),
        Case(
            name: "NIL delimiter, empty name", input: "* LIST (\\Noselect) NIL \"\"\r\n",
            expected: [list([.noSelect], nil, "")]),
        Case(
            name: "quoted escapes", input: "* LIST () \"\\\\\" \"a\\\"b\\\\c\"\r\n",
            expected: [list([], "\\", "a\"b\\c")]),
        Case(
            name: "LIST extended data", input: "* LIST (\\HasChildren) \".\" Foo (\"CHILDINFO\" (\"SUBSCRIBED\"))\r\n",
            expected: [list([.hasChildren], ".", "Foo", [.init(name: "CHILDINFO", raw: bytes("(\"SUBSCRIBED\")"))])]),
        Case(
            name: "LSUB", input: "* LSUB () \"/\" INBOX\r\n",
            expected: [.untagged(.lsub(ListResponse(attributes: [], delimiter: 0x2F, mailbox: .inbox)))]),
        Case(
            name: "empty flag lists", input: "* FLAGS ()\r\n* 1 FETCH (FLAGS ())\r\n",
            expected: [.untagged(.flags([])), .fetchStart(sequenceNumber: 1), .fetchAttribute(.flags([])), .fetchEnd]),
        Case(
            name: "{0} body literal", input: "* 1 FETCH (BODY[] {0}\r\n)\r\n",
            expected: [.fetchStart(sequenceNumber: 1), .bodyStart(.init(kind: .body, section: "", size: 0)), .bodyEnd, .fetchEnd]),
        Case(
            name: "body then more attributes", input: "* 3 FETCH (BODY[] {3}\r\nabc UID 9 FLAGS (\\Seen))\r\n",
            expected: [
                .fetchStart(sequenceNumber: 3), .bodyStart(.init(kind: .body, section: "", size: 3)),
                .bodyBytes(bytes("abc")), .bodyEnd, .fetchAttribute(.uid(9)), .fetchAttribute(.flags([.seen])), .fetchEnd
            ]),
        Case(
            name: "NIL and quoted bodies", input: "* 4 FETCH (BODY[1] NIL BODY[HEADER]<5> \"x\\\"y\")\r\n",
            expected: [
                .fetchStart(sequenceNumber: 4), .bodyStart(.init(kind: .body, section: "1", size: 0, isNil: true)), .bodyEnd,
                .bodyStart(.init(kind: .body, section: "HEADER", origin: 5, size: 3)), .bodyBytes(bytes("x\"y")), .bodyEnd,
                .fetchEnd
            ]),
        Case(
            name: "binary literal", input: "* 2 FETCH (BINARY[1] ~{3}\r\na\u{0}b)\r\n",
            expected: [
                .fetchStart(sequenceNumber: 2), .bodyStart(.init(kind: .binary, section: "1", size: 3, isBinaryLiteral: true)),
                .bodyBytes([0x61, 0, 0x62]), .bodyEnd, .fetchEnd
            ]),
        Case(
            name: "RFC822 body", input: "* 1 FETCH (RFC822 {2}\r\nhi RFC822.HEADER NIL)\r\n",
            expected: [
                .fetchStart(sequenceNumber: 1), .bodyStart(.init(kind: .rfc822, section: "", size: 2)), .bodyBytes(bytes("hi")),
                .bodyEnd, .bodyStart(.init(kind: .rfc822Header, section: "", size: 0, isNil: true)), .bodyEnd, .fetchEnd
            ]),
        Case(
            name: "section with quoted ] and partial", input: "* 1 FETCH (BODY[HEADER.FIELDS (\"X]\" FROM)]<0> {1}\r\nz)\r\n",
            expected: [
                .fetchStart(sequenceNumber: 1), .bodyStart(.init(kind: .body, section: "HEADER.FIELDS (\"X]\" FROM)", origin: 0, size: 1)),
                .bodyBytes(bytes("z")), .bodyEnd, .fetchEnd
            ]),
        Case(
            name: "Gmail X-GM attributes (Google's own example)",
            input:
                "* 1 FETCH (X-GM-THRID 1278455344230334865 X-GM-MSGID 1278455344230334866 X-GM-LABELS (\\Inbox \\Sent Important \"Muy Importante\") UID 4 FLAGS (\\Seen))\r\n",
            expected: [
                .fetchStart(sequenceNumber: 1),
                .fetchAttribute(.gmailThreadID(1_278_455_344_230_334_865)),
                .fetchAttribute(.gmailMessageID(1_278_455_344_230_334_866)),
                .fetchAttribute(.gmailLabels([bytes("\\Inbox"), bytes("\\Sent"), bytes("Important"), bytes("Muy Importante")])),
                .fetchAttribute(.uid(4)), .fetchAttribute(.flags([.seen])), .fetchEnd
            ]),
        Case(
            name: "Gmail labels: none, a literal, an escaped quote, a modified UTF-7 name, the largest id",
            input:
                "* 2 FETCH (X-GM-LABELS () UID 5)\r\n* 3 FETCH (X-GM-LABELS ({5}\r\na b c \"say \\\"hi\\\"\" Caf&AOk- \\Starred) X-GM-MSGID 18446744073709551615)\r\n",
            expected: [
                .fetchStart(sequenceNumber: 2), .fetchAttribute(.gmailLabels([])), .fetchAttribute(.uid(5)), .fetchEnd,
                .fetchStart(sequenceNumber: 3),
                .fetchAttribute(.gmailLabels([bytes("a b c"), bytes("say \"hi\""), bytes("Caf&AOk-"), bytes("\\Starred")])),
                .fetchAttribute(.gmailMessageID(UInt64.max)), .fetchEnd
            ]),
        Case(
            name: "lower case and extra spaces", input: "*  5  exists\r\n* 1 fetch (uid 5  flags (\\seen \\DELETED) )\r\n",
            expected: [
                .untagged(.exists(5)), .fetchStart(sequenceNumber: 1), .fetchAttribute(.uid(5)),
                .fetchAttribute(.flags([.seen, .deleted])), .fetchEnd
            ]),
        Case(
            name: "single-digit day in INTERNALDATE", input: "* 1 FETCH (INTERNALDATE \" 1-Jan-2020 00:00:00 +0100\")\r\n",
            expected: [
                .fetchStart(sequenceNumber: 1),
                .fetchAttribute(.internalDate(InternalDate(year: 2020, month: 1, day: 1, hour: 0, minute: 0, second: 0, zoneMinutes: 60)!)),
                .fetchEnd
            ]),
        Case(
            name: "VANISHED (EARLIER)", input: "* VANISHED (EARLIER) 1:3,5\r\n",
            expected: [.untagged(.vanished(earlier: true, uids: UIDSet([1...3, 5...5])))]),
        Case(
            name: "ESEARCH with MODSEQ", input: "* ESEARCH (TAG \"A5\") UID ALL 4:7,9 MODSEQ 917162500\r\n* ESEARCH UID COUNT 0\r\n",
            expected: {
                var a = ESearchResponse(); a.tag = "A5"; a.uid = true; a.all = UIDSet([4...7, 9...9]); a.modSeq = ModSequence(917162500)
                var b = ESearchResponse(); b.uid = true; b.count = 0
                return [.untagged(.esearch(a)), .untagged(.esearch(b))]
            }()),
        Case(
            name: "SEARCH empty and trailing space", input: "* SEARCH\r\n* SEARCH 2 84 \r\n",
            expected: [.untagged(.search([], modSeq: nil)), .untagged(.search([2, 84], modSeq: nil))]),
        Case(
            name: "response codes",
            input: [
                "A1 OK [APPENDUID 38505 3955] done\r\n",
                "A2 OK [COPYUID 38505 304,319:320 3956:3958] done\r\n",
                "A3 OK [MODIFIED 7,9] Conditional STORE failed\r\n",
                "A4 NO [BADCHARSET (UTF-8 US-ASCII)] no\r\n",
                "* OK [NOMODSEQ] Sorry\r\n* OK [UIDNOTSTICKY] Non-persistent UIDs\r\n* NO [ALERT] Quota\r\n",
                "A5 NO [TRYCREATE] No such mailbox\r\n* OK [UNSEEN 12] first\r\n* BAD [PARSE] x\r\n"
            ].joined(),
            expected: [
                tok("A1", .appendUID(uidValidity: 38505, uids: UIDSet(3955)), "done"),
                tok("A2", .copyUID(uidValidity: 38505, source: UIDSet([304...304, 319...320]), destination: UIDSet(3956...3958)), "done"),
                tok("A3", .modified(UIDSet([7...7, 9...9])), "Conditional STORE failed"),
                .tagged(TaggedResponse(tag: "A4", status: .no, text: ResponseText(code: .badCharset(["UTF-8", "US-ASCII"]), text: "no"))),
                ok(.noModSeq, "Sorry"), ok(.uidNotSticky, "Non-persistent UIDs"),
                .untagged(.no(ResponseText(code: .alert, text: "Quota"))),
                .tagged(TaggedResponse(tag: "A5", status: .no, text: ResponseText(code: .tryCreate, text: "No such mailbox"))),
                ok(.unseen(12), "first"),
                .untagged(.bad(ResponseText(code: .parse, text: "x")))
            ]),
        Case(
            name: "unknown and malformed response codes",
            input: "A1 OK [X-FOO bar baz] done\r\n* OK [XYZ] hi\r\n* OK [UIDNEXT abc] x\r\n* OK [not a code\r\n",
            expected: [
                tok("A1", .other(name: "X-FOO", text: "bar baz"), "done"), ok(.other(name: "XYZ", text: ""), "hi"),
                ok(.other(name: "UIDNEXT", text: "abc"), "x"), ok(nil, "[not a code")
            ]),
        Case(
            name: "code without text, continuation without space", input: "* OK [READ-WRITE]\r\n+\r\n+ YWJj\r\n",
            expected: [ok(.readWrite, ""), .continuation([]), .continuation(bytes("YWJj"))]),
        Case(
            name: "unknown untagged, with a literal", input: "* ID (\"name\" \"Dovecot\")\r\n* XFOO {3}\r\na\r\n rest\r\n* 3 XBAR 1\r\n",
            expected: [
                .untagged(.other(name: "ID", raw: bytes("(\"name\" \"Dovecot\")"))),
                .untagged(.other(name: "XFOO", raw: bytes("{3}\r\na\r\n rest"))),
                .untagged(.other(name: "XBAR", raw: bytes("1")))
            ]),
        Case(
            name: "raw UTF-8 mailbox name", input: "* LIST () \"/\" \"caf\u{e9}\"\r\n",
            expected: [list([], "/", "caf\u{e9}")]),
        Case(
            name: "bare LF, PREAUTH, BYE", input: "* 3 EXISTS\n* PREAUTH hi\r\n* BYE [ALERT] bye\r\n",
            expected: [
                .untagged(.exists(3)), .untagged(.preauth(ResponseText(text: "hi"))),
                .untagged(.bye(ResponseText(code: .alert, text: "bye")))
            ]),
        Case(
            name: "STATUS with unknown item and SIZE", input: "* STATUS \"a b\" (MESSAGES 3 X-FOO (1 2) SIZE 12345678901)\r\n",
            expected: {
                var s = StatusResponse(mailbox: MailboxName("a b")); s.messages = 3; s.size = 12345678901
                return [.untagged(.status(s))]
            }()),
        Case(
            name: "EXPUNGE, RECENT, ENABLED", input: "* 7 EXPUNGE\r\n* 0 RECENT\r\n* ENABLED CONDSTORE QRESYNC\r\n",
            expected: [.untagged(.expunge(7)), .untagged(.recent(0)), .untagged(.enabled([.condstore, .qresync]))]),
        Case(
            name: "max uint32 and 63-bit modseq", input: "* 1 FETCH (UID 4294967295 MODSEQ (9223372036854775807))\r\n",
            expected: [.fetchStart(sequenceNumber: 1), .fetchAttribute(.uid(4294967295)), .fetchAttribute(.modSeq(.max)), .fetchEnd]),
        // Issue #14: one malformed flag is skipped (and reported raw); the session stays in step.
        Case(
            name: "stray backslash in FETCH FLAGS", input: "* 1 FETCH (UID 5 FLAGS (\\Seen \\))\r\nA1 OK done\r\n",
            expected: [
                .fetchStart(sequenceNumber: 1), .fetchAttribute(.uid(5)), .fetchAttribute(.flags([.seen])),
                .fetchAttribute(.skippedFlags([[0x5C]])), .fetchEnd, tok("A1", nil, "done")
            ]),
        Case(
            name: "several malformed FETCH flags, good ones kept",
            input: "* 2 FETCH (FLAGS (\\Seen\\ $Junk \u{1B}[2J ] \\Flagged) UID 7)\r\n* 3 FETCH (FLAGS (\\))\r\n",
            expected: [
                .fetchStart(sequenceNumber: 2), .fetchAttribute(.flags([.keyword("$Junk"), .flagged])),
                .fetchAttribute(.skippedFlags([bytes("\\Seen\\"), [0x1B, 0x5B, 0x32, 0x4A], bytes("]")])),
                .fetchAttribute(.uid(7)), .fetchEnd,
                .fetchStart(sequenceNumber: 3), .fetchAttribute(.flags([])), .fetchAttribute(.skippedFlags([[0x5C]])),
                .fetchEnd
            ]),
        Case(
            name: "malformed flag dropped from FLAGS and PERMANENTFLAGS",
            input: "* FLAGS (\\Seen \\ $Junk)\r\n* OK [PERMANENTFLAGS (\\Seen \\\\ \\*)] ok\r\n",
            expected: [.untagged(.flags([.seen, .keyword("$Junk")])), ok(.permanentFlags([.seen, .wildcard]), "ok")])
    ]

    @Test(arguments: cases, Feed.allCases)
    func parses(_ c: Case, _ feed: Feed) throws {
        #expect(try parse(bytes(c.input), feed) == c.expected)
    }

    static let malformed: [(String, String)] = [
        ("bad number", "* 1 FETCH (UID x)\r\n"),
        ("bad status word", "A1 MAYBE ok\r\n"),
        ("two-character delimiter", "* LIST () \"ab\" x\r\n"),
        ("CR in quoted", "* LIST () \"/\" \"a\rb\"\r\n"),
        ("uid too big", "* 1 FETCH (UID 4294967296)\r\n"),
        ("modseq over 63 bits", "* 1 FETCH (MODSEQ (9223372036854775808))\r\n"),
        ("zero in uid set", "* VANISHED 0:3\r\n"),
        ("junk after FETCH", "* 1 FETCH UID\r\n"),
        ("bad INTERNALDATE", "* 1 FETCH (INTERNALDATE \"yesterday\")\r\n"),
        ("missing tag", " OK\r\n"),
        // Where the end of a flag list could no longer be found, FLAGS stays strict.
        ("quote in FETCH FLAGS", "* 1 FETCH (FLAGS (\\Seen \"a)\"))\r\n"),
        ("list in FETCH FLAGS", "* 1 FETCH (FLAGS (\\Seen (x)))\r\n"),
        ("line end in FETCH FLAGS", "* 1 FETCH (FLAGS (\\Seen\r\n"),
        ("literal in FETCH FLAGS", "* 1 FETCH (FLAGS ({3}\r\nabc))\r\n"),
        ("X-GM-MSGID past 64 bits", "* 1 FETCH (X-GM-MSGID 18446744073709551616)\r\n"),
        ("X-GM-LABELS not a list", "* 1 FETCH (X-GM-LABELS \\Inbox)\r\n"),
        ("X-GM-LABELS a lone backslash", "* 1 FETCH (X-GM-LABELS (\\ x))\r\n"),
        ("X-GM-LABELS unclosed", "* 1 FETCH (X-GM-LABELS (a b\r\n")
    ]

    @Test(arguments: malformed.map(\.0))
    func refusesMalformed(_ name: String) {
        let input = Self.malformed.first { $0.0 == name }!.1
        for feed in Feed.allCases {
            #expect(throws: IMAPParseError.self) { try parse(bytes(input), feed) }
        }
    }

    @Test func parserIsDeadAfterAnError() throws {
        var p = ResponseParser()
        p.append(bytes("A1 MAYBE\r\n* 1 EXISTS\r\n"))
        let first = #expect(throws: IMAPParseError.self) { try p.next() }
        let second = #expect(throws: IMAPParseError.self) { try p.next() }
        #expect(first == second)
        #expect(first?.kind == .protocolViolation)
        p.append(bytes("* 2 EXISTS\r\n"))
        #expect(p.bufferedByteCount == 0)
    }

    @Test func needMoreConsumesNothing() throws {
        var p = ResponseParser()
        p.append(bytes("* 1 FETCH (UID 1 FLAGS (\\Se"))
        #expect(try p.next() == .fetchStart(sequenceNumber: 1))
        #expect(try p.next() == .fetchAttribute(.uid(1)))
        let before = p.bufferedByteCount
        #expect(try p.next() == nil)
        #expect(p.bufferedByteCount == before)
        p.append(bytes("en))\r\n"))
        #expect(try p.next() == .fetchAttribute(.flags([.seen])))
        #expect(try p.next() == .fetchEnd)
        #expect(try p.next() == nil)
        #expect(p.bufferedByteCount == 0)
    }
}
