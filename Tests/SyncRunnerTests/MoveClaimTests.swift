import Maildir
import Testing

@testable import SyncRunner

/// `MoveDetector.beforeClaim`, the decision a local move takes before its claim: what it takes off, and
/// whether it waits without claiming (the rule table in `MoveDetector+Claims`). Letters (the source's):
/// `a` a keyword such as a snooze mark.
@Suite struct MoveClaimTests {
    static func f(_ letters: String) -> MaildirFlags { MaildirFlags(letters: letters)! }

    @Test(
        arguments: [
            // base, server, file → off, outcome (nil: claim)
            ("Sa", "Sa", "", "Sa", nil),  // a wake: the mark and S come off; nobody else has: claim
            ("Sa", "Sa", "F", "Sa", nil),  // flagged as it woke: only what comes off is claimed
            ("S", "S", "S", "", MoveDetector.ClaimOutcome.nothingToClaim),  // a plain move: nothing to claim with
            ("S", "S", "SF", "", .nothingToClaim),  // flags only added: moved unclaimed
            ("Sa", "", "", "Sa", .takenOffElsewhere),  // another device claimed before this listing
            ("Sa", "S", "", "Sa", .takenOffElsewhere),  // the mark alone gone on the server is enough
            ("Sa", "Sa", "a", "S", nil),  // only S comes off here: claimed
            ("Sa", "a", "a", "S", .takenOffElsewhere),  // … and the server lost S already
            ("ST", "ST", "", "S", nil)  // the trashed letter is never a claim
        ] as [(String, String, String, String, MoveDetector.ClaimOutcome?)])
    func decision(base: String, server: String, file: String, off: String, outcome: MoveDetector.ClaimOutcome?) {
        let d = MoveDetector.beforeClaim(base: Self.f(base), server: Self.f(server), file: Self.f(file))
        #expect(d.off == Self.f(off), "off")
        #expect(d.outcome == outcome, "outcome")
    }
}
