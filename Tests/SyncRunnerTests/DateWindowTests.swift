@testable import SyncRunner

/// Issue #29, `max-age`: a window over mail spread across years, on the private Dovecot. Nothing outside
/// the window is downloaded or deleted on either side; flagged and unread messages are kept; widening
/// fetches what is now inside, once; `expire-local` lets local copies go and nothing else.
@Suite struct DateWindowTests {
    /// Ten messages in INBOX: five old and read, one old flagged, one old unread (all 2 to 4 years old),
    /// three from ten days ago.
    static func seed(_ f: SyncFixture) throws {
        let c = try f.imap()
        defer { c.logout() }
        let now = Int64(time(nil))
        func append(_ subject: String, daysAgo: Int64, _ flags: [Flag]) throws {
            try c.append(
                to: .inbox, flags: flags, date: InternalDate(epochSeconds: now - daysAgo * 86_400), message: SyncFixture.message(subject))
        }
        for i in 0..<5 { try append("old-\(i)", daysAgo: 730 + Int64(i) * 180, [.seen]) }
        try append("old-flagged", daysAgo: 900, [.seen, .flagged])
        try append("old-unread", daysAgo: 1000, [])
        for i in 0..<3 { try append("recent-\(i)", daysAgo: 10, [.seen]) }
    }

    static func serverCount(_ f: SyncFixture) throws -> Int {
        let (c, uids) = try f.selected("INBOX")
        c.logout()
        return uids.count
    }

    @Test func aWindowDownloadsOnlyWhatIsInsideAndKeepsFlaggedAndUnread() throws {
        let f = try SyncFixture(seed: false, extraSync: "max-age = \"365d\"\n")
        try Self.seed(f)
        let first = try f.sync()
        #expect(first["INBOX"]?.new == 5)  // three recent, the flagged and the unread
        #expect(first["INBOX"]?.outside == 5)
        #expect(try f.files("INBOX").count == 5)
        try f.expectInSync("a window over mail across years")
        let report = try SyncChecker.check(account: f.account, config: f.config)
        #expect(report.outside["INBOX"] == 5)

        // Nothing outside is ever read as deleted: runs, then a local deletion of an inside message.
        let second = try f.sync()
        #expect(second["INBOX"]?.changed == false, "\(second["INBOX"]?.line ?? "")")
        let recent = try f.files("INBOX").first { try String(decoding: readAll($0.path), as: UTF8.self).contains("recent-0") }!
        #expect(unlink(recent.path) == 0)
        let third = try f.sync()
        #expect(third["INBOX"]?.deletedRemote == 1)
        #expect(try Self.serverCount(f) == 9)
        try f.expectInSync("after a deletion inside the window")
    }

    @Test func unreadNotKeptWhenTheConfigurationSaysSo() throws {
        let f = try SyncFixture(seed: false, extraSync: "max-age = \"365d\"\nmax-age-keeps = [\"flagged\"]\n")
        try Self.seed(f)
        let first = try f.sync()
        #expect(first["INBOX"]?.new == 4)
        try f.expectInSync()
    }

    @Test func aWidenedWindowFetchesWhatIsNowInsideOnce() throws {
        let f = try SyncFixture(seed: false, extraSync: "max-age = \"365d\"\n")
        try Self.seed(f)
        try f.sync()
        // Quiet runs with the window recorded, so the widened run starts from the fast paths' state.
        #expect(try f.sync()["INBOX"]?.changed == false)
        f.config.accounts[0].sync.maxAge = .days(1000)
        let widened = try f.sync()
        #expect(widened["INBOX"]?.new == 2, "\(widened["INBOX"]?.line ?? "")")  // old-0 (730 d) and old-1 (910 d)
        try f.expectInSync("widened to 1000 days")
        f.config.accounts[0].sync.maxAge = nil
        let gone = try f.sync()
        #expect(gone["INBOX"]?.new == 3, "\(gone["INBOX"]?.line ?? "")")
        #expect(try f.files("INBOX").count == 10)
        try f.expectInSync("window removed")
        #expect(try f.sync()["INBOX"]?.changed == false)
    }

    @Test func aMessageFlaggedOnTheServerLaterIsFetched() throws {
        let f = try SyncFixture(seed: false, extraSync: "max-age = \"365d\"\n")
        try Self.seed(f)
        try f.sync()
        let (c, uids) = try f.selected("INBOX")
        defer { c.logout() }
        try c.store(UIDSet(uids[0]...uids[0]), StoreAction(.add, [.flagged], silent: true))
        let s = try f.sync()
        #expect(s["INBOX"]?.new == 1, "\(s["INBOX"]?.line ?? "")")
        try f.expectInSync("an old message flagged on the server")
    }

