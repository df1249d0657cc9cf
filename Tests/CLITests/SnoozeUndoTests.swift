import Foundation
import Glibc
import Testing
import Maildir
import MoCore
import MoTestSupport

/// Snooze and undo of triage (issue 30) against the private Dovecot: two devices (two Maildirs and state
/// directories on one account), the real mo-index and mo-sync; the clock moved with MO_CLOCK_SKEW.
@Suite struct SnoozeUndoTests {
    struct Device {
        let dir: String
        var config: String { dir + "/config.toml" }
        var env: [String: String] { ["MO_CONFIG": config, "HOME": dir] }

        init(_ server: TestServer, _ dir: String) throws {
            self.dir = dir
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try writePrivateFile(config, server.accountConfig(in: dir))
        }

        func run(_ tool: String, _ args: [String], skew: Int = 0, crashAt: String = "") throws -> ChildProcess.Result {
            try ChildProcess.run(
                [TestPaths.binDirectory + "/" + tool] + args,
                environment: env.merging(["MO_CLOCK_SKEW": String(skew), "MO_CRASH_AT": crashAt]) { $1 })
        }

        func sync(skew: Int = 0) throws {
            let r = try run("mo-sync", ["--quiet"], skew: skew)
            #expect(r.status == 0, "\(r.stderrString)")
        }

        func index(_ args: [String], skew: Int = 0) throws -> ChildProcess.Result { try run("mo-index", args, skew: skew) }

        /// The files of a folder (cur/ and new/) whose text holds `token`.
        func files(_ folder: String, _ token: String) -> [String] {
            ["cur", "new"].flatMap { sub -> [String] in
                let d = dir + "/Mail/" + folder + "/" + sub
                return ((try? FileManager.default.contentsOfDirectory(atPath: d)) ?? []).filter {
                    ((try? String(contentsOfFile: d + "/" + $0, encoding: .utf8)) ?? "").contains(token)
                }
            }
        }
    }

    /// The server's view over IMAP (python's imaplib): per mailbox, the flags of the messages whose Subject
    /// holds `token`.
    static func serverFlags(_ server: TestServer, _ token: String) throws -> [String: [String]] {
        let script = """
            import imaplib, ssl, sys, re
            c = imaplib.IMAP4_SSL("127.0.0.1", int(sys.argv[1]), ssl_context=ssl.create_default_context(cafile=sys.argv[2]))
            c.login(sys.argv[3], sys.argv[4])
            for line in c.list()[1]:
                name = line.decode().rsplit(' ', 1)[1].strip('"')
                c.select('"%s"' % name, readonly=True)
                typ, data = c.uid('SEARCH', None, 'SUBJECT', sys.argv[5])
                for uid in data[0].split():
                    typ, f = c.uid('FETCH', uid, '(FLAGS)')
                    m = re.search(r'FLAGS \\(([^)]*)\\)', f[0].decode()) if f and f[0] else None
                    if m: print(name + "\\t" + m.group(1))  # else moved away since the SEARCH
            c.logout()
            """
        let r = try ChildProcess.run(["python3", "-c", script, String(server.imapsPort), server.caFile, server.user, server.password, token]
        )
        try #require(r.status == 0, "\(r.stderrString)")
        var out: [String: [String]] = [:]
        for line in r.stdoutString.split(separator: "\n") {
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
            out[String(parts[0]), default: []].append(parts.count > 1 ? String(parts[1]) : "")
        }
        return out
    }

    /// A private Dovecot whose INBOX holds one seen message per subject, and a directory for the devices.
    static func seededServer(_ label: String, subjects: [String]) throws -> (TestServer, TemporaryDirectory) {
        let server = try TestServer.start(seed: [])
        do {
            try seed(server, subjects: subjects)
            return (server, try TemporaryDirectory(label))
        } catch {
            server.stop()
            throw error
        }
    }

