/// Issue #14, "bad local state": a damaged file of mo's own (state file, sync journal, `dovecot-keywords`,
/// action journal) or a folder replaced by a file ends in one line naming the file (and line), exit 65;
/// that folder alone is left as it is, the others sync, and the recovery in docs/reliability.md ("Bad local
/// state") loses nothing. The real binary against the private Dovecot, as a user runs it.
@Suite struct BadLocalStateTests {
    func statePath(_ f: SyncFixture, _ folder: String, _ ext: String = "state") -> String {
        f.dir.path + "/state/test/" + FolderStateStore.key(forLocalPath: folder) + "." + ext
    }

    func read(_ path: String) throws -> String {
        guard case .success(let b) = readWholeFile(path) else { throw GenericError(.localIO, "cannot read \(path)") }
        return String(decoding: b, as: UTF8.self)
    }

    func write(_ path: String, _ text: String) throws {
        guard case .success = replaceFileAtomically(path, Array(text.utf8)) else { throw GenericError(.localIO, "cannot write \(path)") }
    }

    /// Runs mo-sync once with `folder` damaged and a message new on the server in it and in another folder
    /// (a folder with no change is not even read): exit 65, exactly one error line (escape-free), naming
    /// `expected`; the other folder's message arrives.
    func expectFolderFails(
        _ f: SyncFixture, _ folder: String, naming expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let c = try f.imap()
        try c.append(to: MailboxName(folder), flags: [], message: SyncFixture.message("new-in-\(folder)"))
        try c.append(to: MailboxName("testdir2_bar"), flags: [], message: SyncFixture.message("beside-\(folder)"))
        c.logout()
        let before = try f.files("testdir2_bar").count
        let run = try f.runBinary()
        let lines = run.stderrString.split(separator: "\n")
        #expect(run.status == 65, "\(run.stderrString)", sourceLocation: sourceLocation)
        #expect(lines.count == 1, "\(run.stderrString)", sourceLocation: sourceLocation)
        #expect(lines.first?.hasPrefix("\(folder): failed: \(expected)") == true, "\(run.stderrString)", sourceLocation: sourceLocation)
        #expect(!run.stderrString.contains("\u{1B}"), sourceLocation: sourceLocation)
        #expect(try f.files("testdir2_bar").count == before + 1, "another folder still syncs", sourceLocation: sourceLocation)
    }

    @Test func aCorruptStateFileNamesFileAndLineAndMovingItAsideRecovers() throws {
        let f = try SyncFixture()
        try f.sync()
        let path = statePath(f, "cjk")
        var lines = try read(path).split(separator: "\n", omittingEmptySubsequences: false)
        lines[8] = "7 bad\u{1B}[2J"  // a record line with an escape sequence, one field short
        try write(path, lines.joined(separator: "\n"))
        // A local change: the run reads every record. (With server changes alone it reads only the records
        // of the UIDs concerned, and the UIDs of the others; their lines are carried over byte for byte.)
        try f.addLocal("cjk", subject: "local-beside-the-damage")
        try expectFolderFails(f, "cjk", naming: "\(path):9: expected \"UID UNIQUE FLAGS\", found \"7 bad\\u{1B}[2J\"")
        #expect(try f.runBinary().status == 65, "it stays failed, untouched, until the user acts")

        #expect(rename(path, path + ".bad") == 0)
        let rerun = try f.runBinary()
        #expect(rerun.status == 0, "\(rerun.stderrString)")
        try f.expectInSync("re-paired by Message-ID and size: nothing fetched or uploaded twice")
        #expect(try f.files("cjk").count == 6)
    }

