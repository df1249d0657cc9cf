@testable import SyncRunner

extension EverydayPathTests {
    /// Server changes (flags, an expunge, new messages, a move between folders) cost one SELECT per changed
    /// folder: the new bodies come down while `prepare` has the folder selected, and a finish that sends
    /// nothing selects nothing. The moved message is renamed locally, not fetched: its prefetched body is
    /// dropped, and no tmp/ file is left behind. Both ways to the listing: server-only changes, and the
    /// full path (the directories' times touched, so the stamp no longer vouches for them).
    @Test(arguments: [false, true]) func serverChangesCostOneSelectPerFolder(touched: Bool) throws {
        let f = try SyncFixture()
        try f.sync()
        if touched {
            for folder in ["testdir", "cjk"] { #expect(utimes(f.maildir + "/" + folder + "/cur", nil) == 0) }
        }
        let (c, uids) = try f.selected("testdir")
        defer { c.logout() }
        try #require(uids.count >= 4)
        try c.store(UIDSet(uids[0]), StoreAction(.add, [.flagged], silent: true))
        try c.delete(UIDSet(uids[1]))
        try c.move(UIDSet(uids[2]), to: MailboxName("cjk"))
        try c.append(to: MailboxName("testdir"), flags: [.seen], message: SyncFixture.message("one-select-a"))
        try c.append(to: MailboxName("testdir"), flags: [], message: SyncFixture.message("one-select-b"))
        try c.append(to: MailboxName("cjk"), flags: [.seen], message: SyncFixture.message("one-select-c"))

        let (s, lines) = try f.run(keeping: .trace)
        #expect(s["testdir"]?.new == 2 && s["testdir"]?.deletedLocal == 1 && s["testdir"]?.flagsDown == 1, "\(s["testdir"]!.line)")
        #expect(s["testdir"]?.moved == 1 && s["cjk"]?.new == 1, "\(s["cjk"]!.line)")

        let commands = lines.filter { $0.hasPrefix("C: ") }
        for folder in ["testdir", "cjk"] {
            let selects = commands.filter { $0.contains(" SELECT \(folder) ") || $0.hasSuffix(" SELECT \(folder)") }
            #expect(selects.count == 1, "\(folder), touched \(touched): \(selects)")
        }
        for folder in ["testdir", "cjk"] {
            let tmp = (try? directoryNames(f.maildir + "/" + folder + "/tmp").get()) ?? []
            #expect(tmp.isEmpty, "\(folder)/tmp: \(tmp)")
        }
        try f.expectInSync("after server changes fetched in one selection")
        #expect(try f.sync().values.allSatisfy { !$0.changed })
    }

    /// Local flag changes (neomutt marking messages read or flagged) in two folders: each folder takes no part
    /// in a move, so it is finished in the selection that listed it, and its STOREs need no second SELECT.
    @Test func localFlagChangesCostOneSelectPerFolder() throws {
        let f = try SyncFixture()
        try f.sync()
        for folder in ["testdir", "cjk"] {
            let files = try f.files(folder)
            try #require(!files.isEmpty)
            try f.setLocalFlags(files[0], files[0].flags.isFlagged ? "S" : "FS")
        }
        usleep(30_000)
        let (s, lines) = try f.run(keeping: .trace)
        for x in s.values where x.folder == "testdir" || x.folder == "cjk" { #expect(x.flagsUp == 1, "\(x.line)") }
        let commands = lines.filter { $0.hasPrefix("C: ") }
        for folder in ["testdir", "cjk"] {
            let selects = commands.filter { $0.contains(" SELECT \(folder) ") || $0.hasSuffix(" SELECT \(folder)") }
            #expect(selects.count == 1, "\(folder): \(selects)")
        }
        try f.expectInSync("after local flag changes stored in one selection")
        #expect(try f.sync().values.allSatisfy { !$0.changed })
    }

    /// neomutt's save (`s` to another folder) writes a copy under a new unique name and deletes the
    /// original: the next run moves the message on the server (UID MOVE), uploading nothing.
    @Test func aCopySavedUnderANewNameMovesOnTheServer() throws {
        let f = try SyncFixture()
        try f.sync()
        let original = try #require(try f.files("testdir").first)
        guard case .success(let bytes) = readWholeFile(original.path) else { Issue.record("cannot read"); return }
        let copy = f.maildir + "/cjk/cur/1700000009.M9P9Q9.neomutt:2,S"
        guard case .success = replaceFileAtomically(copy, bytes) else { Issue.record("cannot write \(copy)"); return }
        #expect(unlink(original.path) == 0)
        usleep(30_000)
        let (s, lines) = try f.run(keeping: .trace)
        let commands = lines.filter { $0.hasPrefix("C: ") }
        #expect(commands.contains { $0.contains(" UID MOVE ") }, "\(commands)")
        #expect(!commands.contains { $0.contains(" APPEND ") }, "\(commands)")
        #expect(s["testdir"]?.moved == 1 && s["cjk"]?.uploaded == 0 && s["testdir"]?.deletedRemote == 0, "\(s.values.map(\.line))")
        try f.expectInSync("after a copy saved under a new name")
        #expect(try f.sync().values.allSatisfy { !$0.changed })
    }

    /// With new messages and deletions pulled only (the server decides), a local move stays local: no
    /// UID MOVE goes up (review finding: move detection ignored the policy).
    @Test func aPullOnlyAccountSendsNoMove() throws {
        let f = try SyncFixture(extraSync: "new = \"pull\"\ndelete = \"pull\"")
        try f.sync()
        let original = try #require(try f.files("testdir").first)
        let name = String(original.path.split(separator: "/").last!)
        #expect(rename(original.path, f.maildir + "/cjk/cur/" + name) == 0)
        usleep(30_000)
        let lines = try f.run(keeping: .trace).lines
        let commands = lines.filter { $0.hasPrefix("C: ") }
        #expect(!commands.contains { $0.contains(" UID MOVE ") || $0.contains(" APPEND ") || $0.contains(" EXPUNGE") }, "\(commands)")
    }
}