    static func seed(_ server: TestServer, subjects: [String]) throws {
        let script = """
            import imaplib, ssl, sys
            c = imaplib.IMAP4_SSL("127.0.0.1", int(sys.argv[1]), ssl_context=ssl.create_default_context(cafile=sys.argv[2]))
            c.login(sys.argv[3], sys.argv[4])
            for i, s in enumerate(sys.argv[5:]):
                m = "From: Bob <bob@mo.test>\\r\\nTo: me@mo.test\\r\\nSubject: %s\\r\\nMessage-ID: <%s@mo.test>\\r\\nDate: Tue, 24 Nov 2026 10:0%d:00 +0000\\r\\n\\r\\nHello %s.\\r\\n" % (s, s, i, s)
                c.append("INBOX", "(\\\\Seen)", None, m.encode())
            c.logout()
            """
        let r = try ChildProcess.run(
            ["python3", "-c", script, String(server.imapsPort), server.caFile, server.user, server.password] + subjects)
        try #require(r.status == 0, "\(r.stderrString)")
    }

    /// Snoozed on device A; both devices run `--watch`. Either B alone reaches the time (A's clock is an
    /// hour behind: B wakes it, A sees it come back), or both reach it at once (both wake it). Either way
    /// the message comes back once: one message in the server's INBOX, unread and without its mark, one
    /// file in each device's INBOX. The watchers' clocks are set, as they start, a few seconds short of the
    /// mark's time read from the server, so a loaded machine's slow set-up cannot carry them past it.
    @Test(arguments: [false, true])
    func snoozeOnOneDeviceWakeOnAnotherOnce(bothReachIt: Bool) throws {
        let (server, tmp) = try Self.seededServer("mo-snooze", subjects: ["snoozeme", "stays"])
        defer { server.stop(); tmp.remove() }
        let a = try Device(server, tmp.path + "/a"), b = try Device(server, tmp.path + "/b")
        try a.sync()
        try b.sync()
        #expect(try a.index(["update", "--quiet"]).status == 0)
        let snooze = try a.index(["snooze", "subject:snoozeme", "+1h"])
        #expect(
            snooze.status == 0 && snooze.stdoutString.contains("1 file(s) snoozed until"), "\(snooze.stdoutString)\(snooze.stderrString)")
        #expect(a.files("Snoozed", "snoozeme").count == 1 && a.files("INBOX", "snoozeme").isEmpty)
        let listed = try a.index(["snoozed"]).stdoutString
        #expect(listed.contains(" min)\ttest\tBob <bob@mo.test>\tsnoozeme") && listed.contains("snoozeme"), "\(listed)")
        try a.sync()
        let snoozed = try Self.serverFlags(server, "snoozeme")
        #expect(snoozed["Snoozed"]?.count == 1 && snoozed["INBOX"] == nil, "\(snoozed)")
        let mark = snoozed["Snoozed"]?.first?.split(separator: " ").compactMap { SnoozeMark.time(of: String($0)) }.first
        let due = try #require(mark, "\(snoozed)")
        try b.sync()
        #expect(b.files("Snoozed", "snoozeme").count == 1 && b.files("INBOX", "snoozeme").isEmpty)