    /// A folder gone from one side is a deletion to carry over only if its state file reads: damaged, the
    /// folder fails alone and the other side keeps every message.
    @Test(arguments: [true, false])
    func aFolderGoneFromOneSideWithADamagedStateFailsAlone(goneOnServer: Bool) throws {
        let f = try SyncFixture()
        try f.sync()
        let path = statePath(f, "cjk")
        try write(path, try read(path).replacingOccurrences(of: "uidnext ", with: "uidnext x"))
        let c = try f.imap()
        defer { c.logout() }
        if goneOnServer {
            try c.deleteMailbox(MailboxName("cjk"))
        } else {
            #expect(rename(f.maildir + "/cjk", f.dir.path + "/cjk-moved-away") == 0)
        }
        try c.append(to: MailboxName("testdir2_bar"), flags: [], message: SyncFixture.message("beside-cjk"))
        let run = try f.runBinary()
        #expect(run.status == 65)
        #expect(run.stderrString.hasPrefix("cjk: failed: \(path):4: uidnext \"x"), "\(run.stderrString)")
        #expect(run.stderrString.split(separator: "\n").count == 1, "\(run.stderrString)")
        #expect(try f.files("testdir2_bar").count == 9, "another folder still syncs")
        if goneOnServer {
            #expect(try f.files("cjk").count == 4, "no local message deleted")
        } else {
            #expect(try c.select(MailboxName("cjk")).exists == 4, "no server message deleted")
        }
    }

    @Test func aTruncatedStateFileIsNamedWithItsLastLine() throws {
        let f = try SyncFixture()
        try f.sync()
        let path = statePath(f, "cjk")
        let text = try read(path)
        try write(path, String(text.dropLast(5)))  // cut inside the last record
        let count = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        try expectFolderFails(f, "cjk", naming: "\(path):\(count): incomplete last line")
        #expect(rename(path, path + ".bad") == 0)
        #expect(try f.runBinary().status == 0)
        try f.expectInSync("after moving the state file aside")
    }

    /// Whole record lines gone (a cut at a line end) cannot be told from a smaller state, but the pairs then
    /// do not add up to the server's EXISTS: the server is listed whole and the messages of the lost records
    /// pair again by key, with no transfer and no duplicate. Rows: what changed since (a local message, a
    /// server message, a flag on the server of a message whose record was lost).
    @Test(arguments: ["local", "server", "flag"])
    func recordLinesCutAtALineEndArePairedAgainByKey(change: String) throws {
        let f = try SyncFixture()
        try f.sync()
        let path = statePath(f, "cjk")
        let lines = try read(path).split(separator: "\n", omittingEmptySubsequences: false)
        try write(path, lines.dropLast(3).joined(separator: "\n") + "\n")  // the last two records gone
        let c = try f.imap()
        defer { c.logout() }
        switch change {
        case "local": try f.addLocal("cjk", subject: "after-the-cut")
        case "server": try c.append(to: MailboxName("cjk"), flags: [], message: SyncFixture.message("after-the-cut"))
        default:
            _ = try c.select(MailboxName("cjk"))
            try c.store(UIDSet(4), StoreAction(.add, [.flagged], silent: true))
        }
        let s = try #require(try f.sync()["cjk"])
        #expect(s.new == (change == "server" ? 1 : 0) && s.uploaded == (change == "local" ? 1 : 0), "\(s.line)")
        try f.expectInSync("no duplicate on either side")
        let count = change == "flag" ? 4 : 5
        #expect(try f.files("cjk").count == count)
        #expect(try c.select(MailboxName("cjk")).exists == count)
        #expect(try f.sync().values.allSatisfy { !$0.changed }, "the pairs are whole again")
    }

    @Test func aCorruptSyncJournalNamesFileAndLineAndMovingItAsideRecovers() throws {
        let f = try SyncFixture()
        try f.sync()
        // A journal as a killed run leaves it, then damaged on its second line.
        let path = statePath(f, "cjk", "journal")
        try write(path, "mo-sync-journal 1\nX 1 2\n")
        try expectFolderFails(f, "cjk", naming: "\(path):2: unknown journal entry \"X\"")
        #expect(rename(path, path + ".bad") == 0)
        #expect(try f.runBinary().status == 0)
        try f.expectInSync("after moving the journal aside")
    }

    @Test func aDamagedKeywordTableStopsItsFolderUntilTheLineIsFixed() throws {
        let f = try SyncFixture()
        let c = try f.imap()
        _ = try c.select(MailboxName("cjk"))
        try c.store(UIDSet(1), StoreAction(.add, [.keyword("work")], silent: true))
        c.logout()
        try f.sync()
        let path = f.maildir + "/cjk/dovecot-keywords"
        #expect(try read(path) == "0 work\n")
        try write(path, "0 work\n1x todo\n")
        try expectFolderFails(f, "cjk", naming: "\(path):2: expected \"INDEX KEYWORD\", found \"1x todo\"")
        try write(path, "0 work\n")
        #expect(try f.runBinary().status == 0)
        try f.expectInSync("after the line was fixed")
    }