    @Test func agingOutKeepsTheLocalCopyUnlessExpireLocal() throws {
        let f = try SyncFixture(seed: false)
        try Self.seed(f)
        #expect(try f.sync()["INBOX"]?.new == 10)

        // The window narrows past five messages: without expire-local nothing changes on either side.
        f.config.accounts[0].sync.maxAge = .days(365)
        let kept = try f.sync()
        #expect(kept["INBOX"]?.changed == false, "\(kept["INBOX"]?.line ?? "")")
        #expect(try f.files("INBOX").count == 10)

        // With expire-local the local copies of the five go; the server keeps all ten.
        f.config.accounts[0].sync.expireLocal = true
        f.config.accounts[0].sync.maxAge = .days(364)  // a new first day: the expiry pass runs once
        let expired = try f.sync()
        #expect(expired["INBOX"]?.expired == 5, "\(expired["INBOX"]?.line ?? "")")
        #expect(expired["INBOX"]?.deletedLocal == 0 && expired["INBOX"]?.deletedRemote == 0)
        #expect(try f.files("INBOX").count == 5)
        #expect(try Self.serverCount(f) == 10)
        try f.expectInSync("expired locally")
        #expect(try f.sync()["INBOX"]?.changed == false)

        // Widened again: the five come back, once.
        f.config.accounts[0].sync.maxAge = nil
        let back = try f.sync()
        #expect(back["INBOX"]?.new == 5)
        #expect(try f.files("INBOX").count == 10)
        try f.expectInSync("window removed after expiry")
    }

    /// Keeping a kind of message that was not kept (max-age-keeps gains "flagged") widens the window:
    /// the old flagged message comes in once.
    @Test func keepingFlaggedLaterFetchesTheOldFlaggedOne() throws {
        let f = try SyncFixture(seed: false, extraSync: "max-age = \"365d\"\nmax-age-keeps = [\"unread\"]\n")
        try Self.seed(f)
        #expect(try f.sync()["INBOX"]?.new == 4)
        #expect(try f.sync()["INBOX"]?.changed == false)
        f.config.accounts[0].sync.maxAgeKeepsFlagged = true
        let s = try f.sync()
        #expect(s["INBOX"]?.new == 1, "\(s["INBOX"]?.line ?? "")")
        try f.expectInSync()
    }

    /// The mass-deletion guard counts pairs, not the server's messages outside the window: removing every
    /// local file of a windowed folder trips it.
    @Test func theGuardCountsPairsNotOutsideMessages() throws {
        let f = try SyncFixture(seed: false, extraSync: "max-age = \"365d\"\n")
        try Self.seed(f)
        let c = try f.imap()
        let now = Int64(time(nil))
        for i in 0..<40 {
            try c.append(
                to: .inbox, flags: [.seen], date: InternalDate(epochSeconds: now - 800 * 86_400), message: SyncFixture.message("older-\(i)")
            )
        }
        for i in 0..<10 { try c.append(to: .inbox, flags: [.seen], message: SyncFixture.message("newer-\(i)")) }
        c.logout()
        try f.sync()
        for e in try f.files("INBOX") { #expect(unlink(e.path) == 0) }
        let s = try f.sync(expectingErrors: true)
        #expect(s["INBOX"]?.stopped != nil, "\(s["INBOX"]?.line ?? "")")
        #expect(try Self.serverCount(f) == 60)
    }

    /// A windowed folder deleted locally: its messages outside the window stay on the server, and so does
    /// the mailbox.
    @Test func aDeletedFolderKeepsItsOutsideMessages() throws {
        let f = try SyncFixture(seed: false, extraSync: "max-age = \"365d\"\n")
        let c = try f.imap()
        try c.create(MailboxName("Old"))
        let now = Int64(time(nil))
        for i in 0..<3 {
            try c.append(
                to: MailboxName("Old"), flags: [.seen], date: InternalDate(epochSeconds: now - 800 * 86_400),
                message: SyncFixture.message("old-box-\(i)"))
        }
        try c.append(to: MailboxName("Old"), flags: [.seen], message: SyncFixture.message("new-in-old"))
        c.logout()
        #expect(try f.sync()["Old"]?.new == 1)
        _ = try ChildProcess.run(["rm", "-rf", f.maildir + "/Old"])
        try f.sync()  // deletes new-in-old on the server, keeps the three outside, so the folder comes back
        let (c2, uids) = try f.selected("Old")
        c2.logout()
        #expect(uids.count == 3)
        #expect(try f.files("Old").isEmpty)
        try f.expectInSync("the folder came back, its outside messages kept")
    }

    func readAll(_ path: String) throws -> [UInt8] {
        guard case .success(let b) = readWholeFile(path) else { throw GenericError(.localIO, path) }
        return b
    }
}
