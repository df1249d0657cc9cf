@testable import SyncRunner

/// Issue #29, `max-size`: messages over the size arrive as placeholders (their header, a short body),
/// on the private Dovecot. They keep their flags both ways, are never uploaded, pair again by key after
/// lost state, and are filled in place, by `mo-sync fetch` and by a flag, under the same name.
@Suite struct PlaceholderTests {
    static let config = "max-size = \"100K\"\n"

    /// Three small messages and two of about 200 KB (one of them flagged on the server, so fetched whole).
    static func seed(_ f: SyncFixture, bigFlagged: Bool = false) throws {
        let c = try f.imap()
        defer { c.logout() }
        for i in 0..<3 { try c.append(to: .inbox, flags: [.seen], message: SyncFixture.message("small-\(i)")) }
        for i in 0..<2 { try c.append(to: .inbox, flags: [.seen], message: big("big-\(i)")) }
        if bigFlagged { try c.append(to: .inbox, flags: [.seen, .flagged], message: big("big-flagged")) }
    }

    static func big(_ subject: String) -> [UInt8] {
        var text = "From: a@example.com\r\nTo: mo@example.com\r\nSubject: \(subject)\r\nMessage-ID: <\(subject)@server.test>\r\n\r\n"
        for i in 0..<4_000 { text += "line \(i) of a large message, padded out to about fifty bytes.\r\n" }
        return Array(text.utf8)
    }

    func placeholders(_ f: SyncFixture) throws -> [MaildirEntry] {
        try f.files("INBOX").filter { Placeholder.size(ofFile: $0.path) != nil }
    }

