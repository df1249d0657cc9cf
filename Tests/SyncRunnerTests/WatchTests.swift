@testable import SyncRunner

/// `mo-sync --watch --verbose` running in the background, its stderr and stdout in a log file.
final class WatchRun {
    let process: BackgroundProcess
    let log: String

    init(_ f: SyncFixture) throws {
        log = f.dir.path + "/watch-\(UInt32.random(in: 0...UInt32.max)).log"
        process = try BackgroundProcess([
            "/bin/sh", "-c", "exec \"$0\" --config \"$1\" --watch --verbose >>\"$2\" 2>&1",
            TestPaths.binDirectory + "/mo-sync", f.configPath, log
        ])
    }

    var lines: [String] {
        guard case .success(let bytes) = readWholeFile(log) else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Syncs the watcher started because something rang (the first sync is not counted).
    var wokenSyncs: Int { lines.filter { $0.contains(": syncing (") }.count }

    /// Waits for the listeners to be in place and the sync they cause to be over.
    func waitUntilListening(sourceLocation: SourceLocation = #_sourceLocation) {
        _ = waitFor("listening", seconds: 20, sourceLocation: sourceLocation) { self.lines.contains { $0.contains("listening with") } }
        settle()
    }

    /// Waits until no sync has started for `quiet` seconds (at most 10 s).
    func settle(quiet: Double = 1.5) {
        var count = wokenSyncs, since = monotonicSeconds()
        let end = monotonicSeconds() + 10
        while monotonicSeconds() < end {
            usleep(100_000)
            let now = wokenSyncs
            if now != count { count = now; since = monotonicSeconds() }
            if monotonicSeconds() - since >= quiet { return }
        }
    }

    /// Polls `condition` until it holds or `seconds` pass; returns the seconds it took (printed: the latencies
    /// observed), or nil after recording an issue with the log.
    @discardableResult
    func waitFor(
        _ what: String, seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () throws -> Bool
    ) -> Double? {
        let start = monotonicSeconds()
        while monotonicSeconds() - start < seconds {
            if (try? condition()) == true {
                let took = monotonicSeconds() - start
                print("watch latency: \(what): \(Double(Int(took * 100)) / 100) s")
                return took
            }
            usleep(50_000)
        }
        let tail = lines.suffix(40).joined(separator: "\n")
        Issue.record("\(what): not within \(seconds) s; log:\n\(tail)", sourceLocation: sourceLocation)
        return nil
    }

    /// SIGTERM; the exit status.
    func stop() -> Int32 {
        kill(process.pid, SIGTERM)
        return process.wait()
    }
}

extension SyncFixture {
    /// The flags of every message of a server folder, by Message-ID-ish subject order (UID order).
    func serverFlags(_ folder: String) throws -> [[Flag]] {
        let c = try imap()
        defer { c.logout() }
        _ = try c.select(MailboxName(folder), readOnly: true)
        return try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.sorted { $0.uid < $1.uid }.map { $0.flags ?? [] }
    }

    func serverCount(_ folder: String) throws -> Int { try serverFlags(folder).count }
}

@Suite struct WatchTests {
    @Test func watchSyncsNewMailAndStopsCleanlyOnSIGTERM() throws {
        let f = try SyncFixture(seed: false)
        let w = try WatchRun(f)
        w.waitUntilListening()
        let c = try f.imap()
        try c.append(to: .inbox, message: SyncFixture.message("watched"))
        c.logout()
        w.waitFor("server new message (IDLE)") { try f.files("INBOX").count == 1 }
        #expect(w.stop() == 0, "exit status after SIGTERM")
        try f.expectInSync("after --watch")
    }

    /// Without NOTIFY (the default test server), every change in either direction, one after the other, as
    /// users and other clients make them: each arrives on the other side within 10 s.
    @Test func everyChangeReachesTheOtherSideWithIdle() throws {
        let f = try SyncFixture(seed: false)
        let c = try f.imap()
        defer { c.logout() }
        for s in ["one", "two", "three"] { try c.append(to: .inbox, message: SyncFixture.message(s)) }
        let w = try WatchRun(f)
        w.waitUntilListening()
        #expect(w.lines.contains { $0.contains("listening with IDLE on 1 folder(s)") })
        #expect(try f.files("INBOX").count == 3)

        // Server to Maildir.
        _ = try c.select(.inbox)
        let uids = try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid).sorted()
        try c.store(UIDSet(uids[0]), StoreAction(.add, [.flagged], silent: true))
        w.waitFor("server flag change by another client") { try f.files("INBOX").contains { $0.flags.letters.contains("F") } }
        try c.append(to: .inbox, message: SyncFixture.message("four"))
        w.waitFor("server new message") { try f.files("INBOX").count == 4 }
        try c.delete(UIDSet(uids[1]))
        w.waitFor("server expunge") { try f.files("INBOX").count == 3 }
        w.settle()

        // Maildir to server.
        var files = try f.files("INBOX")
        let unflagged = try #require(files.first { !$0.flags.letters.contains("F") })
        try f.setLocalFlags(unflagged, "FS")
        w.waitFor("local flag rename") { try f.serverFlags("INBOX").filter { $0.contains(.flagged) }.count == 2 }
        try f.addLocal("INBOX", subject: "written-here")
        w.waitFor("local new file") { try f.serverCount("INBOX") == 4 }
        files = try f.files("INBOX")
        #expect(unlink(files[0].path) == 0)
        w.waitFor("local delete") { try f.serverCount("INBOX") == 3 }
        w.settle()
        files = try f.files("INBOX")
        #expect(rename(files[0].path, f.maildir + "/Archive/cur/" + files[0].filename) == 0)
        w.waitFor("local move between folders") { try f.serverCount("Archive") == 1 && f.serverCount("INBOX") == 2 }
        w.settle()

