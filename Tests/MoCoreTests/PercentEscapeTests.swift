import Testing
import MoCore

/// The one percent-escaper of line-based files (state files, sync journals, the action journal). The two
/// copies differed: the state files' kept bytes ≥ 0x80 raw, the action journal's escaped them (as
/// docs/action-journal.md says); the action journal's decoder read `%+F` as 0x0F (Swift's integer parser
/// takes a sign). The documented set and the strict decoder won.
@Suite struct PercentEscapeTests {
    @Test func escapesEverythingOutsidePrintableASCIIAndPercent() {
        #expect(PercentEscape.escape("plain!~text") == "plain!~text")
        #expect(PercentEscape.escape("a b%c\td\ne\u{7F}") == "a%20b%25c%09d%0Ae%7F")
        #expect(PercentEscape.escape("Entwürfe") == "Entw%C3%BCrfe")
        #expect(PercentEscape.escape("") == "")
    }

    @Test func roundTripsAndReadsOlderRawUTF8() {
        for s in ["", "x", "a b", "%%", "Entwürfe 📬", "\u{0}\u{1F}\u{7F}\u{80}"] {
            #expect(PercentEscape.unescape(PercentEscape.escape(s)) == s)
        }
        #expect(PercentEscape.unescape("Entwürfe") == "Entwürfe")  // a state file written before
        #expect(PercentEscape.unescape("Entw%c3%bcrfe"[...]) == "Entwürfe")  // lowercase hex is accepted
    }

    @Test func refusesMalformedEscapes() {
        for bad in ["%", "%4", "%G0", "%+F", "%-0", "% F", "%C3"] {
            #expect(PercentEscape.unescape(bad) == nil, "\(bad)")
        }
    }
}