        // Both watch, with their clocks eight seconds short of the time (A's an hour short unless both reach it).
        let skewB = due - Int(Date().timeIntervalSince1970) - 8
        let skewA = bothReachIt ? skewB : 0
        var watchers: [BackgroundProcess] = []
        for (d, skew) in [(a, skewA), (b, skewB)] {
            watchers.append(
                try BackgroundProcess(
                    [
                        "/bin/sh", "-c", "exec \"$0\" --watch --verbose >>\"$1\" 2>&1", TestPaths.binDirectory + "/mo-sync",
                        d.dir + "/watch.log"
                    ],
                    environment: d.env.merging(["MO_CLOCK_SKEW": String(skew)]) { $1 }))
        }
        defer { for w in watchers { w.kill() } }
        var back: [String: [String]] = [:]
        let end = monotonicSeconds() + 60
        while monotonicSeconds() < end {
            back = try Self.serverFlags(server, "snoozeme")
            if back["INBOX"]?.count == 1 && back["Snoozed"] == nil && a.files("INBOX", "snoozeme").count == 1
                && b.files("INBOX", "snoozeme").count == 1
            {
                break
            }
            usleep(300_000)
        }
        usleep(3_000_000)  // both watchers settle: nothing may come back twice
        for w in watchers { w.kill() }
        try a.sync(skew: bothReachIt ? 3700 : 0)
        try b.sync(skew: 3700)
        back = try Self.serverFlags(server, "snoozeme")
        let watchLogs = [a, b].map { (try? String(contentsOfFile: $0.dir + "/watch.log", encoding: .utf8)) ?? "" }
        #expect(back["INBOX"]?.count == 1 && back["Snoozed"] == nil, "\(back)\nA: \(watchLogs[0])\nB: \(watchLogs[1])")
        let flags = back["INBOX"]?.first ?? ""
        #expect(!flags.contains("\\Seen") && !flags.contains("$snoozed"), "\(flags)")
        #expect(a.files("INBOX", "snoozeme").count == 1 && b.files("INBOX", "snoozeme").count == 1)
        #expect(a.files("Snoozed", "snoozeme").isEmpty && b.files("Snoozed", "snoozeme").isEmpty)
        let logs = [a, b].map { (try? String(contentsOfFile: $0.dir + "/watch.log", encoding: .utf8)) ?? "" }
        #expect((bothReachIt ? logs : [logs[1]]).contains { $0.contains("syncing (timer)") }, "\(logs)")
        #expect(logs.contains { $0.contains("1 snoozed message(s) back in INBOX") }, "\(logs)")
        if !bothReachIt { #expect(!logs[0].contains("snoozed message(s) back"), "A's clock never reached the time: \(logs[0])") }
        #expect(try Self.serverFlags(server, "stays")["INBOX"]?.count == 1)
    }

    /// Undo after a move mo-sync has carried to the server: the message comes back there too. Undo of a
    /// flag and of a tag; history lists the commands.
    @Test func undoRevertsMovesFlagsAndTagsEvenAfterASync() throws {
        let (server, tmp) = try Self.seededServer("mo-undo", subjects: ["moveme", "flagme"])
        defer { server.stop(); tmp.remove() }
        let a = try Device(server, tmp.path + "/a")
        try a.sync()
        #expect(try a.index(["update", "--quiet"]).status == 0)
        let move = try a.index(["move", "subject:moveme", "Archive"])
        #expect(move.status == 0, "\(move.stderrString)")
        try a.sync()
        #expect(try Self.serverFlags(server, "moveme")["Archive"]?.count == 1)
        let flag = try a.index(["flag", "+flagged", "--", "subject:flagme"])
        #expect(flag.status == 0, "\(flag.stderrString)")
        let tag = try a.index(["tag", "+work", "--", "subject:flagme"])
        #expect(tag.status == 0, "\(tag.stderrString)")
        let history = try a.index(["history"]).stdoutString
        #expect(history.contains("mo-index move subject:moveme Archive") && history.contains("mo-index tag +work"), "\(history)")
        // The tag, then the flag: undo 2.
        let undo = try a.index(["undo", "2"])
        #expect(undo.status == 0 && undo.stdoutString.contains("undid \"mo-index tag"), "\(undo.stdoutString)\(undo.stderrString)")
        #expect(a.files("INBOX", "flagme").first.map { !$0.contains("F") && $0.hasSuffix(":2,S") } == true, "\(a.files("INBOX", "flagme"))")
        // Then the move, already on the server.
        #expect(try a.index(["undo"]).status == 0)
        #expect(a.files("INBOX", "moveme").count == 1 && a.files("Archive", "moveme").isEmpty)
        try a.sync()
        let server1 = try Self.serverFlags(server, "moveme")
        #expect(server1["INBOX"]?.count == 1 && server1["Archive"] == nil, "\(server1)")
        let flags = try Self.serverFlags(server, "flagme")["INBOX"]?.first ?? ""
        #expect(!flags.contains("\\Flagged") && !flags.contains("work"), "\(flags)")
        let nothing = try a.index(["undo"])
        #expect(nothing.status == 64 && nothing.stderrString.contains("nothing to undo"), "\(nothing.stderrString)")
    }

