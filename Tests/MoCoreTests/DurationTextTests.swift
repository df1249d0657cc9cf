import Testing
import MoCore

@Suite struct DurationTextTests {
    @Test func parseAndFormat() {
        #expect(DurationText.parse("5d") == 432_000 && DurationText.parse("12h") == 43_200)
        #expect(DurationText.parse("30m") == 1_800 && DurationText.parse("45s") == 45)
        for bad in ["", "5", "d", "0d", "-1d", "+1d", "5w", "1.5h", " 5d", "99999999999999999d"] {
            #expect(DurationText.parse(bad) == nil, "\(bad)")
        }
        #expect(DurationText.format(45) == "45 s" && DurationText.format(600) == "10 min")
        #expect(DurationText.format(5 * 3600) == "5 h" && DurationText.format(5 * 86_400) == "5 d")
    }
}
