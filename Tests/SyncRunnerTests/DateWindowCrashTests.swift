@testable import SyncRunner

/// Issue #29: the real `mo-sync` killed at every named step of each window run (the first sync under a
/// window, the expiry pass of `expire-local`, the widened run that fetches the outside messages), then
/// run again. Each time: the checker passes under the run's window, the server keeps all ten messages,
/// and the Maildir holds exactly what the window asks (nothing lost, nothing doubled).
@Suite struct DateWindowCrashTests {
    static let windowed = "max-age = \"365d\"\n"
    static let expiring = "max-age = \"365d\"\nexpire-local = true\n"

    /// Kills the run `config` makes after `before` at each of its steps, then runs it again and checks.
    /// `configs`: the config files of the runs before and of the run killed (nil: the plain account's).
    func sweep(
        configs: (SyncFixture) throws -> (before: [String?], run: String?), window: (inout SyncConfig) -> Void, files: Int,
        _ what: String
    ) throws {
        let f = try SyncFixture(seed: false)
        try DateWindowTests.seed(f)
        window(&f.config.accounts[0].sync)
        let (before, config) = try configs(f)
        func reset() throws {
            _ = try ChildProcess.run(["rm", "-rf", f.maildir, f.dir.path + "/state"])
            for c in before { #expect(try f.runBinary(config: c).status == 0) }
        }
        try reset()
        let listed = try f.runBinary(environment: ["MO_CRASH_AT": "list"], config: config)
        let steps = listed.stderrString.split(separator: "\n").filter { $0.hasPrefix("crash-point ") }.count
        #expect(steps >= 3, "\(what): \(listed.stderrString)")
        for k in 1...max(steps, 1) {
            try reset()
            let crashed = try f.runBinary(crashAt: k, config: config)
            #expect(crashed.status == 137, "\(what): step \(k) of \(steps) did not crash: \(crashed.stderrString)")
            let rerun = try f.runBinary(config: config)
            #expect(rerun.status == 0, "\(what), killed at step \(k): \(rerun.stderrString)")
            let report = try SyncChecker.check(account: f.account, config: f.config)
            #expect(report.ok, "\(what), killed at step \(k): \(report.problems.joined(separator: "; "))")
            #expect(try f.files("INBOX").count == files, "\(what), killed at step \(k)")
            #expect(try DateWindowTests.serverCount(f) == 10, "\(what), killed at step \(k)")
        }
    }

    @Test func aFirstSyncUnderAWindowKilledAtEveryStep() throws {
        try sweep(
            configs: { ([], try $0.configFile(syncLines: Self.windowed, name: "windowed")) }, window: { $0.maxAge = .days(365) },
            files: 5, "first sync under a window")
    }

    @Test func anExpiryKilledAtEveryStep() throws {
        try sweep(
            configs: { ([nil], try $0.configFile(syncLines: Self.expiring, name: "expiring")) },
            window: {
                $0.maxAge = .days(365); $0.expireLocal = true
            }, files: 5, "expiry of five local copies")
    }

    @Test func aWidenedWindowKilledAtEveryStep() throws {
        try sweep(
            configs: { ([nil, try $0.configFile(syncLines: Self.expiring, name: "expiring")], nil) }, window: { _ in }, files: 10,
            "the window removed after an expiry")
    }
}
