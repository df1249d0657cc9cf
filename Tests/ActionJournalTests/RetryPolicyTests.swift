import Testing
import MoCore
import MoNet
@testable import SMTPClient
@testable import ActionJournal

/// The retry rule as a table: failure class, tries before, age → verdict.
@Suite struct RetryPolicyTests {
    static let policy = RetryPolicy(queueLifetime: 5 * 86_400)
    static let since = 1000

    /// (failure, tries before, seconds since queued, reason, tries after, next (offset from now; nil at the next flush))
    static let rows: [(FailureClass, Int, Int, RetryPolicy.Reason, Int, Int?)] = [
        (.permanent, 0, 0, .refused, 1, nil),
        (.permanent, 3, 9 * 86_400, .refused, 4, nil),
        (.unreachable, 0, 0, .outage, 0, nil),
        (.unreachable, 7, 86_400, .outage, 7, nil),
        (.unreachable, 0, 5 * 86_400 - 1, .outage, 0, nil),
        (.unreachable, 0, 5 * 86_400, .expired, 0, nil),
        (.temporary, 0, 0, .later, 1, 30),
        (.temporary, 3, 600, .later, 4, 240),
        (.temporary, 40, 86_400, .later, 41, 900),
        (.temporary, 2, 5 * 86_400, .expired, 3, nil),
        (.needsUser, 0, 0, .later, 1, 30),
        (.needsUser, 4, 0, .outOfTries, 5, nil),
        (.needsUser, 1, 5 * 86_400, .expired, 2, nil)
    ]

    @Test(arguments: rows.indices)
    func rule(row: Int) {
        let (failure, before, age, reason, after, next) = Self.rows[row]
        let now = Self.since + age
        let v = Self.policy.decide(failure, error: "E", triesBefore: before, since: Self.since, now: now)
        #expect(v.reason == reason && v.tries == after && v.next == next.map { now + $0 }, "row \(row): \(v)")
        #expect(v.retry == (reason == .outage || reason == .later))
    }

    @Test func finalReasonsSayWhy() {
        let expired = Self.policy.decide(.unreachable, error: "cannot connect", triesBefore: 0, since: 0, now: 5 * 86_400)
        #expect(expired.error == "not sent within the queue lifetime (5 d): cannot connect")
        #expect(Self.policy.decide(.needsUser, error: "535", triesBefore: 4, since: 0, now: 1).error == "gave up after 5 tries: 535")
        #expect(Self.policy.decide(.permanent, error: "550 no", triesBefore: 0, since: 0, now: 1).error == "550 no")
    }

    @Test func failuresAreClassifiedFromTheError() {
        let refused = NetError(.connect, host: "h", port: 1, detail: "Connection refused")
        #expect(FailureClass(SMTPError(.network, host: "h", port: 1, detail: "x", network: refused, unreachable: true)) == .unreachable)
        // The same network error after the greeting is a broken conversation, not an outage.
        #expect(FailureClass(SMTPError(.network, host: "h", port: 1, detail: "x", network: refused)) == .temporary)
        #expect(
            FailureClass(SMTPError(.rejected, host: "h", port: 1, detail: "x", reply: SMTPReply(code: 451, lines: ["later"]))) == .temporary
        )
        #expect(
            FailureClass(SMTPError(.rejected, host: "h", port: 1, detail: "x", reply: SMTPReply(code: 550, lines: ["no"]))) == .permanent)
        #expect(
            FailureClass(SMTPError(.authentication, host: "h", port: 1, detail: "x", reply: SMTPReply(code: 535, lines: ["no"])))
                == .needsUser)
        #expect(FailureClass(GenericError(.data, "too big")) == .permanent)
    }
}