    @Test(arguments: ["", "/cur"])
    func aFolderReplacedByAFileDeletesNothingOnTheServer(part: String) throws {
        let f = try SyncFixture()
        try f.sync()
        let folder = f.maildir + "/cjk"
        #expect(rename(folder + part, f.dir.path + "/cjk-moved-away") == 0)
        try write(folder + part, "not a folder\n")
        try expectFolderFails(f, "cjk", naming: "\"\(folder + part)\": a regular file where a directory of the Maildir folder should be")
        let c = try f.imap()
        #expect(try c.select(MailboxName("cjk")).exists == 5, "no message deleted on the server")
        c.logout()

        // Recovery: the file out of the way, the folder's state file aside; the next run fetches the folder again.
        #expect(unlink(folder + part) == 0)
        if part == "/cur" { #expect(mkdir(folder + part, 0o700) == 0) }
        #expect(rename(statePath(f, "cjk"), statePath(f, "cjk") + ".bad") == 0)
        let rerun = try f.runBinary()
        #expect(rerun.status == 0, "\(rerun.stderrString)")
        try f.expectInSync("after the recovery")
    }

    @Test func junkInCurIsSkippedWithANoteAndBlocksNothing() throws {
        let f = try SyncFixture()
        try f.sync()
        let cur = f.maildir + "/cjk/cur/"
        #expect(mkdir(cur + "1700000003.M4P4Q4R4.adir:2,S", 0o700) == 0)  // a directory with a message's name
        #expect(symlink("/nonexistent", cur + "1700000004.M5P5Q5R5.link:2,S") == 0)  // dangling
        #expect(mkfifo(cur + "1700000005.M6P6Q6R6.fifo:2,S", 0o600) == 0)  // opening it would block
        try write(cur + "odd name:2,S\u{1B}", "From: x\n\nodd\n")  // not a Maildir name
        try f.addLocal("cjk", subject: "beside-the-junk")
        let run = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "--config", f.configPath])
        #expect(run.status == 0, "\(run.stderrString)")
        let notes = run.stderrString.split(separator: "\n").filter { $0.contains("note:") }
        #expect(notes.count == 4, "\(run.stderrString)")
        #expect(notes.contains { $0.contains("1700000003.M4P4Q4R4.adir:2,S\": not a regular file; skipped") })
        #expect(notes.contains { $0.contains("1700000004.M5P5Q5R5.link:2,S\": symbolic link; skipped") })
        #expect(notes.contains { $0.contains("1700000005.M6P6Q6R6.fifo:2,S\": not a regular file; skipped") })
        #expect(
            notes.contains { $0.hasSuffix("maildir file name \"odd name:2,S\\u{1B}\": non-letter \"\\u{1B}\" in flags; skipped") },
            "\(notes)")
        #expect(!run.stderrString.contains("\u{1B}"))
        #expect(try f.files("cjk").count == 5, "the new message beside the junk is uploaded")
    }

    @Test func aCorruptActionJournalIsNamedAndTheMailStillSyncs() throws {
        let f = try SyncFixture()
        try f.sync()
        let path = f.dir.path + "/state/actions.journal"
        try write(path, "mo-actions 1\nsl2k3a-0x9f3kqp send bogus - account=test tries=0 at=1\n")
        let c = try f.imap()
        try c.append(to: MailboxName("cjk"), flags: [], message: SyncFixture.message("despite-the-journal"))
        c.logout()
        let run = try f.runBinary()
        #expect(run.status == 65)
        #expect(run.stderrString == "mo-sync: action journal: \(path):2: unknown state \"bogus\"\n", "\(run.stderrString)")
        #expect(try f.files("cjk").count == 5, "the mail syncs all the same")
        #expect(try read(path).hasSuffix(" bogus - account=test tries=0 at=1\n"), "the journal is left as it was")
    }
}
