@testable import SyncRunner

/// Issue #26, part 2: a server with CONDSTORE and no QRESYNC (Gmail's capabilities, played by the private
/// Dovecot announcing only those). Flag changes and new messages come through `CHANGEDSINCE`, expunges
/// through `UID SEARCH RETURN (ALL)` compared with the state; no run after the first lists every message's
/// flags, and a run with nothing to do sends no FETCH at all.
@Suite struct CondstoreOnlyTests {
    static let folders = ["testdir", "cjk"]

    /// The commands a run sent, without tags.
    func commands(_ lines: [String]) -> [String] {
        lines.filter { $0.hasPrefix("C: ") }.map { String($0.dropFirst(3).drop { $0 != " " }.dropFirst()) }
    }

    @Test func serverAndLocalChangesTravelWithoutAWholeListing() throws {
        let f = try SyncFixture(capabilities: TestServer.gmailCapabilities)
        let (first, firstLines) = try f.run(keeping: .trace)
        #expect(first.values.allSatisfy { $0.error == nil })
        #expect(!commands(firstLines).contains { $0.hasPrefix("ENABLE") && $0.contains("QRESYNC") })
        #expect(!firstLines.contains { $0.hasPrefix("S: ") && $0.contains("QRESYNC") }, "the server must not offer QRESYNC")

        // On the server: a flag, an expunge, a new message in each folder. Locally: a flag in testdir.
        let c = try f.imap()
        defer { c.logout() }
        for (i, folder) in Self.folders.enumerated() {
            _ = try c.select(MailboxName(folder))
            let uids = try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid).sorted()
            try #require(uids.count >= 3)
            try c.store(UIDSet(uids[0]), StoreAction(.add, [.flagged], silent: true))
            try c.delete(UIDSet(uids[1]))
            try c.append(to: MailboxName(folder), flags: [.seen], message: SyncFixture.message("condstore-\(i)"))
        }
        let file = try f.files("testdir").last!
        try f.setLocalFlags(file, file.flags.isFlagged ? "S" : "FS")
        usleep(30_000)

        let (s, lines) = try f.run(keeping: .trace)
        for folder in Self.folders {
            let x = try #require(s[folder])
            #expect(x.new == 1 && x.deletedLocal == 1 && x.flagsDown == 1 && x.error == nil, "\(x.line)")
        }
        #expect(s["testdir"]?.flagsUp == 1)
        let sent = commands(lines)
        #expect(sent.contains { $0.hasPrefix("UID FETCH 1:* (UID FLAGS) (CHANGEDSINCE ") })
        #expect(sent.contains { $0.hasPrefix("UID SEARCH RETURN (ALL) UID 1:") })
        #expect(!sent.contains { $0 == "UID FETCH 1:* (UID FLAGS)" }, "a whole listing: \(sent)")
        try f.expectInSync("after changes on a CONDSTORE-only server")

        // Nothing to do: per folder a SELECT and a UID SEARCH, and no FETCH at all.
        usleep(2_200_000)  // the directories' times old enough to keep
        try f.sync()
        let (quiet, quietLines) = try f.run(keeping: .trace)
        #expect(quiet.values.allSatisfy { !$0.changed })
        let idle = commands(quietLines)
        #expect(!idle.contains { $0.hasPrefix("UID FETCH") }, "\(idle)")
        let selects = idle.filter { $0.hasPrefix("SELECT ") }.count
        #expect(idle.filter { $0.hasPrefix("UID SEARCH") }.count <= selects)
    }
}
