import IMAPCodec
import Testing

/// NOTIFY (RFC 5465): the command's bytes, its response codes, and a Dovecot 2.3.19 session (mailbox list index
/// on) with the notifications a watcher sees, parsed under every `Feed`.
@Suite struct NotifyTests {
    static let all: [NotifyEvent] = [.messageNew, .messageExpunge, .flagChange]

    static let encodings: [(String, Command, String)] = [
        ("NONE", .notify([]), "A1 NOTIFY NONE\r\n"),
        (
            "personal", .notify([NotifyEventGroup(.personal, all + [.mailboxName])]),
            "A1 NOTIFY SET (personal (MessageNew MessageExpunge FlagChange MailboxName))\r\n"
        ),
        (
            "selected and NONE", .notify([NotifyEventGroup(.selected, all), NotifyEventGroup(.inboxes, [])]),
            "A1 NOTIFY SET (selected (MessageNew MessageExpunge FlagChange)) (inboxes NONE)\r\n"
        ),
        (
            "one subtree", .notify([NotifyEventGroup(.subtree([MailboxName("Lists")]), [.messageNew])]),
            "A1 NOTIFY SET (subtree Lists (MessageNew))\r\n"
        ),
        (
            "many mailboxes, quoted and mUTF-7",
            .notify([
                NotifyEventGroup(
                    .mailboxes([.inbox, MailboxName("Sent Items"), MailboxName("Ärger")]),
                    [.messageExpunge])
            ]),
            "A1 NOTIFY SET (mailboxes (INBOX \"Sent Items\" &AMQ-rger) (MessageExpunge))\r\n"
        ),
        (
            "selected-delayed, subscribed",
            .notify([NotifyEventGroup(.selectedDelayed, [.flagChange]), NotifyEventGroup(.subscribed, [.subscriptionChange])]),
            "A1 NOTIFY SET (selected-delayed (FlagChange)) (subscribed (SubscriptionChange))\r\n"
        )
    ]

    @Test(arguments: encodings.map(\.0))
    func encodesExactBytes(_ name: String) throws {
        let (_, command, expected) = Self.encodings.first { $0.0 == name }!
        var e = CommandEncoder()
        let encoded = try e.encode(command)
        #expect(encoded.chunks.count == 1)
        #expect(String(decoding: encoded.bytes, as: UTF8.self) == expected)
    }

    @Test func refusesAnEmptyMailboxList() {
        var e = CommandEncoder()
        #expect(throws: IMAPEncodeError.self) { try e.encode(.notify([NotifyEventGroup(.mailboxes([]), [.messageNew])])) }
    }

    static func ok(_ code: ResponseCode?, _ text: String) -> ResponseEvent { .untagged(.ok(ResponseText(code: code, text: text))) }

    static let codes: [(String, String, [ResponseEvent])] = [
        (
            "overflow", "* OK [NOTIFICATIONOVERFLOW] ...notifications dropped\r\n",
            [ok(.notificationOverflow, "...notifications dropped")]
        ),
        (
            "badevent", "A2 NO [BADEVENT (MessageNew MessageExpunge FlagChange MailboxMetadataChange)] no\r\n",
            [
                .tagged(
                    TaggedResponse(
                        tag: "A2", status: .no,
                        text: ResponseText(
                            code: .badEvent(["MessageNew", "MessageExpunge", "FlagChange", "MailboxMetadataChange"]), text: "no")))
            ]
        ),
        (
            "badevent with a fetch list", "A3 NO [BADEVENT (MessageNew (UID FLAGS) AnnotationChange)] x\r\n",
            [
                .tagged(
                    TaggedResponse(
                        tag: "A3", status: .no, text: ResponseText(code: .badEvent(["MessageNew", "AnnotationChange"]), text: "x")))
            ]
        ),
        (
            "malformed badevent is kept raw", "* OK [BADEVENT MessageNew] x\r\n",
            [ok(.other(name: "BADEVENT", text: "MessageNew"), "x")]
        )
    ]

    @Test(arguments: codes.map(\.0), Feed.allCases)
    func parsesResponseCodes(_ name: String, _ feed: Feed) throws {
        let (_, input, expected) = Self.codes.first { $0.0 == name }!
        #expect(try parse(bytes(input), feed) == expected)
    }

    /// Captured from Dovecot 2.3.19 (`scripts/test-server start DIR --list-index`): NOTIFY, then IDLE while a
    /// second session appended, flagged and expunged in INBOX (selected) and Other, and created Newbox.
    static let dovecotSession = bytes(
        """
        4 OK NOTIFY completed (0.001 + 0.000 secs).\r
        * 1 EXISTS\r
        * 1 RECENT\r
        * 1 FETCH (UID 1)\r
        * OK [HIGHESTMODSEQ 2] Highest\r
        * STATUS Other (MESSAGES 1 UIDNEXT 2 UIDVALIDITY 1795553564 UNSEEN 1 HIGHESTMODSEQ 2)\r
        * STATUS Other (HIGHESTMODSEQ 3)\r
        * 1 FETCH (UID 1 MODSEQ (3) FLAGS (\\Seen \\Recent))\r
        * STATUS Other (MESSAGES 0 UIDNEXT 2 UNSEEN 0 HIGHESTMODSEQ 5)\r
        * LIST () "/" Newbox\r
        + idling\r
        * STATUS Other (MESSAGES 1 UIDNEXT 3 UNSEEN 1 HIGHESTMODSEQ 6)\r
        15 OK Idle completed (2.021 + 2.020 + 2.020 secs).\r

        """)

    @Test func dovecotNotificationsUnderEveryFeed() throws {
        let whole = try parse(Self.dovecotSession, .whole)
        #expect(try parse(Self.dovecotSession, .byteByByte) == whole)
        for seed in UInt64(1)...10 { #expect(try parse(Self.dovecotSession, .randomChunks, seed: seed) == whole) }
        let statuses = untagged(whole).compactMap { if case .status(let s) = $0 { s } else { nil } }
        #expect(statuses.count == 4 && statuses.allSatisfy { $0.mailbox == MailboxName("Other") })
        #expect(statuses[1].highestModSeq == ModSequence(3) && statuses[1].messages == nil)
        #expect(untagged(whole).contains { if case .list(let l) = $0 { l.mailbox == MailboxName("Newbox") } else { false } })
        #expect(whole.contains(.fetchAttribute(.flags([.seen, .recent]))))
        #expect(whole.contains(.continuation(bytes("idling"))))
    }
}