    @Test func snoozeCancelBringsBackNowAndBadTimesAreUsageErrors() throws {
        let (server, tmp) = try Self.seededServer("mo-snooze-cancel", subjects: ["later"])
        defer { server.stop(); tmp.remove() }
        let a = try Device(server, tmp.path + "/a")
        try a.sync()
        #expect(try a.index(["update", "--quiet"]).status == 0)
        let bad = try a.index(["snooze", "subject:later", "soonish"])
        #expect(bad.status == 64 && bad.stderrString.contains("\"soonish\": not a time"), "\(bad.stderrString)")
        #expect(try a.index(["snooze", "subject:later", "tomorrow@09:00"]).status == 0)
        #expect(a.files("Snoozed", "later").count == 1)
        // The same time again changes nothing and logs nothing: undo takes back the first snooze whole.
        #expect(try a.index(["snooze", "subject:later", "tomorrow@09:00"]).status == 0)
        #expect(try a.index(["undo"]).status == 0)
        #expect(a.files("INBOX", "later").count == 1 && a.files("Snoozed", "later").isEmpty)
        #expect(try a.index(["snoozed"]).stdoutString.isEmpty)
        #expect(try a.index(["snooze", "subject:later", "tomorrow@09:00"]).status == 0)
        // Snoozed again: a new time, still one file, one mark.
        #expect(try a.index(["snooze", "subject:later", "+3h"]).status == 0)
        let listed = try a.index(["snoozed"]).stdoutString
        #expect(listed.split(separator: "\n").count == 1 && (listed.contains("(in 2 h)") || listed.contains("(in 3 h)")), "\(listed)")
        #expect(a.files("Snoozed", "later").count == 1)
        let cancel = try a.index(["snooze", "--cancel", "subject:later"])
        #expect(
            cancel.status == 0 && cancel.stdoutString.contains("1 file(s) back in INBOX"), "\(cancel.stdoutString)\(cancel.stderrString)")
        let file = a.files("INBOX", "later")
        #expect(file.count == 1 && file.first.map { !$0.hasSuffix("S") } == true, "\(file)")
        #expect(try a.index(["snoozed"]).stdoutString.isEmpty)
        try a.sync()
        let flags = try Self.serverFlags(server, "later")
        #expect(
            flags["INBOX"]?.count == 1 && flags["INBOX"]?.first.map { !$0.contains("$snoozed") && !$0.contains("\\Seen") } == true,
            "\(flags)")
    }

    /// The run that wakes a message killed at each of its steps (20 on this account: the first pass's, the
    /// wake-up's local moves, then the second pass carrying them). The next runs converge: one message, in
    /// INBOX, on both sides.
    @Test(arguments: (1...20).map(String.init))
    func aWakeUpKilledConverges(step: String) throws {
        let (server, tmp) = try Self.seededServer("mo-snooze-kill", subjects: ["killme"])
        defer { server.stop(); tmp.remove() }
        let a = try Device(server, tmp.path + "/a")
        try a.sync()
        #expect(try a.index(["update", "--quiet"]).status == 0)
        #expect(try a.index(["snooze", "subject:killme", "+1h"]).status == 0)
        try a.sync()
        let killed = try a.run("mo-sync", ["--quiet"], skew: 3700, crashAt: step)
        #expect(killed.status == 137 || killed.status == 0, "\(killed.stderrString)")
        try a.sync(skew: 3700)
        try a.sync(skew: 3700)
        let flags = try Self.serverFlags(server, "killme")
        #expect(flags["INBOX"]?.count == 1 && flags["Snoozed"] == nil, "\(step): \(flags)")
        #expect(a.files("INBOX", "killme").count == 1 && a.files("Snoozed", "killme").isEmpty, "\(step)")
    }
}

