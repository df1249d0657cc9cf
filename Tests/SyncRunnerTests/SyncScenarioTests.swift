@testable import SyncRunner

/// A private Dovecot seeded with real mail, an account on it, and helpers to change either side the way
/// users do. Every scenario ends with the checker: server and Maildir equal, message by message.
final class SyncFixture {
    let server: TestServer
    let dir: TemporaryDirectory
    /// Tests may change the account's settings between runs (`run`, `sync` and the checker read it).
    var config: Config
    var account: Account { config.accounts[0] }
    var maildir: String { account.maildir! }

    static let corpus = TestPaths.corpus("mu-testdata")

    init(seed: Bool = true, extraSync: String = "", listIndex: Bool = false, capabilities: String? = nil) throws {
        server = try TestServer.start(seed: seed ? [Self.corpus] : [], listIndex: listIndex, capabilities: capabilities)
        dir = try TemporaryDirectory("mo-sync")
        text = server.accountConfig(in: dir.path) + "[account.test.sync]\n" + extraSync
        config = try ConfigLoader.parse(text: text, path: dir.path + "/config.toml")
        configPath = dir.path + "/config.toml"
        try writePrivateFile(configPath, text)
    }

    let configPath: String
    private let text: String

    /// The same account reached through another port (a proxy), in a config file of its own.
    func configFile(port: Int) -> String {
        let path = dir.path + "/config-\(port).toml"
        try? writePrivateFile(path, text.replacingPort(server.imapsPort, with: port))
        return path
    }

    /// The account's config file with `lines` added to its `[account.test.sync]` table, for the binary.
    func configFile(syncLines lines: String, name: String) throws -> String {
        let path = dir.path + "/config-\(name).toml"
        try writePrivateFile(path, text + lines)
        return path
    }

    /// Runs the real `mo-sync` binary; `crashAt` makes it die (as by kill -9) at that step.
    func runBinary(
        crashAt: Int? = nil, environment: [String: String] = [:], config: String? = nil, _ extra: [String] = []
    ) throws -> ChildProcess.Result {
        var env = environment
        if let crashAt { env["MO_CRASH_AT"] = String(crashAt) }
        return try ChildProcess.run(
            [TestPaths.binDirectory + "/mo-sync", "--config", config ?? configPath, "--quiet"] + extra,
            environment: env)
    }

    deinit {
        server.stop()
        dir.remove()
    }

