@testable import SyncRunner

/// The real `mo-sync` binary killed mid-run, then run again: the checker must pass every time (nothing lost,
/// nothing doubled). Crash points are the named steps of `CrashPoint` (deterministic, like isync's `-Ts`),
/// plus real SIGKILLs at random moments. Random choices come from a seeded generator printed on failure.
@Suite struct CrashTests {
    static func stepCount(_ f: SyncFixture) throws -> Int {
        let r = try ChildProcess.run(
            [TestPaths.binDirectory + "/mo-sync", "--config", f.configPath, "--quiet"],
            environment: ["MO_CRASH_AT": "list"])
        return r.stderrString.split(separator: "\n").filter { $0.hasPrefix("crash-point ") }.count
    }

    func expectRecovered(_ f: SyncFixture, _ what: String) throws {
        let rerun = try f.runBinary()
        #expect(rerun.status == 0, "\(what): rerun failed: \(rerun.stderrString) [server \(f.server.directory)]")
        let report = try SyncChecker.check(account: f.account, config: f.config)
        #expect(report.ok, "\(what): \(report.problems.joined(separator: "; "))")
    }

    @Test func initialSyncKilledAtFiftyPoints() throws {
        let f = try SyncFixture()
        let steps = try Self.stepCount(f)
        #expect(steps > 100)
        var rng = SeededGenerator(seed: 0x5EED_0001)
        let points = (0..<50).map { _ in Int.random(in: 1...steps, using: &rng) }
        for k in points {
            _ = try ChildProcess.run(["rm", "-rf", f.maildir, f.dir.path + "/state"])
            let crashed = try f.runBinary(crashAt: k)
            #expect(crashed.status == 137, "step \(k) of \(steps) did not crash")
            try expectRecovered(f, "initial sync killed at step \(k) of \(steps)")
        }
    }

    /// Also on a server with CONDSTORE and no QRESYNC (Gmail's capabilities), whose listing takes the
    /// vanished from a UID SEARCH.
    @Test(arguments: [nil, TestServer.gmailCapabilities])
    func incrementalSyncKilledAtFiftyPoints(capabilities: String?) throws {
        let f = try SyncFixture(capabilities: capabilities)
        #expect(try f.runBinary().status == 0)
        let c = try f.imap()
        defer { c.logout() }
        var rng = SeededGenerator(seed: 0x5EED_0002)
        var crashes = 0
        for round in 0..<50 {
            try mutateBothSides(f, c, round: round, rng: &rng)
            // Quiet folders have no steps (nothing is written for them); each change adds two or three, and
            // every changed folder three at its commit, so this range falls inside the run almost always.
            // Odd rounds compact the journal into the state file at every commit (its own crash steps); in
            // half the rounds a second connection lists folders alongside the first (`ListingPlan`).
            let k = Int.random(in: 1...12, using: &rng)
            var environment = round % 2 == 1 ? ["MO_STATE_COMPACT_BOUND": "0"] : [:]
            if round % 4 >= 2 { environment["MO_LISTING_HELPER"] = "always" }
            let crashed = try f.runBinary(crashAt: k, environment: environment)
            #expect(crashed.status == 137 || crashed.status == 0, "round \(round): \(crashed.stderrString)")
            if crashed.status == 137 { crashes += 1 }
            try expectRecovered(f, "incremental sync (round \(round)) killed at step \(k)")
        }
        #expect(crashes >= 35, "only \(crashes) of 50 runs reached their crash point")
    }

    @Test func killNineAtRandomMoments() throws {
        let f = try SyncFixture()
        var rng = SeededGenerator(seed: 0x5EED_0003)
        for round in 0..<12 {
            _ = try ChildProcess.run(["rm", "-rf", f.maildir, f.dir.path + "/state"])
            let p = try BackgroundProcess([TestPaths.binDirectory + "/mo-sync", "--config", f.configPath, "--quiet"])
            usleep(UInt32.random(in: 20_000...400_000, using: &rng))
            p.kill()
            try expectRecovered(f, "initial sync killed by SIGKILL (round \(round))")
        }
    }

    /// A fetched message whose unique part is taken (forced with `MO_FAULT_UNIQUE`), the run killed right
    /// after the link: the rerun pairs the UID with the file that was linked, never with the other one of
    /// that name, and each message is once on each side. Taken by a scanned file (renewed before the intent
    /// is journaled), or by a name the scan never lists (a directory: the link meets EEXIST, and the name
    /// is renewed and journaled again), each killed after the link and, for the second, after the renewal.
    @Test(arguments: [(false, "fetch: message delivered"), (true, "fetch: message delivered"), (true, "fetch: name renewed")])
    func fetchIntentNamesTheLinkedFile(unlisted: Bool, crashAt: String) throws {
        let f = try SyncFixture()
        #expect(try f.runBinary().status == 0)
        let (c, before) = try f.selected("testdir")
        defer { c.logout() }
        try c.append(to: MailboxName("testdir"), flags: [], message: SyncFixture.message("fetched-collides"))
        let taken = "1700000000.M1P1Q1R00000000000000ff.collision"
        let local = "From: me@example.com\nSubject: written-locally\nMessage-ID: <written-locally@local.test>\n\nLocal.\n"
        if unlisted {
            #expect(mkdir(f.maildir + "/testdir/new/" + taken, 0o700) == 0)
        } else {
            try writePrivateFile(f.maildir + "/testdir/new/" + taken, local)
        }
        let localBefore = try f.files("testdir").count

        let crashed = try f.runBinary(environment: ["MO_FAULT_UNIQUE": taken, "MO_CRASH_AT": crashAt])
        #expect(crashed.status == 137, "the run did not reach \(crashAt): \(crashed.stderrString)")
        try expectRecovered(f, "killed at \(crashAt) with the name taken (unlisted: \(unlisted))")
        _ = try c.select(MailboxName("testdir"))
        let added = unlisted ? 1 : 2
        #expect(try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.count == before.count + added)
        #expect(try f.files("testdir").count == localBefore + 1)
        // The fetched message went under another name; the name's holder is as it was.
        #expect(try f.files("testdir").contains { $0.unique == taken } == !unlisted)
    }

    /// Changes on both sides, as a user and another client make them.
    func mutateBothSides(_ f: SyncFixture, _ c: IMAPConnection, round: Int, rng: inout SeededGenerator) throws {
        let folders = ["testdir", "cjk", "testdir2_bar"]
        let folder = folders[round % folders.count]
        _ = try c.select(MailboxName(folder))
        let uids = try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid).sorted()
        if uids.count > 3 {
            try c.store(
                UIDSet(uids[Int.random(in: 0..<uids.count, using: &rng)]),
                StoreAction(round % 2 == 0 ? .add : .remove, [.flagged, .seen], silent: true))
            if round % 3 == 0 { try c.delete(UIDSet(uids[Int.random(in: 0..<uids.count, using: &rng)])) }
        }
        try c.append(to: MailboxName(folder), flags: round % 2 == 0 ? [.seen] : [], message: SyncFixture.message("crash-\(round)"))

        let files = try f.files(folder)
        if files.count > 3 {
            try f.setLocalFlags(files[Int.random(in: 0..<files.count, using: &rng)], round % 2 == 0 ? "RS" : "")
            if round % 4 == 1 { unlink(files[Int.random(in: 0..<files.count, using: &rng)].path) }
        }
        try f.addLocal(folder, subject: "local-crash-\(round)", flags: round % 2 == 0 ? "S" : "")
    }
}
