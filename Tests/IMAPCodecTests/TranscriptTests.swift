import IMAPCodec
import Testing

/// Real Dovecot transcripts, parsed whole, byte by byte and in random chunks.
@Suite struct TranscriptTests {
    static let transcripts: [(String, [UInt8])] = [
        ("sessionA", DovecotTranscripts.sessionA),
        ("sessionB", DovecotTranscripts.sessionB),
        ("sessionC", DovecotTranscripts.sessionC)
    ]

    @Test(arguments: transcripts.map(\.0))
    func everyFeedingGivesTheSameEvents(name: String) throws {
        let input = Self.transcripts.first { $0.0 == name }!.1
        let whole = try parse(input, .whole)
        #expect(!whole.isEmpty)
        #expect(try parse(input, .byteByByte) == whole)
        for seed in UInt64(1)...20 {
            #expect(try parse(input, .randomChunks, seed: seed) == whole)
        }
    }

    @Test func sessionAContents() throws {
        let events = try parse(DovecotTranscripts.sessionA)
        let u = untagged(events)
        let t = tagged(events)
        // Greeting carries capabilities in a response code.
        guard case .ok(let greeting) = u[0], case .capability(let caps)? = greeting.code else {
            Issue.record("greeting: \(u[0])"); return
        }
        #expect(caps.contains(.literalPlus) && caps.contains(.saslIR))
        #expect(u.contains(.enabled([.qresync])))
        // LIST with special use and a modified-UTF-7 name.
        let lists = u.compactMap { if case .list(let l) = $0 { l } else { nil } }
        #expect(lists.contains { $0.mailbox.decoded == "ärger" && $0.mailbox.wire == bytes("&AOQ-rger") })
        #expect(lists.contains { $0.attributes == [.sent] && $0.mailbox == MailboxName("Sent") && $0.delimiter == UInt8(ascii: "/") })
        #expect(lists.contains { $0.attributes == [.noSelect] && $0.mailbox.decoded == "Lists" })
        // APPENDUID, COPYUID (tagged and untagged), HIGHESTMODSEQ, READ-WRITE, READ-ONLY, CLOSED.
        #expect(t.contains { $0.tag == "C9" && $0.text.code == .appendUID(uidValidity: 1795307060, uids: UIDSet(1)) })
        #expect(t.contains { $0.text.code == .copyUID(uidValidity: 1795307059, source: UIDSet(1...2), destination: UIDSet(1...2)) })
        #expect(
            u.contains(
                .ok(ResponseText(code: .copyUID(uidValidity: 1795307059, source: UIDSet(5), destination: UIDSet(3)), text: "Moved UIDs."))))
        #expect(t.contains { $0.tag == "C22" && $0.text.code == .highestModSeq(ModSequence(13)!) })
        #expect(t.contains { $0.tag == "C15" && $0.text.code == .readWrite })
        #expect(t.contains { $0.tag == "C35" && $0.text.code == .readOnly })
        #expect(u.contains(.ok(ResponseText(code: .closed, text: "Previous mailbox closed."))))
        #expect(
            u.contains(
                .ok(
                    ResponseText(
                        code: .permanentFlags([.answered, .flagged, .deleted, .seen, .draft, .keyword("$Forwarded"), .wildcard]),
                        text: "Flags permitted."))))
        #expect(u.contains(.ok(ResponseText(code: .permanentFlags([]), text: "Read-only mailbox."))))
        #expect(u.contains(.ok(ResponseText(code: .uidValidity(1795307060), text: "UIDs valid"))))
        // STATUS with every item.
        var status = StatusResponse(mailbox: .inbox)
        (status.messages, status.recent, status.uidNext, status.uidValidity, status.unseen) = (5, 5, 6, 1795307060, 0)
        status.highestModSeq = ModSequence(11)
        status.size = 540
        #expect(u.contains(.status(status)))
        // SEARCH with MODSEQ, ESEARCH, VANISHED both ways, EXISTS/RECENT, NAMESPACE, BYE, BAD.
        #expect(u.contains(.search([1, 2, 3, 4, 5], modSeq: ModSequence(12))))
        var es = ESearchResponse()
        (es.tag, es.uid, es.min, es.max, es.count, es.all) = ("C20", true, 1, 5, 5, UIDSet(1...5))
        #expect(u.contains(.esearch(es)))
        #expect(u.contains(.vanished(earlier: false, uids: UIDSet([1...1, 3...3]))))
        #expect(u.contains(.vanished(earlier: true, uids: UIDSet([1...1, 3...3, 5...5]))))
        #expect(u.contains(.exists(5)) && u.contains(.recent(4)))
        #expect(u.contains(.namespace(raw: bytes("((\"\" \"/\")) NIL NIL"))))
        #expect(u.contains(.bye(ResponseText(text: "Logging out"))))
        #expect(t.contains { $0.tag == "C37" && $0.status == .bad })
    }

    @Test func sessionAFetchStream() throws {
        let events = try parse(DovecotTranscripts.sessionA)
        // The first FETCH: simple attributes, then the body, then the end.
        let i = events.firstIndex(of: .fetchStart(sequenceNumber: 1))!
        let body = Array(
            "From: a@example.org\r\nTo: b@example.org\r\nSubject: test 1 ä\r\nMessage-ID: <m1@example.org>\r\n\r\nBody line 1\r\n.\r\n".utf8
        )
        #expect(
            Array(events[i...].prefix(11)) == [
                .fetchStart(sequenceNumber: 1),
                .fetchAttribute(.uid(1)),
                .fetchAttribute(.flags([.seen, .recent, .keyword("$Forwarded")])),
                .fetchAttribute(
                    .internalDate(InternalDate(year: 1996, month: 7, day: 17, hour: 9, minute: 44, second: 25, zoneMinutes: 0)!)),
                .fetchAttribute(.rfc822Size(108)),
                .fetchAttribute(.modSeq(ModSequence(3)!)),
                .bodyStart(FetchBodyStart(kind: .body, section: "", size: 108)),
                .bodyBytes(body),
                .bodyEnd,
                .fetchEnd,
                .fetchStart(sequenceNumber: 2)
            ])
        // Sections, partial origin, BINARY, and a body followed by more attributes.
        let starts = events.compactMap { if case .bodyStart(let b) = $0 { b } else { nil } }
        #expect(starts.contains(FetchBodyStart(kind: .body, section: "HEADER.FIELDS (SUBJECT)", size: 22)))
        #expect(starts.contains(FetchBodyStart(kind: .body, section: "", origin: 0, size: 10)))
        #expect(starts.contains(FetchBodyStart(kind: .binary, section: "1", size: 16)))
        // ENVELOPE (with a literal inside) and BODYSTRUCTURE kept raw.
        let others = events.compactMap { if case .fetchAttribute(.other(let n, let raw)) = $0 { (n, raw) } else { nil } }
        #expect(others.contains { $0.0 == "ENVELOPE" && $0.1.starts(with: bytes("(NIL {9}\r\ntest 1 ä ((NIL")) })
        #expect(others.contains { $0.0 == "BODYSTRUCTURE" && $0.1.first == UInt8(ascii: "(") && $0.1.last == UInt8(ascii: ")") })
    }

    @Test func sessionCContents() throws {
        let events = try parse(DovecotTranscripts.sessionC)
        #expect(events[1] == .continuation([]))
        #expect(events.contains(.continuation(bytes("idling"))))
        let u = untagged(events)
        var st = StatusResponse(mailbox: MailboxName("ärger"))
        (st.messages, st.uidNext, st.uidValidity, st.highestModSeq) = (0, 1, 1795307061, ModSequence(1))
        #expect(u.contains(.status(st)))
        // {0} literal body, then the FETCH end; unknown attributes kept.
        #expect(events.contains(.bodyStart(FetchBodyStart(kind: .body, section: "TEXT", size: 0))))
        #expect(events.contains(.fetchAttribute(.other(name: "X-SAVEDATE", raw: bytes("\"22-Nov-2026 00:24:27 +0000\"")))))
        #expect(events.contains(.fetchAttribute(.other(name: "PREVIEW", raw: bytes("\"\"")))))
        #expect(tagged(events).contains { $0.tag == "D8" && $0.status == .no })
    }
}