    @discardableResult
    func sync(force: Bool = false, dryRun: Bool = false, expectingErrors: Bool = false) throws -> [String: FolderSummary] {
        var options = SyncOptions()
        options.force = force
        options.dryRun = dryRun
        let byFolder = try run(keeping: .trace, options).byFolder
        if !expectingErrors { for s in byFolder.values { #expect(s.error == nil, "\(s.line)") } }
        return byFolder
    }

    /// What a run says, on one channel: the protocol trace, `--verbose` lines, or a dry run's plan.
    enum Channel { case trace, verbose, planned }

    /// One run with what it says on `channel` kept: its summaries by folder, and those lines. A failed run
    /// prints the last 40 lines.
    func run(keeping channel: Channel, _ options: SyncOptions = SyncOptions()) throws -> (
        byFolder: [String: FolderSummary], lines: [String]
    ) {
        var options = options
        let lines = TraceLines()
        let keep: @Sendable (String) -> Void = { l in lines.value.withLock { $0.append(l) } }
        switch channel {
        case .trace: options.trace = IMAPTrace(sink: keep)
        case .verbose: options.verbose = keep
        case .planned: options.planned = keep
        }
        let summaries: [FolderSummary]
        do {
            summaries = try AccountSync(account: account, config: config, options: options).run()
        } catch {
            print(
                "TRACE-BEGIN server \(server.directory) port \(server.imapsPort)\n"
                    + lines.value.withLock { $0.suffix(40).joined(separator: "\n") } + "\nTRACE-END")
            throw error
        }
        var byFolder: [String: FolderSummary] = [:]
        for s in summaries { byFolder[s.folder] = s }
        return (byFolder, lines.value.withLock { $0 })
    }

    func expectInSync(_ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let report = try SyncChecker.check(account: account, config: config)
        #expect(report.ok, "\(comment?.description ?? ""): \(report.problems.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }

    func imap() throws -> IMAPConnection {
        try IMAPConnection.open(AccountSettings.imap(account.imap!, account: account.name))
    }

    /// A fixture synced twice, `microseconds` apart: the second run records the directories' times (after
    /// the default 2.2 s they have aged past the trust window, and it stamps them).
    static func stamped(after microseconds: UInt32 = 2_200_000) throws -> SyncFixture {
        let f = try SyncFixture()
        try f.sync()
        usleep(microseconds)
        try f.sync()
        return f
    }

    /// A session with `folder` selected, and the UIDs in it, ascending: where server-side changes start.
    func selected(_ folder: String) throws -> (IMAPConnection, [UInt32]) {
        let c = try imap()
        do {
            _ = try c.select(MailboxName(folder))
            return (c, try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid).sorted())
        } catch {
            c.logout()
            throw error
        }
    }

    func files(_ folder: String) throws -> [MaildirEntry] {
        try MaildirScanner.scan(MaildirFolder(path: maildir + "/" + folder)).entries.sorted { $0.unique < $1.unique }
    }

    /// A flag change as neomutt makes it: one rename, into cur/.
    func setLocalFlags(_ entry: MaildirEntry, _ letters: String) throws {
        let name = entry.name.withFlags(MaildirFlags(letters: letters)!)
        let folder = String(entry.path.dropLast(entry.filename.count + 5))
        let target = try folder + "/cur/" + MaildirFilename(unique: name.unique, flags: name.flags, uid: name.uid, hasInfo: true).rendered
        #expect(rename(entry.path, target) == 0)
    }

    /// A message saved by a mail client straight into cur/.
    func addLocal(_ folder: String, subject: String, flags: String = "S") throws {
        let body =
            "From: me@example.com\nTo: you@example.com\nSubject: \(subject)\nMessage-ID: <\(subject)@local.test>\n\nWritten locally.\n"
        let name = try MaildirFilename(unique: MaildirUniqueName.generate(), flags: MaildirFlags(letters: flags)!, hasInfo: true)
        let path = maildir + "/" + folder + "/cur/" + name.rendered
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        _ = Array(body.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    static func message(_ subject: String) -> [UInt8] {
        Array(
            "From: a@example.com\r\nTo: mo@example.com\r\nSubject: \(subject)\r\nMessage-ID: <\(subject)@server.test>\r\n\r\nBody of \(subject).\r\n"
                .utf8)
    }
}

final class TraceLines: Sendable { let value = Mutex<[String]>([]) }

extension String {
    func replacingPort(_ old: Int, with new: Int) -> String {
        split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0 == "port = \(old)" ? "port = \(new)" : String($0) }.joined(separator: "\n")
    }
}

@Suite struct SyncScenarioTests {
    @Test func initialSyncThenNoOp() throws {
        let f = try SyncFixture()
        let first = try f.sync()
        #expect(first["testdir"]?.new == 19 && first["cjk"]?.new == 4)
        try f.expectInSync("after the initial sync")
        let second = try f.sync()
        #expect(second.values.allSatisfy { !$0.changed }, "a no-op resync changed something")
        try f.expectInSync("after a no-op resync")
    }

    @Test func serverSideChangesArrive() throws {
        let f = try SyncFixture()
        try f.sync()
        let (c, uids) = try f.selected("testdir")
        defer { c.logout() }
        try c.store(UIDSet(uids[0]), StoreAction(.add, [.flagged, .seen], silent: true))
        try c.store(UIDSet(uids[1]), StoreAction(.add, [.keyword("$Label1"), .keyword("work")], silent: true))
        try c.delete(UIDSet(uids[2]))
        try c.move(UIDSet(uids[3]), to: MailboxName("cjk"))
        try c.append(to: MailboxName("testdir"), flags: [.answered], message: SyncFixture.message("fresh"))

        let s = try f.sync()
        #expect(s["testdir"]?.flagsDown == 2)
        #expect(s["testdir"]?.new == 1)
        #expect(s["testdir"]?.deletedLocal == 1)  // the expunged one
        #expect(s["testdir"]?.moved == 1)  // the moved one: its file was moved, not fetched again
        #expect(s["cjk"]?.new == 0)
        try f.expectInSync("after server-side changes")
        // The keyword letters round-trip through dovecot-keywords.
        let keywords = try MaildirKeywords.load(folder: f.maildir + "/testdir")
        #expect(keywords.letter(for: "work") != nil && keywords.letter(for: "$Label1") != nil)
        #expect(try f.sync().values.allSatisfy { !$0.changed })
    }

    @Test func localChangesAsNeomuttMakesThem() throws {
        let f = try SyncFixture()
        try f.sync()
        var files = try f.files("testdir")
        try f.setLocalFlags(files[0], files[0].flags.letters == "FRS" ? "" : "FRS")
        try f.setLocalFlags(files[1], files[1].flags.letters == "P" ? "" : "P")
        #expect(unlink(files[2].path) == 0)
        try f.addLocal("testdir", subject: "draft-1", flags: "DS")
        try f.addLocal("cjk", subject: "note-2", flags: "")
        // A move between folders, as `mv` does it: same unique name, another folder.
        let moved = files[3]
        #expect(rename(moved.path, f.maildir + "/cjk/cur/" + moved.filename) == 0)

        let s = try f.sync()
        #expect(s["testdir"]?.uploaded == 1 && s["cjk"]?.uploaded == 1)
        #expect(s["testdir"]?.flagsUp == 2)
        #expect(s["testdir"]?.deletedRemote == 1)
        #expect(s["testdir"]?.moved == 1)  // UID MOVE, no re-upload
        try f.expectInSync("after local changes")
        files = try f.files("testdir")
        #expect(try f.sync().values.allSatisfy { !$0.changed })
        try f.expectInSync("after a second run")
    }

    /// Uploads stream from the file (`WireFile`): a message of several read chunks, without a Message-ID
    /// (keyed by the SHA-1 of its wire bytes), arrives byte for byte in CRLF form, and pairs.
    @Test func aLargeLocalMessageIsStreamedUpExactly() throws {
        let f = try SyncFixture()
        try f.sync()
        var text = "From: me@example.com\nTo: you@example.com\nSubject: large\n\n"
        for i in 0..<40_000 { text += "line \(i) of a long message body\n" }
        let bytes = Array(text.utf8)  // ~1.4 MB: several 256 KB chunks (mixed line ends: WireFileTests)
        let name = try MaildirFilename(unique: MaildirUniqueName.generate(), flags: MaildirFlags(letters: "S")!, hasInfo: true)
        guard case .success = replaceFileAtomically(f.maildir + "/cjk/cur/" + name.rendered, bytes) else {
            Issue.record("cannot write the message"); return
        }
        let s = try f.sync()
        #expect(s["cjk"]?.uploaded == 1)
        try f.expectInSync("after a large upload")
        let c = try f.imap()
        defer { c.logout() }
        _ = try c.select(MailboxName("cjk"))
        var server: [UInt8] = []
        var current: [UInt8] = []
        try c.fetch(UIDSet(1...UIDSet.star), items: [.body()]) { e in
            if case .bodyStart = e { current = [] }
            if case .bodyBytes(let b) = e { current += b }
            if case .bodyEnd = e, current.count > server.count { server = current }
        }
        #expect(server == LineEndings.toCRLF(bytes))
        #expect(try f.sync().values.allSatisfy { !$0.changed })
    }

    @Test func bothSidesChangeFlagsOfTheSameMessages() throws {
        let f = try SyncFixture()
        try f.sync()
        let files = try f.files("testdir2_bar")
        let c = try f.imap()
        defer { c.logout() }
        _ = try c.select(MailboxName("testdir2_bar"))
        let uids = try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid).sorted()
        // Every message: flagged locally, answered on the server; the first also seen on both sides.
        for (i, e) in files.enumerated() { try f.setLocalFlags(e, i == 0 ? "FS" : "F" + e.flags.letters.filter { $0 == "S" }) }
        try c.store(UIDSet(uids: uids), StoreAction(.add, [.answered], silent: true))
        try c.store(UIDSet(uids[0]), StoreAction(.add, [.seen], silent: true))
        try f.sync()
        try f.expectInSync("after concurrent flag changes")
        let info = try c.fetchInfo(UIDSet(1...UIDSet.star)).messages
        #expect(info.allSatisfy { $0.flags!.contains(.flagged) && $0.flags!.contains(.answered) })
        #expect(try f.files("testdir2_bar").allSatisfy { $0.flags.isFlagged && $0.flags.isReplied })
    }

    @Test func uidValidityResetRepairsWithoutTransfers() throws {
        let f = try SyncFixture()
        try f.sync()
        let before = try f.files("testdir2_Foo").map(\.unique)
        // Recreate the mailbox with the same messages: a new UIDVALIDITY, new UIDs.
        let c = try f.imap()
        defer { c.logout() }
        let box = MailboxName("testdir2_Foo")
        _ = try c.select(box)
        var copies: [[UInt8]] = []
        try c.fetch(UIDSet(1...UIDSet.star), items: [.body()]) { e in
            if case .bodyStart = e { copies.append([]) }
            if case .bodyBytes(let b) = e { copies[copies.count - 1] += b }
        }
        _ = try c.select(.inbox)
        try c.deleteMailbox(box)
        try c.create(box)
        for m in copies { try c.append(to: box, message: m) }

        let s = try f.sync()
        #expect(s["testdir2_Foo"]?.new == 0, "re-downloaded after a UIDVALIDITY change")
        #expect(s["testdir2_Foo"]?.adopted == copies.count)
        #expect(s["testdir2_Foo"]?.notes.contains { $0.contains("UIDVALIDITY changed") } == true)
        // The same files (flags may be merged: the new server copies lost theirs).
        #expect(try f.files("testdir2_Foo").map(\.unique) == before)
        try f.expectInSync("after a UIDVALIDITY reset")
    }

    @Test func adoptingAnExistingMaildirTransfersNothing() throws {
        let f = try SyncFixture()
        try f.sync()
        // Lose the state (or come from mbsync/OfflineIMAP): the next run must pair, not duplicate.
        _ = try ChildProcess.run(["rm", "-rf", f.dir.path + "/state"])
        let s = try f.sync()
        #expect(s.values.allSatisfy { $0.new == 0 && $0.uploaded == 0 })
        #expect(s["testdir"]?.adopted == 19)
        try f.expectInSync("after adoption")
    }

    @Test func foldersCreatedAndDeletedOnEitherSide() throws {
        let f = try SyncFixture()
        try f.sync()
        let c = try f.imap()
        defer { c.logout() }
        // Created on the server, with mail.
        try c.create(MailboxName("Projects/alpha"))
        try c.append(to: MailboxName("Projects/alpha"), message: SyncFixture.message("alpha-1"))
        // Created locally, with mail.
        try MaildirFolder(path: f.maildir + "/Notes").create()
        try f.addLocal("Notes", subject: "local-note")
        var s = try f.sync()
        #expect(s["Projects/alpha"]?.new == 1 && s["Notes"]?.uploaded == 1)
        try f.expectInSync("after folders were created")

        // Deleted on the server; deleted locally.
        _ = try c.select(.inbox)
        try c.deleteMailbox(MailboxName("Projects/alpha"))
        _ = try ChildProcess.run(["rm", "-rf", f.maildir + "/Notes"])
        s = try f.sync()
        #expect(s["Projects/alpha"]?.deletedLocal == 1)
        #expect(s["Notes"]?.deletedRemote == 1)
        #expect(try c.list().contains { $0.mailbox.decoded == "Notes" } == false)
        #expect(access(f.maildir + "/Projects/alpha", F_OK) != 0)
        try f.expectInSync("after folders were deleted")
    }

    @Test func massDeletionGuardAndVanishedRoot() throws {
        let f = try SyncFixture()
        try f.sync()
        for e in try f.files("testdir").prefix(10) { unlink(e.path) }
        var s = try f.sync()
        #expect(s["testdir"]?.stopped?.contains("would delete 10 of") == true)
        s = try f.sync(force: true)
        #expect(s["testdir"]?.deletedRemote == 10)
        try f.expectInSync("after a forced mass deletion")

        _ = try ChildProcess.run(["mv", f.maildir, f.maildir + ".away"])
        do {
            try f.sync()
            Issue.record("synced with the Maildir root gone")
        } catch {
            #expect("\(error)".contains("the Maildir root \(f.maildir) is missing"))
        }
    }

    /// Stopped by the deletion guard under --dry-run, with a server keyword the listing gave a letter: the
    /// folder's keyword table and journal are left as they were (a dry run writes nothing).
    @Test func aDryRunStoppedByTheGuardWritesNoKeywordTable() throws {
        let f = try SyncFixture()
        try f.sync()
        let (c, uids) = try f.selected("testdir")
        defer { c.logout() }
        try c.store(UIDSet(uids[0]), StoreAction(.add, [Flag("dryrunkeyword")!], silent: true))
        for e in try f.files("testdir").prefix(10) { unlink(e.path) }
        let table = f.maildir + "/testdir/dovecot-keywords"
        let before = try? readWholeFile(table).get()
        let s = try f.sync(dryRun: true)
        #expect(s["testdir"]?.stopped?.contains("would delete 10 of") == true)
        #expect((try? readWholeFile(table).get()) == before)
        #expect(access(f.dir.path + "/state/test/=testdir.journal", F_OK) != 0)
    }

    @Test func dryRunChangesNothing() throws {
        let f = try SyncFixture()
        let s = try f.sync(dryRun: true)
        #expect(s["testdir"]?.new == 19)
        #expect(access(f.maildir + "/testdir", F_OK) != 0)
        #expect(access(f.dir.path + "/state/test/=testdir.state", F_OK) != 0)
    }
}

@Suite struct AdoptionTests {
    /// A Maildir made by mbsync (its `,U=` names and the X-TUID header it adds) is adopted: nothing is
    /// downloaded or uploaded, and the X-TUID headers are removed so the Maildir holds the server's bytes.
    @Test func adoptsAMaildirMadeByMbsync() throws {
        guard access("/usr/bin/mbsync", X_OK) == 0 else {
            Issue.record("mbsync is not installed (apt-get install isync; .ci/run installs it)")
            return
        }
        let f = try SyncFixture()
        let rc = f.dir.path + "/mbsyncrc"
        let text = """
            IMAPAccount test
            Host 127.0.0.1
            Port \(f.server.imapsPort)
            User \(f.server.user)
            Pass \(f.server.password)
            SSLType IMAPS
            CertificateFile \(f.server.caFile)

            IMAPStore remote
            Account test

            MaildirStore local
            Path \(f.maildir)/
            Inbox \(f.maildir)/INBOX
            SubFolders Verbatim

            Channel test
            Far :remote:
            Near :local:
            Patterns *
            Create Near
            SyncState \(f.dir.path)/mbsync-state/
            """
        let fd = open(rc, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        _ = try ChildProcess.run(["mkdir", "-p", f.dir.path + "/mbsync-state", f.maildir])
        let mbsync = try ChildProcess.run(["mbsync", "-c", rc, "-a"])
        #expect(mbsync.status == 0, "mbsync: \(mbsync.stderrString)")
        let tuids = try ChildProcess.run(["sh", "-c", "grep -rl '^X-TUID:' \(f.maildir) | wc -l"])
        #expect(Int(tuids.stdoutString.filter(\.isNumber)) ?? 0 > 30, "mbsync added no X-TUID?")

        let s = try f.sync()
        #expect(s.values.allSatisfy { $0.new == 0 && $0.uploaded == 0 }, "\(s.values.map(\.line))")
        #expect(s["testdir"]?.adopted == 19)
        try f.expectInSync("after adopting mbsync's Maildir")
        #expect(try f.sync().values.allSatisfy { !$0.changed })
    }
}

@Suite struct TriageTests {
    /// `mo-index flag` and `mo-index move` change the Maildir at once; the next sync stores the flags and
    /// moves the messages on the server (UID STORE / UID MOVE), uploading nothing.
    @Test func flagAndMoveFromTheIndexReachTheServer() throws {
        let f = try SyncFixture()
        #expect(try f.runBinary().status == 0)
        let index = TestPaths.binDirectory + "/mo-index"
        #expect(try ChildProcess.run([index, "--config", f.configPath, "update"]).status == 0)
        let flag = try ChildProcess.run([index, "--config", f.configPath, "flag", "+flagged", "-unread", "--", "folder:test/cjk"])
        #expect(flag.status == 0 && flag.stdoutString.contains("4 file(s) changed"), "\(flag.stdoutString)\(flag.stderrString)")
        let move = try ChildProcess.run([index, "--config", f.configPath, "move", "folder:test/testdir2_Foo", "@archive"])
        #expect(move.status == 0 && move.stdoutString.contains("3 file(s) moved"), "\(move.stdoutString)\(move.stderrString)")
        let s = try f.sync()
        #expect(s["cjk"]?.flagsUp == 4)
        #expect(s["testdir2_Foo"]?.moved == 3)
        #expect(s.values.allSatisfy { $0.uploaded == 0 && $0.new == 0 })
        try f.expectInSync("after triage from the index")
        let c = try f.imap()
        defer { c.logout() }
        #expect(try c.status(MailboxName("Archive"), [.messages]).messages == 3)
    }
}

@Suite struct UnchangedFolderTests {
    /// A folder whose cur/ and new/ have not changed since the last commit and whose server reports no
    /// change is not even read; any local rename or server change still gets through.
    @Test func fastPathSkipsOnlyWhatIsReallyUnchanged() throws {
        let f = try SyncFixture.stamped()
        let statePath = f.dir.path + "/state/test/=testdir.state"
        guard case .success(let bytes) = readWholeFile(statePath) else { Issue.record("no state file"); return }
        #expect(String(decoding: bytes, as: UTF8.self).contains("\nlocalstamp "))
        #expect(try f.sync().values.allSatisfy { !$0.changed })

        // A local flag change (a rename) right after: the directory time moved, so the folder is read.
        let file = try f.files("testdir")[0]
        try f.setLocalFlags(file, file.flags.isFlagged ? "S" : "FS")
        var s = try f.sync()
        #expect(s["testdir"]?.flagsUp == 1)
        // A server change while the directories are old: QRESYNC reports it.
        usleep(2_200_000)
        try f.sync()
        let c = try f.imap()
        defer { c.logout() }
        _ = try c.select(MailboxName("testdir2_bar"))
        let uid = try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid).min()!
        try c.store(UIDSet(uid), StoreAction(.add, [.answered], silent: true))
        s = try f.sync()
        #expect(s["testdir2_bar"]?.flagsDown == 1)
        try f.expectInSync("after the fast path")
    }

    /// A folder whose keyword table another process holds (`mo-index tag` adding letters) fails alone,
    /// after a 10 s wait, with a busy error; the other folders sync (review finding: it ended the run).
    @Test func aBusyKeywordTableFailsItsFolderAlone() throws {
        let f = try SyncFixture()
        try f.sync()
        let held = try MaildirKeywords.lock(folder: f.maildir + "/testdir", wait: 0)
        defer { withExtendedLifetime(held) {} }
        let c = try f.imap()
        defer { c.logout() }
        for box in ["testdir", "testdir2_bar"] {
            _ = try c.select(MailboxName(box))
            let uid = try c.fetchInfo(UIDSet(1...UIDSet.star)).messages.map(\.uid).min()!
            try c.store(UIDSet(uid), StoreAction(.add, [.answered], silent: true))
        }
        let s = try f.sync(expectingErrors: true)
        #expect(s["testdir"]?.errorKind == .busy, "\(s["testdir"]?.error ?? "no error")")
        #expect(s["testdir"]?.error?.contains("mo-keywords.lock") == true)
        #expect(s["testdir2_bar"]?.flagsDown == 1)
    }

    /// A mail client renames a file while a run is between its scan and its commit: that run does not see
    /// the change, so it must not write a stamp that would hide it from the next run either.
    @Test func aRenameDuringTheRunIsSeenByTheNextRun() throws {
        let f = try SyncFixture.stamped(after: 200_000)
        let (c, uids) = try f.selected("testdir")
        defer { c.logout() }
        let uid = uids.max()!
        try c.store(UIDSet(uid), StoreAction(.add, [.answered], silent: true))  // gives testdir work to do

        let victim = try f.files("testdir")[0]
        let name = try MaildirFilename(
            unique: victim.unique, flags: MaildirFlags(letters: victim.flags.isFlagged ? "S" : "FS")!,
            hasInfo: true
        ).rendered
        let from = victim.path, to = f.maildir + "/testdir/cur/" + name
        var options = SyncOptions()
        options.verbose = { line in
            if line == "testdir: syncing" { _ = rename(from, to) }
        }
        _ = try AccountSync(account: f.account, config: f.config, options: options).run()
        let next = try f.sync()
        #expect(next["testdir"]?.flagsUp == 1, "the rename made during the previous run was not pushed")
        try f.expectInSync("after a rename during a run")
    }

    /// Only the server changed: the run reads just the changed UIDs' records and files, and the merged
    /// state is the one a full run would have written (a forced full run afterwards finds nothing to do).
    @Test func serverOnlyChangesReadOnlyWhatChanged() throws {
        let f = try SyncFixture.stamped()
        let (c, uids) = try f.selected("testdir")
        defer { c.logout() }
        try c.store(UIDSet(uids[0]), StoreAction(.add, [.flagged], silent: true))
        try c.store(UIDSet(uids[1]), StoreAction(.add, [.keyword("later")], silent: true))
        try c.delete(UIDSet(uids[2]))
        try c.move(UIDSet(uids[3]), to: MailboxName("cjk"))
        try c.append(to: MailboxName("testdir"), flags: [.seen], message: SyncFixture.message("partial"))

        let (s, said) = try f.run(keeping: .verbose)
        #expect(said.contains { $0.contains("only the server changed: 5 UID(s)") }, "\(said)")
        #expect(s["testdir"]?.flagsDown == 2 && s["testdir"]?.new == 1 && s["testdir"]?.deletedLocal == 1)
        #expect(s["testdir"]?.moved == 1 && s["cjk"]?.new == 0)
        try f.expectInSync("after server-only changes")

        // The full path (directories touched, so the stamp no longer matches) agrees with the merged state.
        for folder in ["testdir", "cjk"] {
            #expect(utimes(f.maildir + "/" + folder + "/cur", nil) == 0)
        }
        #expect(try f.sync().values.allSatisfy { !$0.changed })
        try f.expectInSync("after a full run over the merged state")
    }
}

/// The everyday path: what a run did itself must not come back as work for the next one.
@Suite struct EverydayPathTests {
    /// A run that pushed a local flag change and a deletion, and fetched a new message, leaves a state the
    /// next run trusts at once: its own directory changes are stamped without a wait (times set back), and
    /// its own STOREs and expunge are not read back from the server (their mod-sequences are kept). So the
    /// next run reads no folder at all.
    @Test func ownChangesDoNotComeBackAsWork() throws {
        let f = try SyncFixture()
        try f.sync()
        let files = try f.files("testdir")
        try f.setLocalFlags(files[0], files[0].flags.isFlagged ? "S" : "FS")
        #expect(unlink(files[1].path) == 0)
        let c = try f.imap()
        defer { c.logout() }
        try c.append(to: MailboxName("cjk"), flags: [.seen], message: SyncFixture.message("everyday"))
        usleep(30_000)  // the user's changes were not made in the same instant as the scan
        let s = try f.sync()
        #expect(s["testdir"]?.flagsUp == 1 && s["testdir"]?.deletedRemote == 1 && s["cjk"]?.new == 1)

        let said = try f.run(keeping: .verbose).lines
        let listed = said.filter { $0.hasSuffix(": listing") }.count
        #expect(listed > 2 && said.filter { $0.contains("unchanged since the last run") }.count == listed, "\(said)")
        try f.expectInSync("after own changes")
    }
}

extension EverydayPathTests {
    /// A full run over a folder with a few changes on both sides settles the unchanged pairs by their file
    /// names and plans only the rest; every kind of change still goes through, and the result is what a
    /// plain full run would make.
    @Test func focusedFullRunHandlesEveryKindOfChange() throws {
        let f = try SyncFixture()
        try f.sync()
        let files = try f.files("testdir")
        try #require(files.count >= 5)
        try f.setLocalFlags(files[0], files[0].flags.isFlagged ? "S" : "FS")
        #expect(unlink(files[1].path) == 0)
        try f.addLocal("testdir", subject: "focused-new")
        let (c, uids) = try f.selected("testdir")
        defer { c.logout() }
        try c.store(UIDSet(uids.last!), StoreAction(.add, [.answered], silent: true))
        try c.append(to: MailboxName("testdir"), flags: [], message: SyncFixture.message("focused-server"))
        usleep(30_000)
        let s = try f.sync()
        #expect(s["testdir"]?.flagsUp == 1 && s["testdir"]?.deletedRemote == 1 && s["testdir"]?.uploaded == 1, "\(s["testdir"]!.line)")
        #expect(s["testdir"]?.flagsDown == 1 && s["testdir"]?.new == 1, "\(s["testdir"]!.line)")
        try f.expectInSync("after a focused full run")
        #expect(try f.sync(force: true).values.allSatisfy { !$0.changed })
    }
}

@Suite struct ConnectionPlanTests {
    /// More connections only for many transfers over several folders (the rows of `ConnectionPlan`).
    @Test func extraConnections() {
        func work(_ perFolder: [Int]) -> ConnectionPlan.Work {
            var w = ConnectionPlan.Work()
            for n in perFolder { w.add(transfers: n) }
            return w
        }
        #expect(ConnectionPlan.extra(configured: 1, work: work([5000, 5000])) == 0)
        #expect(ConnectionPlan.extra(configured: 4, work: work([5000, 0, 0])) == 0)
        #expect(ConnectionPlan.extra(configured: 4, work: work([100, 100, 0])) == 0)
        #expect(ConnectionPlan.extra(configured: 4, work: work([200, 100])) == 1)
        #expect(ConnectionPlan.extra(configured: 2, work: work([200, 100, 50])) == 1)
        #expect(ConnectionPlan.extra(configured: 4, work: work([200, 100, 50, 1, 1])) == 3)
    }

    /// A second connection lists alongside only when the large folders left would take longer than four
    /// logins (the rows of `ListingPlan`).
    @Test func listingHelper() {
        func wants(_ configured: Int, listed: Int, seconds: Double, large: Int, left: Int = 7) -> Bool {
            ListingPlan.wantsHelper(configured: configured, listed: listed, seconds: seconds, largeLeft: { large }, left: left, login: 0.01)
        }
        #expect(!wants(1, listed: 1, seconds: 0.1, large: 3))
        #expect(!wants(2, listed: 1, seconds: 0.1, large: 1))
        #expect(!wants(2, listed: 2, seconds: 0.02, large: 3))  // 10 ms a folder: 30 ms left, 40 ms of logins
        #expect(wants(2, listed: 1, seconds: 0.09, large: 3))
        #expect(!wants(2, listed: 0, seconds: 0, large: 4))
        #expect(!wants(2, listed: 7, seconds: 0.7, large: 1, left: 1))
    }
}
