@testable import SyncRunner

/// Issue #29: the real `mo-sync` killed at every named step of a first sync that delivers placeholders
/// (`max-size`), and of a run that fills a flagged one; then run again. Each time the checker passes (a
/// placeholder stands for its message), nothing is uploaded (the server keeps its five messages), and the
/// Maildir holds five files, with exactly as many placeholders as the run leaves.
@Suite struct PlaceholderCrashTests {
    func sweep(flagOne: Bool, placeholdersAfter: Int, _ what: String) throws {
        let f = try SyncFixture(seed: false, extraSync: PlaceholderTests.config)
        try PlaceholderTests.seed(f)
        func reset() throws {
            _ = try ChildProcess.run(["rm", "-rf", f.maildir, f.dir.path + "/state"])
            guard flagOne else { return }
            // The last round's flag went to the server: taken off, so the big messages arrive as placeholders.
            let (c, uids) = try f.selected("INBOX")
            try c.store(UIDSet(uids: uids), StoreAction(.remove, [.flagged], silent: true))
            c.logout()
            #expect(try f.runBinary().status == 0)
            let held = try f.files("INBOX").filter { Placeholder.size(ofFile: $0.path) != nil }.sorted { $0.unique < $1.unique }
            try f.setLocalFlags(held[0], "FS")
        }
        try reset()
        let listed = try f.runBinary(environment: ["MO_CRASH_AT": "list"])
        let steps = listed.stderrString.split(separator: "\n").filter { $0.hasPrefix("crash-point ") }.count
        #expect(steps >= 3, "\(what): \(listed.stderrString)")
        for k in 1...max(steps, 1) {
            try reset()
            let crashed = try f.runBinary(crashAt: k)
            #expect(crashed.status == 137, "\(what): step \(k) of \(steps) did not crash: \(crashed.stderrString)")
            #expect(try f.runBinary().status == 0, "\(what), killed at step \(k)")
            try f.expectInSync("\(what), killed at step \(k)")
            let files = try f.files("INBOX")
            #expect(files.count == 5, "\(what), killed at step \(k)")
            #expect(files.filter { Placeholder.size(ofFile: $0.path) != nil }.count == placeholdersAfter, "\(what), killed at step \(k)")
            #expect(try DateWindowTests.serverCount(f) == 5, "\(what), killed at step \(k)")
        }
    }

    @Test func aFirstSyncWithPlaceholdersKilledAtEveryStep() throws {
        try sweep(flagOne: false, placeholdersAfter: 2, "first sync with placeholders")
    }

    @Test func aFillKilledAtEveryStep() throws {
        try sweep(flagOne: true, placeholdersAfter: 1, "a flagged placeholder filled")
    }
}
