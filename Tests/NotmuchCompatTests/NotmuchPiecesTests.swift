import Glibc
import Testing

import MoIndex

@testable import NotmuchCompat

/// `RelativeDate`, `NotmuchArguments` and `NotmuchThread` against notmuch 0.37's rules.
@Suite struct NotmuchPiecesTests {
    init() { setenv("TZ", "UTC", 1); tzset() }

    /// Now: Friday 2026-11-27 12:00 UTC.
    static let now: Int64 = 1_795_780_800

    @Test(arguments: [
        (now + 5, "the future"),
        (now - 300, "5 mins. ago"),
        (now - 3 * 3600, "Today 09:00"),
        (now - 20 * 3600, "Yest. 16:00"),
        (now - 3 * 86_400, "Tue. 12:00"),
        (now - 7 * 86_400, "November 20"),  // a week to the day: the weekday is today's
        (now - 30 * 86_400, "October 28"),
        (now - 200 * 86_400, "2026-05-11"),
        (0, "1970-01-01")
    ])
    func relativeDates(_ then: Int64, _ expected: String) {
        #expect(RelativeDate.describe(then, now: Self.now) == expected)
    }

    @Test func arguments() {
        let options: [String: NotmuchArguments.Kind] = ["output": .keyword(["files", "tags"]), "limit": .int, "batch": .bool]
        guard case .success(let p) = NotmuchArguments.parse(["--output=files", "--limit", "3", "--no-batch", "tag:x", "--limit=1"], options)
        else { Issue.record("parse"); return }
        #expect(p.last("output") == "files" && p.int("limit") == 3 && p.values["batch"] == ["false"] && p.rest == ["tag:x", "--limit=1"])
        guard case .success(let q) = NotmuchArguments.parse(["--output:tags", "--batch", "--", "-x"], options) else {
            Issue.record("parse"); return
        }
        #expect(q.last("output") == "tags" && q.flag("batch") && q.rest == ["-x"])
        #expect(
            NotmuchArguments.parse(["--output=bogus"], options)
                == .failure(
                    .init(message: "Unknown keyword argument \"bogus\" for option \"output\".\nUnrecognized option: --output=bogus\n")))
        #expect(NotmuchArguments.parse(["--frobnicate"], options) == .failure(.init(message: "Unrecognized option: --frobnicate\n")))
        // A single dash starts the words: `notmuch tag -inbox -- id:x`, `notmuch search -tag:spam`.
        guard case .success(let r) = NotmuchArguments.parse(["--batch", "-inbox", "--", "id:x"], options) else {
            Issue.record("parse"); return
        }
        #expect(r.flag("batch") && r.rest == ["-inbox", "--", "id:x"])
    }

    @Test func authorsLastCommaFirst() {
        #expect(
            NotmuchThread.cleanedAuthor("Bounine, Alexandre", from: "\"Bounine, Alexandre\" <alexandre.bounine@idt.com>")
                == "Alexandre Bounine")
        #expect(NotmuchThread.cleanedAuthor("Rose, Gregory V", from: "\"Rose, Gregory V\" <gregory.v.rose@intel.com>") == "Gregory V Rose")
        #expect(NotmuchThread.cleanedAuthor("Smith, Jo", from: "\"Smith, Jo\" <js@x.org>") == "Smith, Jo")
        #expect(NotmuchThread.cleanedAuthor("Trailing,", from: "Trailing, <t@x>") == "Trailing,")
    }

    @Test func threadSummary() {
        typealias M = NotmuchThread.Member
        let members = [
            M(id: "a@x", date: 100, from: "Alice <a@x>", subject: "Plan", tags: ["inbox"], matched: false),
            M(id: "b@x", date: 200, from: "Bob <b@x>", subject: "Re: Plan", tags: ["unread"], matched: true),
            M(id: "c x@y", date: 300, from: "carol@y", subject: "Re: Plan (v2)", tags: ["unread", "work"], matched: true),
            M(id: "d@x", date: 400, from: "Alice <a@x>", subject: "Re: Plan", tags: [], matched: false)
        ]
        let t = NotmuchThread(id: "0000000000000001", members: members, oldestFirst: false)
        #expect(t.matched == 2 && t.total == 4 && t.newest == 300 && t.oldest == 200)
        #expect(t.subject == "Plan (v2)" && t.authors == "Bob, carol@y| Alice")
        #expect(t.tags == ["inbox", "unread", "work"])
        #expect(NotmuchThread.idQuery(t.matchedIDs) == "id:b@x id:\"c x@y\"" && NotmuchThread.idQuery(t.otherIDs) == "id:a@x id:d@x")
        #expect(NotmuchThread(id: "1", members: members, oldestFirst: true).subject == "Plan")
        #expect(NotmuchThread.idQuery([]) == nil && NotmuchThread.idQuery(["a\"b", "c(d", ""]) == "id:\"a\"\"b\" id:\"c(d\" id:\"\"")
    }

    /// An empty subject never names the thread while a match has one (notmuch's T200, both orders).
    @Test func emptySubjectsAvoided() {
        typealias M = NotmuchThread.Member
        let members = [
            M(id: "1", date: 100, from: "x", subject: "", tags: [], matched: true),
            M(id: "2", date: 200, from: "x", subject: "Non-empty (1)", tags: [], matched: true),
            M(id: "3", date: 300, from: "x", subject: "Re: Non-empty (2)", tags: [], matched: true),
            M(id: "4", date: 400, from: "x", subject: "Re: ", tags: [], matched: true)
        ]
        #expect(NotmuchThread(id: "1", members: members, oldestFirst: false).subject == "Non-empty (2)")
        #expect(NotmuchThread(id: "1", members: members, oldestFirst: true).subject == "Non-empty (1)")
        let allEmpty = [M(id: "1", date: 1, from: "x", subject: "", tags: [], matched: true)]
        #expect(NotmuchThread(id: "1", members: allEmpty, oldestFirst: false).subject == "")
    }
}