extension SnoozeUndoTests {
    /// A snooze of two messages killed after its log record, and after its first move: history says cut
    /// short, and undo puts back exactly what was done (the message not yet moved stays where it was).
    @Test(arguments: ["triage-logged", "triage-changed"])
    func aSnoozeKilledMidwayIsUndoneForWhatItDid(step: String) throws {
        let (server, tmp) = try Self.seededServer("mo-snooze-cut", subjects: ["cutone", "cuttwo"])
        defer { server.stop(); tmp.remove() }
        let a = try Device(server, tmp.path + "/a")
        try a.sync()
        #expect(try a.index(["update", "--quiet"]).status == 0)
        let killed = try a.run("mo-index", ["snooze", "subject:cutone OR subject:cuttwo", "+2h"], crashAt: step)
        #expect(killed.status == 137, "\(killed.stderrString)")
        let moved = a.files("Snoozed", "cut").count
        #expect(moved == (step == "triage-logged" ? 0 : 1))
        #expect(try a.index(["history"]).stdoutString.contains("(cut short)"))
        let undo = try a.index(["undo"])
        #expect(undo.status == 0, "\(undo.stderrString)")
        #expect(a.files("INBOX", "cutone").count == 1 && a.files("INBOX", "cuttwo").count == 1 && a.files("Snoozed", "cut").isEmpty)
        for name in try FileManager.default.contentsOfDirectory(atPath: a.dir + "/Mail/INBOX/cur") {
            #expect(name.hasSuffix(":2,S"), "flags and letters as before: \(name)")
        }
        try a.sync()
        let flags = try Self.serverFlags(server, "cut")
        #expect(flags["INBOX"]?.count == 2 && flags["Snoozed"] == nil, "\(flags)")
    }
}

extension SnoozeUndoTests {
    /// Device B was away while A woke the message and archived it: B's run follows the server (the file to
    /// Archive) and wakes nothing from its stale copy: the message is not brought back, not doubled.
    @Test func aDeviceAwayWhileTheMessageWasWokenAndArchivedFollowsTheServer() throws {
        let (server, tmp) = try Self.seededServer("mo-snooze-away", subjects: ["awayone"])
        defer { server.stop(); tmp.remove() }
        let a = try Device(server, tmp.path + "/a"), b = try Device(server, tmp.path + "/b")
        try a.sync()
        try b.sync()
        #expect(try a.index(["update", "--quiet"]).status == 0)
        #expect(try a.index(["snooze", "subject:awayone", "+1h"]).status == 0)
        try a.sync()
        try b.sync()
        #expect(b.files("Snoozed", "awayone").count == 1)
        try a.sync(skew: 3700)  // woken on A
        #expect(a.files("INBOX", "awayone").count == 1)
        #expect(try a.index(["move", "subject:awayone", "Archive"], skew: 3700).status == 0)
        try a.sync(skew: 3700)
        try b.sync(skew: 3700)
        let flags = try Self.serverFlags(server, "awayone")
        #expect(flags["Archive"]?.count == 1 && flags["INBOX"] == nil && flags["Snoozed"] == nil, "\(flags)")
        #expect(b.files("Archive", "awayone").count == 1 && b.files("INBOX", "awayone").isEmpty && b.files("Snoozed", "awayone").isEmpty)
    }
}

