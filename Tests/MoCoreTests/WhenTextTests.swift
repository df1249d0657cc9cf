import Glibc
import Testing
@testable import MoCore

/// The send-later and snooze times, read in whatever local zone the machine has: every expectation is
/// built with the same zone (mktime), so the table holds in any of them.
@Suite struct WhenTextTests {
    /// Local (year, month, day, hour, minute) of a Unix time.
    static func parts(_ t: Int) -> [Int] {
        var time = time_t(t)
        var tm = Glibc.tm()
        localtime_r(&time, &tm)
        return [Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday), Int(tm.tm_hour), Int(tm.tm_min)]
    }

    static func local(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int) -> Int {
        var tm = Glibc.tm()
        tm.tm_year = Int32(y - 1900); tm.tm_mon = Int32(mo - 1); tm.tm_mday = Int32(d)
        tm.tm_hour = Int32(h); tm.tm_min = Int32(mi); tm.tm_isdst = -1
        return Int(mktime(&tm))
    }

    // Thursday 26 November 2026, 14:30 local.
    let now = WhenTextTests.local(2026, 11, 26, 14, 30)

    @Test func relativeTimes() {
        #expect(WhenText.parse("+2h", now: now) == now + 7200)
        #expect(WhenText.parse("+30m", now: now) == now + 1800)
        #expect(WhenText.parse("+1h30m", now: now) == now + 5400)
        #expect(WhenText.parse("+90s", now: now) == now + 90)
        #expect(WhenText.parse("+1w", now: now) == now + 604_800)
        #expect(WhenText.parse("now", now: now) == now)
        #expect(WhenText.parse(" +3d ", now: now) == now + 259_200)
    }

    @Test func clockTimesAreTheNextSuchTime() {
        #expect(Self.parts(WhenText.parse("17:00", now: now)!) == [2026, 11, 26, 17, 0])
        #expect(Self.parts(WhenText.parse("9:05", now: now)!) == [2026, 11, 27, 9, 5], "passed today: tomorrow")
        #expect(Self.parts(WhenText.parse("14:30", now: now)!) == [2026, 11, 27, 14, 30], "now is not the future")
        #expect(Self.parts(WhenText.parse("today 18:00", now: now)!) == [2026, 11, 26, 18, 0])
    }

    @Test func daysAndWeekdays() {
        #expect(Self.parts(WhenText.parse("tomorrow", now: now)!) == [2026, 11, 27, 8, 0])
        #expect(Self.parts(WhenText.parse("Tomorrow 09:00", now: now)!) == [2026, 11, 27, 9, 0])
        #expect(Self.parts(WhenText.parse("tomorrow@09:00", now: now)!) == [2026, 11, 27, 9, 0], "neomutt splits at spaces")
        #expect(Self.parts(WhenText.parse("monday", now: now)!) == [2026, 11, 30, 8, 0])
        #expect(Self.parts(WhenText.parse("fri 14:00", now: now)!) == [2026, 11, 27, 14, 0])
        #expect(Self.parts(WhenText.parse("thursday", now: now)!) == [2026, 12, 3, 8, 0], "today's weekday: a week on")
        #expect(Self.parts(WhenText.parse("2026-12-31", now: now)!) == [2026, 12, 31, 8, 0], "across a month end")
        #expect(Self.parts(WhenText.parse("2026-12-24 18:30", now: now)!) == [2026, 12, 24, 18, 30])
        #expect(Self.parts(WhenText.parse("2026-12-24T18:30", now: now)!) == [2026, 12, 24, 18, 30])
    }

    @Test func rfc3339CarriesItsOwnZone() {
        #expect(WhenText.parse("2026-12-24T18:30:00Z", now: now) == 1_798_137_000)
        #expect(WhenText.parse("2026-12-24T19:30:00+01:00", now: now) == 1_798_137_000)
        #expect(WhenText.parse("2026-12-24T13:30:00.250-05:00", now: now) == 1_798_137_000)
    }

    @Test func refusals() {
        for bad in [
            "", "soon", "+", "+2", "+2x", "+-2h", "25:00", "12:60", "1:2:3:4", "tomorrow 9", "2026-02-31", "2026-13-01",
            "2026-12-24T18:30:00+1", "mo", "09:00:²", "٠٩:٠٠", "2026-+1-01", "+١h", "2026-12-24T18:30:+1Z", "today", "+99999999999h",
            "2026-02-30T10:00:00Z"
        ] {
            #expect(WhenText.parse(bad, now: now) == nil, "\(bad)")
        }
    }

    @Test func describeSaysWhenAndHowLong() {
        let text = WhenText.describe(now + 7200, now: now)
        #expect(text.hasSuffix("16:30 (in 2 h)"), "\(text)")
        #expect(text.hasPrefix("Thu 26 Nov"), "\(text)")
        #expect(WhenText.describe(now - 120, now: now).hasSuffix("(2 min ago)"))
        #expect(WhenText.describe(now + 7199, now: now).hasSuffix("(in 2 h)"), "a second late is not 119 min")
        #expect(WhenText.describe(now + 10, now: now).hasSuffix("(in 10 s)"))
        #expect(WhenText.describe(now, now: now).hasSuffix("(now)"), "not \"in 0 s\"")
        #expect(WhenText.describe(Self.local(2027, 1, 2, 9, 0), now: now).contains("2027"))
    }
}
