@testable import Maildir

/// One directory time, table-driven: what the run last saw, the committed stamp, the time before the scan,
/// and the verdict `DirectoryStamp.verdict` must give (times in ns; a fine time has a nanosecond part).
struct StampCase: CustomTestStringConvertible, Sendable {
    var name: String
    var now: Int64
    var lastSeen: Int64
    var committed: Int64?
    var atScan: Int64
    var clock: Int64
    var expected: DirectoryStamp.Verdict
    var testDescription: String { name }
}

let t0: Int64 = 1_800_000_000_123_456_789
let stampCases: [StampCase] = [
    StampCase(
        name: "changed after the last look -> foreign", now: t0 + 5, lastSeen: t0, committed: nil, atScan: t0, clock: t0 + 1_000_000_000,
        expected: .foreign),
    StampCase(
        name: "equal to the committed stamp, however recent -> keep", now: t0, lastSeen: t0, committed: t0, atScan: t0, clock: t0 + 1,
        expected: .keep),
    StampCase(name: "older than 20 ms -> keep", now: t0, lastSeen: t0, committed: nil, atScan: t0, clock: t0 + 20_000_000, expected: .keep),
    StampCase(
        name: "recent, own change since the scan -> set back", now: t0 + 7, lastSeen: t0 + 7, committed: nil, atScan: t0,
        clock: t0 + 1_000_000, expected: .setBack),
    StampCase(
        name: "recent, own change, but set back it would be the committed stamp -> too recent", now: t0 + 7, lastSeen: t0 + 7,
        committed: t0 + 6, atScan: t0 + 6, clock: t0 + 1_000_000, expected: .tooRecent),
    StampCase(
        name: "recent, own change, but set back it would be the time at the scan -> too recent", now: t0 + 7, lastSeen: t0 + 7,
        committed: nil, atScan: t0 + 6, clock: t0 + 1_000_000, expected: .tooRecent),
    StampCase(
        name: "recent, unchanged since the scan -> too recent", now: t0, lastSeen: t0, committed: nil, atScan: t0, clock: t0 + 1_000_000,
        expected: .tooRecent),
    StampCase(
        name: "whole seconds: 1.9 s is recent", now: 1_800_000_000_000_000_000, lastSeen: 1_800_000_000_000_000_000, committed: nil,
        atScan: 1_799_999_998_000_000_000, clock: 1_800_000_001_900_000_000, expected: .setBack),
    StampCase(
        name: "whole seconds: set back it would be the second before, seen at the scan -> too recent", now: 1_800_000_000_000_000_000,
        lastSeen: 1_800_000_000_000_000_000, committed: nil, atScan: 1_799_999_999_000_000_000, clock: 1_800_000_001_900_000_000,
        expected: .tooRecent),
    StampCase(
        name: "whole seconds: 2 s is old enough", now: 1_800_000_000_000_000_000, lastSeen: 1_800_000_000_000_000_000, committed: nil,
        atScan: 1_800_000_000_000_000_000, clock: 1_800_000_002_000_000_000, expected: .keep)
]

@Suite struct DirectoryStampTests {
    @Test(arguments: stampCases) func verdict(_ c: StampCase) {
        #expect(
            DirectoryStamp.verdict(now: c.now, lastSeen: c.lastSeen, committed: c.committed, atScan: c.atScan, clock: c.clock) == c.expected
        )
    }

    /// A directory this process just changed gets its time set back by a nanosecond, so the stamp is safe at
    /// once; any later change (here: a file created right after) moves the time again.
    @Test func ownChangeIsSetBackAndALaterChangeStillShows() throws {
        let t = TempDirectory()
        let folder = MaildirFolder(path: t.path + "/INBOX")
        try folder.create()
        usleep(30_000)
        let atScan = try #require(folder.stamp()).stamp
        _ = try folder.deliver(Array("Subject: x\n\nx\n".utf8), to: .new)
        let lastSeen = try #require(folder.stamp()).stamp
        #expect(lastSeen.new != atScan.new && lastSeen.cur == atScan.cur)
        let settled = try #require(folder.settledStamp(lastSeen: lastSeen, atScan: atScan, committed: nil))
        #expect(settled.new == lastSeen.new - 1 && settled.cur == atScan.cur)
        #expect(folder.stamp()?.stamp == settled)
        t.write("INBOX/new/later", "y")
        #expect(folder.stamp()?.stamp.new != settled.new)
    }

    /// Changed by someone else after the run's last look, or just before its scan: no stamp.
    @Test func foreignOrTooRecentGivesNoStamp() throws {
        let t = TempDirectory()
        let folder = MaildirFolder(path: t.path + "/INBOX")
        try folder.create()
        let atScan = try #require(folder.stamp()).stamp  // created just now: too recent
        #expect(folder.settledStamp(lastSeen: atScan, atScan: atScan, committed: nil) == nil)
        usleep(30_000)
        let old = try #require(folder.stamp()).stamp
        #expect(folder.settledStamp(lastSeen: old, atScan: old, committed: nil) == old)
        t.write("INBOX/cur/foreign", "z")
        #expect(folder.settledStamp(lastSeen: old, atScan: old, committed: nil) == nil)
    }
}