extension SnoozeUndoTests {
    /// Device B with one snoozed message, taken back by hand (`snooze --cancel`: a move to INBOX for its
    /// next run), and that run paused at `pausedAt` (`MO_PAUSE_AT`) while `otherDevice` (python lines, with
    /// `c` an imaplib connection logged in) acts on the server as another device. Returns B and the run's
    /// log.
    static func runRacing(
        _ server: TestServer, _ tmp: TemporaryDirectory, subject: String, pausedAt: String, otherDevice: String
    ) throws -> (Device, String) {
        let b = try Device(server, tmp.path + "/b")
        try b.sync()
        #expect(try b.index(["update", "--quiet"]).status == 0)
        #expect(try b.index(["snooze", "subject:" + subject, "+1h"]).status == 0)
        try b.sync()
        #expect(try b.index(["snooze", "--cancel", "subject:" + subject]).status == 0)
        let run = try BackgroundProcess(
            ["/bin/sh", "-c", "exec \"$0\" --verbose >>\"$1\" 2>&1", TestPaths.binDirectory + "/mo-sync", b.dir + "/race.log"],
            environment: b.env.merging(["MO_PAUSE_AT": pausedAt]) { $1 })
        usleep(1_200_000)
        let script = """
            import imaplib, ssl, sys
            c = imaplib.IMAP4_SSL("127.0.0.1", int(sys.argv[1]), ssl_context=ssl.create_default_context(cafile=sys.argv[2]))
            c.login(sys.argv[3], sys.argv[4])
            \(otherDevice)
            c.logout()
            """
        let acted = try ChildProcess.run(["python3", "-c", script, String(server.imapsPort), server.caFile, server.user, server.password])
        #expect(acted.status == 0, "\(acted.stderrString)")
        #expect(run.wait() == 0)
        return (b, (try? String(contentsOfFile: b.dir + "/race.log", encoding: .utf8)) ?? "")
    }

    /// The race two devices' wake-ups meet, made exact: B's run pauses after listing INBOX
    /// (`MO_PAUSE_AT`), and meanwhile "device A" moves the message on the server from Snoozed to INBOX. B's
    /// own file left Snoozed for INBOX too, so neither of B's listings holds the message: its file must
    /// wait a run (`uploadsDeferred`) rather than go up as a second copy, and the next run pairs it.
    @Test func aMoveRacingAnotherDevicesMoveBetweenTwoListingsMakesNoSecondCopy() throws {
        let (server, tmp) = try Self.seededServer("mo-snooze-race", subjects: ["raced"])
        defer { server.stop(); tmp.remove() }
        // B's run lists INBOX, and A's move lands before B lists Snoozed.
        let (b, log) = try Self.runRacing(
            server, tmp, subject: "raced", pausedAt: "listed:INBOX",
            otherDevice: """
                c.select("Snoozed")
                typ, data = c.uid("SEARCH", None, "ALL")
                c.uid("MOVE", data[0].split()[0], "INBOX")
                """)
        #expect(log.contains("moved here wait a run") && !log.contains("1 uploaded"), "\(log)")
        try b.sync()
        let flags = try Self.serverFlags(server, "raced")
        #expect(flags["INBOX"]?.count == 1 && flags["Snoozed"] == nil, "\(flags)\n\(log)")
        #expect(b.files("INBOX", "raced").count == 1 && b.files("Snoozed", "raced").isEmpty)
    }
}