    @Test func largeMessagesArriveAsPlaceholdersAndFlaggedOnesWhole() throws {
        let f = try SyncFixture(seed: false, extraSync: Self.config)
        try Self.seed(f, bigFlagged: true)
        let s = try f.sync()
        #expect(s["INBOX"]?.new == 6)
        #expect(s["INBOX"]?.placeholders == 2)
        let held = try placeholders(f)
        #expect(held.count == 2)
        for p in held {
            guard case .success(let bytes) = readWholeFile(p.path) else { Issue.record("cannot read"); continue }
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.hasPrefix("X-Mo-Placeholder: "))
            #expect(text.contains("Subject: big-") && text.contains("mo-sync fetch") && bytes.count < 2_000)
        }
        try f.expectInSync("placeholders stand for their messages")
        #expect(try f.sync()["INBOX"]?.changed == false)
    }

    @Test func placeholderFlagsSyncBothWaysAndItIsNeverUploaded() throws {
        let f = try SyncFixture(seed: false, extraSync: Self.config)
        try Self.seed(f)
        try f.sync()
        // Read → unread here (a neomutt rename).
        let held = try placeholders(f)
        try f.setLocalFlags(held[0], "")
        let s = try f.sync()
        #expect(s["INBOX"]?.flagsUp == 1 && s["INBOX"]?.uploaded == 0)
        #expect(try placeholders(f).count == 2, "kept across the rename")
        try f.expectInSync("a placeholder's flag went up")

        // Lost state: the placeholders pair again by key (Message-ID and the server's size), nothing uploaded.
        _ = try ChildProcess.run(["rm", "-rf", f.dir.path + "/state"])
        let again = try f.sync()
        #expect(again["INBOX"]?.uploaded == 0 && again["INBOX"]?.new == 0, "\(again["INBOX"]?.line ?? "")")
        #expect(try f.files("INBOX").count == 5)
        try f.expectInSync("after lost state")
    }

    @Test func fillByCommandKeepsTheNameAndFlags() throws {
        let f = try SyncFixture(seed: false, extraSync: Self.config)
        try Self.seed(f)
        try f.sync()
        let target = try placeholders(f)[0]
        let outcome = PlaceholderFetch.run(paths: [target.path], config: f.config)
        #expect(outcome.filled == 1 && outcome.problems.isEmpty, "\(outcome.problems)")
        #expect(Placeholder.size(ofFile: target.path) == nil, "filled under the same name")
        #expect(try placeholders(f).count == 1)
        try f.expectInSync("filled by mo-sync fetch")
        // A second fetch of the same file: no placeholder any more, left alone and said so.
        let twice = PlaceholderFetch.run(paths: [target.path], config: f.config)
        #expect(twice.filled == 0 && twice.problems.count == 1 && twice.firstError == nil)
        // Not a Maildir file of any account.
        let stray = PlaceholderFetch.run(paths: ["/etc/hostname"], config: f.config)
        #expect(stray.firstError != nil || stray.problems.count == 1)
        #expect(try f.sync()["INBOX"]?.changed == false)
    }

    @Test func flaggingAPlaceholderFillsItOnTheNextSync() throws {
        let f = try SyncFixture(seed: false, extraSync: Self.config)
        try Self.seed(f)
        try f.sync()
        let target = try placeholders(f)[0]
        try f.setLocalFlags(target, "FS")
        let s = try f.sync()
        #expect(s["INBOX"]?.filled == 1 && s["INBOX"]?.flagsUp == 1, "\(s["INBOX"]?.line ?? "")")
        #expect(try placeholders(f).count == 1)
        try f.expectInSync("filled by a local flag")

        // Flagged on the server: the next sync renames and fills.
        let (c, uids) = try f.selected("INBOX")
        defer { c.logout() }
        try c.store(UIDSet(uids: uids), StoreAction(.add, [.flagged], silent: true))
        let server = try f.sync()
        #expect(server["INBOX"]?.filled == 1, "\(server["INBOX"]?.line ?? "")")
        #expect(try placeholders(f).isEmpty)
        try f.expectInSync("filled by a flag from the server")
    }

    /// mo-index marks placeholders (`is:placeholder`), indexes their headers, and indexes a filled one
    /// again though its name did not change.
    @Test func moIndexMarksPlaceholdersAndSeesThemFilled() throws {
        let f = try SyncFixture(seed: false, extraSync: Self.config)
        try Self.seed(f)
        try f.sync()
        func index(_ args: [String]) throws -> String {
            let r = try ChildProcess.run([TestPaths.binDirectory + "/mo-index", "--config", f.configPath] + args)
            #expect(r.status == 0, "mo-index \(args): \(r.stderrString)")
            return r.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        _ = try index(["update"])
        #expect(try index(["count", "is:placeholder"]) == "2")
        #expect(try index(["count", "subject:big-0"]) == "1", "the placeholder's header is indexed")
        #expect(try index(["count", "padded"]) == "0", "the body is not here yet")
        let target = try f.files("INBOX").first { Placeholder.size(ofFile: $0.path) != nil }!
        #expect(PlaceholderFetch.run(paths: [target.path], config: f.config).filled == 1)
        _ = try index(["update"])
        #expect(try index(["count", "is:placeholder"]) == "1")
        #expect(try index(["count", "padded"]) == "1", "the filled message's body is indexed")
        #expect(try index(["count", "*"]) == "5")
    }

    /// The command line: a query through mo-index, and neomutt's pipe (`--stdin`).
    @Test func theFetchCommandTakesQueriesAndAPipedMessage() throws {
        let f = try SyncFixture(seed: false, extraSync: Self.config)
        try Self.seed(f)
        try f.sync()
        let bin = TestPaths.binDirectory
        #expect(try ChildProcess.run([bin + "/mo-index", "--config", f.configPath, "update"]).status == 0)
        let piped = try f.files("INBOX").first { Placeholder.size(ofFile: $0.path) != nil }!
        guard case .success(let bytes) = readWholeFile(piped.path) else { Issue.record("cannot read"); return }
        let one = try ChildProcess.run([bin + "/mo-sync", "fetch", "--config", f.configPath, "--stdin"], input: bytes)
        #expect(one.status == 0 && one.stdoutString == "fetched 1 message(s)\n", "\(one.stderrString)")
        #expect(try ChildProcess.run([bin + "/mo-index", "--config", f.configPath, "update"]).status == 0)
        let rest = try ChildProcess.run([bin + "/mo-sync", "fetch", "--config", f.configPath, "is:placeholder"])
        #expect(rest.status == 0 && rest.stdoutString == "fetched 1 message(s)\n", "\(rest.stderrString)")
        try f.expectInSync("every placeholder fetched from the command line")
        let bad = try ChildProcess.run([bin + "/mo-sync", "fetch", "--config", f.configPath, "/nonexistent/cur/x"])
        #expect(bad.status == 64 && bad.stderrString.contains("/nonexistent/cur/x: no such file"), "\(bad.stderrString)")
    }

    /// A placeholder moved to another folder by hand where the move cannot go up as a server move (the
    /// account does not push new messages): its original is not deleted on the server, and moving it back
    /// settles everything.
    @Test func aPlaceholderMovedByHandHoldsTheDeletion() throws {
        let f = try SyncFixture(seed: false, extraSync: Self.config + "new = \"pull\"\n")
        try Self.seed(f)
        try f.sync()
        let held = try placeholders(f)[0]
        let moved = f.maildir + "/Archive/cur/" + held.filename
        #expect(rename(held.path, moved) == 0)
        let s = try f.sync()
        #expect(s["INBOX"]?.deletedRemote == 0, "\(s["INBOX"]?.line ?? "")")
        #expect(s["INBOX"]?.notes.contains { $0.contains("wait while a placeholder") } == true, "\(s["INBOX"]?.notes ?? [])")
        #expect(try DateWindowTests.serverCount(f) == 5)
        #expect(rename(moved, held.path) == 0)
        let back = try f.sync()
        #expect(back["INBOX"]?.changed == false && back["Archive"]?.changed == false, "\(back["INBOX"]?.line ?? "")")
        try f.expectInSync("moved back")
    }

    /// `mo-sync fetch` while a sync holds the account's lock waits for it, then fills.
    @Test func fetchWaitsForARunningSync() throws {
        let f = try SyncFixture(seed: false, extraSync: Self.config)
        try Self.seed(f)
        try f.sync()
        let target = try placeholders(f)[0]
        var lock: AccountLock? = try AccountLock(directory: f.config.stateDirectory + "/test", account: "test")
        #expect(lock != nil)
        let config = f.config, path = target.path
        let done = Mutex<PlaceholderFetch.Outcome?>(nil)
        startDetachedThread {
            let outcome = PlaceholderFetch.run(paths: [path], config: config)
            done.withLock { $0 = outcome }
        }
        usleep(600_000)
        #expect(done.withLock { $0 } == nil, "it waits while the lock is held")
        lock = nil
        for _ in 0..<100 where done.withLock({ $0 }) == nil { usleep(100_000) }
        #expect(done.withLock { $0?.filled } == 1, "\(done.withLock { $0?.problems ?? [] })")
    }
}