        // A folder made here while watching: created on the server by the next sync (whatever wakes it),
        // watched from then on.
        for sub in ["", "/cur", "/new", "/tmp"] { mkdir(f.maildir + "/Projects" + sub, 0o700) }
        try f.addLocal("Projects", subject: "p1")
        files = try f.files("INBOX")
        try f.setLocalFlags(files[0], files[0].flags.letters == "S" ? "RS" : "S")
        w.waitFor("local new folder, with the next wake") { try f.serverCount("Projects") == 1 }
        w.settle()
        try f.addLocal("Projects", subject: "p2")
        w.waitFor("local new file in a folder made while watching") { try f.serverCount("Projects") == 2 }
        w.settle()
        try f.expectInSync("after changes on both sides")

        // Its own changes do not keep it busy: after the last change settles, nothing more happens.
        let before = w.wokenSyncs
        sleep(3)
        let tail = w.lines.suffix(20).joined(separator: "\n")
        #expect(w.wokenSyncs == before, "the watcher kept syncing with nothing changed:\n\(tail)")
        #expect(w.stop() == 0)
    }

    /// With NOTIFY (Dovecot with its list index), one connection hears every folder: a folder not named in
    /// `watch` gets new mail and flag changes at once, no polling.
    @Test func notifyHearsEveryFolderOnOneConnection() throws {
        let f = try SyncFixture(seed: false, extraSync: "poll-interval = 86400", listIndex: true)
        let c = try f.imap()
        defer { c.logout() }
        let w = try WatchRun(f)
        w.waitUntilListening()
        #expect(w.lines.contains { $0.contains("listening with NOTIFY") })
        try c.append(to: MailboxName("Archive"), message: SyncFixture.message("archived"))
        w.waitFor("server new message, NOTIFY, unwatched folder") { try f.files("Archive").count == 1 }
        _ = try c.select(MailboxName("Archive"))
        try c.store(UIDSet(1...UIDSet.star), StoreAction(.add, [.flagged], silent: true))
        w.waitFor("server flag change, NOTIFY") { try f.files("Archive").first?.flags.letters.contains("F") == true }
        try c.create(MailboxName("Later"))
        try c.append(to: MailboxName("Later"), message: SyncFixture.message("later"))
        w.waitFor("server new folder, NOTIFY") { try f.files("Later").count == 1 }
        w.settle()
        let archived = try f.files("Archive")[0]
        try f.setLocalFlags(archived, "S")
        w.waitFor("local flag rename, NOTIFY") { try f.serverFlags("Archive") == [[.seen]] }
        try f.addLocal("Later", subject: "in-a-new-folder")
        w.waitFor("local new file in a folder made while watching") { try f.serverCount("Later") == 2 }
        w.settle()
        try f.expectInSync("after NOTIFY-driven syncs")
        #expect(w.stop() == 0)
    }

    /// Without NOTIFY, a folder outside `watch` is synced every `poll-interval`.
    @Test func foldersWithoutIdleArePolled() throws {
        let f = try SyncFixture(seed: false, extraSync: "poll-interval = 10")
        let w = try WatchRun(f)
        w.waitUntilListening()
        let c = try f.imap()
        try c.append(to: MailboxName("Archive"), message: SyncFixture.message("polled"))
        c.logout()
        w.waitFor("server new message in a polled folder", seconds: 25) { try f.files("Archive").count == 1 }
        #expect(w.lines.contains { $0.contains("syncing (poll)") })
        #expect(w.stop() == 0)
    }

    /// Every folder of `watch` has its own IDLE: a delivery to the second one wakes the watcher too.
    @Test func watchIdlesOnEveryWatchedFolder() throws {
        let f = try SyncFixture(seed: false, extraSync: "watch = [\"INBOX\", \"Archive\"]")
        let w = try WatchRun(f)
        w.waitUntilListening()
        #expect(w.lines.contains { $0.contains("listening with IDLE on 2 folder(s)") })
        let c = try f.imap()
        try c.append(to: MailboxName("Archive"), message: SyncFixture.message("archived"))
        c.logout()
        w.waitFor("server new message, second watched folder") { try f.files("Archive").count == 1 }
        #expect(w.stop() == 0)
        try f.expectInSync("after --watch on two folders")
    }

    /// The server restarts on the same port: the watcher's connections end, it reconnects (with backoff, not
    /// a busy loop) and carries changes again.
    @Test func watchSurvivesAServerRestart() throws {
        let f = try SyncFixture(seed: false)
        let w = try WatchRun(f)
        w.waitUntilListening()
        try f.server.restart()
        w.waitFor("listening again after the restart", seconds: 30) {
            w.lines.filter { $0.contains("syncing (") && $0.contains("listening") }.count >= 2
        }
        let c = try f.imap()
        try c.append(to: .inbox, message: SyncFixture.message("after-restart"))
        c.logout()
        w.waitFor("server new message after a restart") { try f.files("INBOX").count == 1 }
        try f.addLocal("INBOX", subject: "local-after-restart")
        w.waitFor("local new file after a restart") { try f.serverCount("INBOX") == 2 }
        let failures = w.lines.filter { $0.contains("listening again after a pause") }.count
        #expect(failures <= 4, "reconnect attempts: \(failures)")
        #expect(w.stop() == 0)
        try f.expectInSync("after a server restart")
    }
}