extension SnoozeUndoTests {
    /// The claim a wake makes before its move (`MoveDetector+Claims`), lost: B's run pauses after listing
    /// Snoozed, and meanwhile "device A" takes the mark off on the server (its claim). B's claim then finds
    /// the message changed since its listing: its move waits, nothing is uploaded. The message stays in
    /// Snoozed (A never moves it, as if A died): B's next run sees the mark already off and waits again,
    /// taking the server's flags as its base; the run after moves it. One copy throughout.
    @Test func aWakeWhoseClaimIsLostWaitsAndNeverMakesASecondCopy() throws {
        let (server, tmp) = try Self.seededServer("mo-snooze-claim", subjects: ["claimed"])
        defer { server.stop(); tmp.remove() }
        let (b, log) = try Self.runRacing(
            server, tmp, subject: "claimed", pausedAt: "listed:Snoozed",
            otherDevice: """
                c.select("Snoozed")
                typ, data = c.uid("SEARCH", None, "ALL")
                typ, f = c.uid("FETCH", data[0].split()[0], "(FLAGS)")
                mark = [w for w in f[0].decode().replace("(", " ").replace(")", " ").split() if w.startswith("$snoozed-")][0]
                c.uid("STORE", data[0].split()[0], "-FLAGS", "(\\\\Seen %s)" % mark)
                """)
        #expect(log.contains("1 move(s) wait a run") && log.contains("moved here wait a run") && !log.contains("1 uploaded"), "\(log)")
        var flags = try Self.serverFlags(server, "claimed")
        #expect(flags["Snoozed"]?.count == 1 && flags["INBOX"] == nil, "\(flags)\n\(log)")
        let second = try b.run("mo-sync", ["--verbose"])
        #expect(second.status == 0 && second.stderrString.contains("1 move(s) wait a run"), "\(second.stderrString)")
        try b.sync()
        flags = try Self.serverFlags(server, "claimed")
        #expect(flags["INBOX"]?.count == 1 && flags["Snoozed"] == nil, "\(flags)")
        #expect(flags["INBOX"]?.first.map { !$0.contains("$snoozed") && !$0.contains("\\Seen") } == true, "\(flags)")
        #expect(b.files("INBOX", "claimed").count == 1 && b.files("Snoozed", "claimed").isEmpty)
    }
}

extension SnoozeUndoTests {
    /// `notmuch tag` (mo-index's notmuch command line, as notmuch-emacs runs it) is a triage command like
    /// `mo-index tag`: its tags and flags reach the server with the next sync, and `mo-index undo` takes
    /// them back there too.
    @Test func notmuchTagReachesTheServerAndUndoes() throws {
        let (server, tmp) = try Self.seededServer("mo-notmuch-tag", subjects: ["tagme", "other"])
        defer { server.stop(); tmp.remove() }
        let a = try Device(server, tmp.path + "/a")
        try a.sync()
        #expect(try a.index(["update", "--quiet"]).status == 0)
        let batch = try ChildProcess.run(
            [TestPaths.binDirectory + "/mo-index", "notmuch", "tag", "--batch"], input: Array("+projectx +flagged -- subject:tagme\n".utf8),
            environment: a.env)
        #expect(batch.status == 0 && batch.stdoutString.isEmpty, "\(batch.stderrString)")
        let unread = try a.index(["notmuch", "tag", "+unread", "--", "subject:tagme"])
        #expect(unread.status == 0, "\(unread.stderrString)")
        try a.sync()
        var flags = try Self.serverFlags(server, "tagme")["INBOX"]?.first ?? ""
        #expect(flags.contains("projectx") && flags.contains("\\Flagged") && !flags.contains("\\Seen"), "\(flags)")
        #expect(try Self.serverFlags(server, "other")["INBOX"]?.first == "\\Seen")
        #expect(try a.index(["undo", "2"]).status == 0)
        try a.sync()
        // What notmuch-emacs reads of the configuration: mo's.
        #expect(try a.index(["notmuch", "config", "get", "user.primary_email"]).stdoutString == "mo@example.com\n")
        let list = try a.index(["notmuch", "config", "list"]).stdoutString
        #expect(list.contains("database.path=\(a.dir)/Mail\n") && list.contains("new.tags=\n"), "\(list)")
        #expect(try a.index(["notmuch", "config", "set", "user.name", "X"]).status == 64)
        flags = try Self.serverFlags(server, "tagme")["INBOX"]?.first ?? ""
        #expect(!flags.contains("projectx") && !flags.contains("\\Flagged") && flags.contains("\\Seen"), "\(flags)")
    }
}
