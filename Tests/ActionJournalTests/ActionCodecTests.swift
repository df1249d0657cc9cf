import Testing
import MoCore
@testable import ActionJournal

struct ActionCodecTests {
    static let send = ActionRecord.send(
        id: "abc-12345678", payload: "outbox/abc-12345678.eml", account: "work",
        sender: "me@x.org", recipients: ["a@y.org", "odd,one@z.org"],
        messageID: "<1@x.org>", dsn: ("failure,delay", "hdrs", nil), time: 100)

    @Test func recordsRoundTripAndEscapeSpacesCommasAndUTF8() throws {
        var r = Self.send.moved(to: .queued, at: 200, tries: 2, next: .some(230), error: .some("smtp h:1: 451 4.3.0 try later ✓"))
        r.fields["reply"] = "250 ok"
        let line = ActionCodec.render(r)
        #expect(!line.dropLast().contains(" 4.3.0"))
        #expect(line.hasSuffix("\n") && line.filter { $0 == "\n" }.count == 1)
        let back = try ActionCodec.replay(Array((ActionCodec.magic + "\n" + line).utf8), file: "j")
        #expect(back.actions == [r])
        #expect(back.actions[0].recipients == ["a@y.org", "odd,one@z.org"])
    }

    @Test func aSendFromBeforeSinceExistedReadsItsOwnTime() throws {
        // A line as the previous version wrote it: no since=.
        let old =
            "mo-actions 1\nabc-12345678 send queued outbox/abc-12345678.eml account=work from=me@x.org to=a@y.org tries=3 next=260 at=230\n"
        let r = try ActionCodec.replay(Array(old.utf8), file: "j").actions[0]
        #expect(r.since == 230 && r.tries == 3 && r.next == 260)
        #expect(ActionCodec.render(r).contains(" since=230 "))
        #expect(Self.send.since == 100)
        #expect(throws: JournalError.self) {
            try ActionCodec.replay(
                Array("mo-actions 1\nabc-12345678 send queued outbox/a.eml account=w from= to=a since=x tries=0 at=1\n".utf8), file: "j")
        }
    }

    @Test func lastRecordForAnIdWinsAndOrderIsFirstAppearance() throws {
        let other = ActionRecord.append(
            id: "abd-00000000", payload: "outbox/abc-12345678.eml", account: "work",
            messageID: "<1@x.org>", time: 101)
        let text =
            ActionCodec.magic + "\n" + ActionCodec.render(Self.send) + ActionCodec.render(other)
            + ActionCodec.render(Self.send.moved(to: .sent, at: 102))
        let replay = try ActionCodec.replay(Array(text.utf8), file: "j")
        #expect(replay.actions.map(\.id) == ["abc-12345678", "abd-00000000"])
        #expect(replay.actions[0].state == .sent)
        #expect(replay.warnings.isEmpty)
    }

    @Test func tornLastLineIsIgnoredWithFileAndLine() throws {
        let good = ActionCodec.magic + "\n" + ActionCodec.render(Self.send)
        let torn = ActionCodec.render(Self.send.moved(to: .sending, at: 150)).dropLast(9)
        let replay = try ActionCodec.replay(Array((good + torn).utf8), file: "/s/actions.journal")
        #expect(replay.actions.map(\.state) == [.queued])
        #expect(replay.completeLength == good.utf8.count)
        #expect(replay.warnings.count == 1)
        #expect(replay.warnings[0].hasPrefix("/s/actions.journal:3: ignoring a torn last record"))
    }

    @Test(arguments: [
        ("x frob queued - account=a tries=0 at=1", "2: unknown action \"frob\""),
        ("x send teleported outbox/x.eml account=a from= to=b tries=0 at=1", "2: unknown state \"teleported\""),
        ("x append sending outbox/x.eml account=a tries=0 at=1", "2: state sending is not a state of a append action"),
        ("x send queued outbox/x.eml account=a to=b tries=0 at=1", "2: missing field from"),
        ("x send queued ../etc/passwd account=a from= to=b tries=0 at=1", "2: bad payload reference"),
        ("x send queued outbox/x.eml account=a from= to=b color=red tries=0 at=1", "2: unknown field \"color\""),
        ("X send queued outbox/x.eml account=a from= to=b tries=0 at=1", "2: bad action id"),
        ("x send queued outbox/x.eml account=a from= to=b tries=zero at=1", "2: field tries is not a number")
    ])
    func unknownOrBadRecordsAreErrorsNamingFileAndLine(line: String, expected: String) throws {
        let text = ActionCodec.magic + "\n" + line + "\n"
        #expect { try ActionCodec.replay(Array(text.utf8), file: "/s/actions.journal") } throws: { error in
            let e = error as! JournalError
            return e.kind == .data && e.description.hasPrefix("/s/actions.journal:" + expected)
        }
    }

    @Test func aNewerFormatIsRefused() throws {
        #expect { try ActionCodec.replay(Array("mo-actions 2\n".utf8), file: "j") } throws: { error in
            (error as! JournalError).description
                == "j:1: journal format \"mo-actions 2\" is not understood by this version (expected \"mo-actions 1\")"
        }
    }

    @Test func moveAndFlagRecordsParse() throws {
        let move = ActionRecord.move(
            id: "m-1", account: "work", folder: "INBOX", uidValidity: 7, uid: 42, destination: "Archive/2026", time: 5)
        let flag = ActionRecord.flag(
            id: "f-1", account: "work", folder: "INBOX", uidValidity: 7, uid: 42,
            add: ["\\Seen", "$Label 1"], remove: ["\\Flagged"], time: 5)
        let text = ActionCodec.magic + "\n" + ActionCodec.render(move) + ActionCodec.render(flag)
        let replay = try ActionCodec.replay(Array(text.utf8), file: "j")
        #expect(replay.actions == [move, flag])
        #expect(ListField.split(replay.actions[1].fields["add"]!) == ["\\Seen", "$Label 1"])
    }

    @Test func retryPolicyDoublesFrom30sTo15min() {
        let p = RetryPolicy()
        #expect((1...7).map(p.delay(afterTry:)) == [30, 60, 120, 240, 480, 900, 900])
    }
}
