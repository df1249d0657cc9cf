import Foundation
import Testing
import Maildir
import MoCore
import MoTestSupport
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17: keywords (tags) that cannot travel are kept where they are and recorded in
/// `<state>/<account>/unsynced-keywords`, which `mo-sync status` lists.
@Suite struct UnsyncedKeywordsTests {
    final class Switch: Sendable {
        let on = Mutex(false)
        var value: Bool { on.withLock { $0 } }
    }

    /// A local tag on a server whose PERMANENTFLAGS lack `\*`: never STOREd, never taken as removed (two
    /// runs keep the letter), recorded; once the server accepts new keywords it goes up and the record goes.
    @Test func refusedKeywordStaysLocalUntilTheServerAcceptsIt() throws {
        let acceptsNew = Switch()
        let server = try ScriptedIMAPServer(mailboxes: [
            .init(
                "INBOX",
                messages: [
                    MailStore.message(1, subject: "known", flags: "\\Seen $Known"),
                    MailStore.message(2, subject: "plain", flags: "\\Seen")
                ])
        ]) { r in
            guard r.verb == "SELECT" else { return nil }
            let extra = acceptsNew.value ? " \\*" : ""
            return [.text("* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft $Known\(extra))] ok\r\n"), .standard]
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let first = try run.sync()
        #expect(first.status == 0, "\(first.stderrString)")

        // Tag message 2 as a client would: a letter through the folder's table, then one rename.
        let inbox = MaildirFolder(path: run.maildir + "/INBOX")
        var keywords = try MaildirKeywords.load(folder: inbox.path)
        let plain = try #require(
            try run.files("INBOX").first { try MessageFile.contents(of: inbox.path + "/" + $0).contains(Array("plain".utf8)) })
        let name = try MaildirFilename(parsing: String(plain.split(separator: "/").last!))
        let change = MaildirTags.apply(add: ["project-x"], remove: [], to: name.flags, keywords: &keywords, vocabulary: TagVocabulary())
        try keywords.save(folder: inbox.path)
        let tagged = try inbox.setFlags(path: inbox.path + "/" + plain, flags: change.flags)
        let letter = try #require(keywords.letter(for: "project-x"))

        for _ in 0..<2 {
            let r = try run.sync()
            #expect(r.status == 0, "\(r.stderrString)")
        }
        #expect(!server.receivedText.contains("project-x"), "no STORE or APPEND of a refused keyword")
        #expect(server.store.mailboxes[0].messages[1].flags == "\\Seen")
        #expect(
            try MaildirFilename(parsing: String(tagged.split(separator: "/").last!)).flags.contains(letter),
            "the local tag survives runs that see the server without it")
        let recorded = try readWholeFile(run.stateDirectory + "/t/unsynced-keywords").get()
        #expect(
            String(decoding: recorded, as: UTF8.self)
                == "INBOX\tproject-x\tthe server does not accept new keywords in this folder (PERMANENTFLAGS without \\*)\n")
        let status = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "status", "--config", run.config])
        #expect(status.status == 0)
        #expect(
            status.stdoutString
                == "t: INBOX: keyword project-x not synced: the server does not accept new keywords in this folder (PERMANENTFLAGS without \\*)\n"
        )
        // mo-index reads the same file: the tag, where, and why.
        let env = ["XDG_CACHE_HOME": run.dir.path + "/cache"]
        let index = TestPaths.binDirectory + "/mo-index"
        #expect(try ChildProcess.run([index, "--config", run.config, "update", "--quiet"], environment: env).status == 0)
        let unsynced = try ChildProcess.run([index, "--config", run.config, "tags", "--unsynced"], environment: env)
        #expect(
            unsynced.stdoutString
                == "project-x\tt/INBOX: the server does not accept new keywords in this folder (PERMANENTFLAGS without \\*)\n",
            "\(unsynced.stderrString)")

        acceptsNew.on.withLock { $0 = true }
        let accepted = try run.sync()
        #expect(accepted.status == 0, "\(accepted.stderrString)")
        #expect(server.receivedText.contains("+FLAGS.SILENT (project-x)"))
        #expect(server.store.mailboxes[0].messages[1].flags.split(separator: " ").contains("project-x"))
        #expect(access(run.stateDirectory + "/t/unsynced-keywords", F_OK) != 0)
        let quiet = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "status", "--config", run.config])
        #expect(quiet.stdoutString.isEmpty)
    }

    /// Issue 26 item 4: a server keyword beyond the 26 letters a folder can hold arrives in the folder's
    /// `mo-keywords`; changed there, it goes back as a STORE; nothing is recorded as unsynced.
    @Test func keywordsBeyondTwentySixTravelBothWays() throws {
        let many = (1...27).map { "k" + ($0 < 10 ? "0" : "") + "\($0)" }
        let server = try ScriptedIMAPServer(mailboxes: [
            .init(
                "INBOX",
                messages: [
                    MailStore.message(1, subject: "many", flags: "\\Seen " + many.joined(separator: " "))
                ])
        ])
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(access(run.stateDirectory + "/t/unsynced-keywords", F_OK) != 0)
        let inbox = run.maildir + "/INBOX"
        var extra = try ExtraKeywords.load(folder: inbox)
        #expect(extra.byUnique.count == 1)
        let unique = try #require(extra.byUnique.keys.first)
        #expect(extra.keywords(of: unique) == ["k27"])
        let status = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "status", "--config", run.config])
        #expect(status.stdoutString.isEmpty)

        // Changed locally (as mo-index tag does): one removed, one added, both reach the server.
        extra.set(["k28"], for: unique)
        try extra.save(folder: inbox)
        // A dry run shows it and sends nothing.
        let sentBefore = server.receivedText.count
        let dry = try run.sync(["--dry-run"])
        #expect(dry.status == 0, "\(dry.stderrString)")
        #expect(
            dry.stdoutString.contains("INBOX: store +k28 on UID 1") && dry.stdoutString.contains("INBOX: store -k27 on UID 1"),
            "\(dry.stdoutString)")
        #expect(!server.receivedText.dropFirst(sentBefore).contains("STORE"))
        let pushed = try run.sync()
        #expect(pushed.status == 0, "\(pushed.stderrString)")
        #expect(server.receivedText.contains("+FLAGS.SILENT (k28)"))
        #expect(server.receivedText.contains("-FLAGS.SILENT (k27)"))
        let flags = server.store.mailboxes[0].messages[0].flags.split(separator: " ")
        #expect(flags.contains("k28") && !flags.contains("k27") && flags.contains("k26"))

        // Nothing changed since: no STORE.
        let before = server.receivedText.count
        let idle = try run.sync()
        #expect(idle.status == 0, "\(idle.stderrString)")
        #expect(!server.receivedText.dropFirst(before).contains("STORE"))
        #expect(try ExtraKeywords.load(folder: inbox).keywords(of: unique) == ["k28"])
    }

    /// A server with one INBOX message carrying k01…k27, synced once: k27 is in `mo-keywords`.
    static func syncedWithTwentySevenKeywords() throws -> (ScriptedIMAPServer, ScriptedRun) {
        let many = (1...27).map { "k" + ($0 < 10 ? "0" : "") + "\($0)" }
        let server = try ScriptedIMAPServer(mailboxes: [
            .init("INBOX", messages: [MailStore.message(1, subject: "many", flags: "\\Seen " + many.joined(separator: " "))])
        ])
        let run = try ScriptedRun(server)
        #expect(try run.sync().status == 0)
        return (server, run)
    }

    /// A keyword beyond the letters on a server whose PERMANENTFLAGS lack `\*`: kept in `mo-keywords`, never
    /// sent, recorded for `mo-sync status` with the reason; once the server accepts new keywords it goes up.
    @Test func aRefusedKeywordBeyondTheLettersStaysLocalAndIsReported() throws {
        let acceptsNew = Switch()
        let many = (1...27).map { "k" + ($0 < 10 ? "0" : "") + "\($0)" }
        let server = try ScriptedIMAPServer(mailboxes: [
            .init("INBOX", messages: [MailStore.message(1, subject: "many", flags: "\\Seen " + many.joined(separator: " "))])
        ]) { r in
            guard r.verb == "SELECT" else { return nil }
            let extra = acceptsNew.value ? " \\*" : ""
            return [.text("* OK [PERMANENTFLAGS (\\Seen \(many.joined(separator: " "))\(extra))] ok\r\n"), .standard]
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        #expect(try run.sync().status == 0)
        let inbox = run.maildir + "/INBOX"
        var extra = try ExtraKeywords.load(folder: inbox)
        let unique = try #require(extra.byUnique.keys.first)
        extra.set(["k27", "mine"], for: unique)
        try extra.save(folder: inbox)
        for _ in 0..<2 { #expect(try run.sync().status == 0) }
        #expect(!server.receivedText.contains("mine"))
        #expect(try ExtraKeywords.load(folder: inbox).keywords(of: unique) == ["k27", "mine"])
        let status = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "status", "--config", run.config])
        #expect(
            status.stdoutString
                == "t: INBOX: keyword mine not synced: the server does not accept new keywords in this folder (PERMANENTFLAGS without \\*)\n"
        )

        acceptsNew.on.withLock { $0 = true }
        #expect(try run.sync().status == 0)
        #expect(server.store.mailboxes[0].messages[0].flags.split(separator: " ").contains("mine"))
        #expect(access(run.stateDirectory + "/t/unsynced-keywords", F_OK) != 0)
    }

    /// A file moved to another folder on a server that cannot move it (no COPYUID: uploaded there, deleted
    /// here) keeps its keywords: its letters re-mapped to the new folder's table, its line along with it.
    @Test func aFileMovedWhereMovesCannotGoUpKeepsItsLine() throws {
        let many = (1...27).map { "k" + ($0 < 10 ? "0" : "") + "\($0)" }
        let server = try ScriptedIMAPServer(mailboxes: [
            .init("INBOX", messages: [MailStore.message(1, subject: "many", flags: "\\Seen " + many.joined(separator: " "))]),
            .init("Archive")
        ])
        let run = try ScriptedRun(server)
        defer { run.remove() }
        #expect(try run.sync().status == 0)
        let file = try #require(try run.files("INBOX").first)
        let name = String(file.split(separator: "/").last!)
        #expect(rename(run.maildir + "/INBOX/" + file, run.maildir + "/Archive/cur/" + name) == 0)
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        let archived = try #require(server.store.mailboxes.first { $0.name == Array("Archive".utf8) }?.messages.first)
        #expect(Set(archived.flags.split(separator: " ").map(String.init)).isSuperset(of: many), "\(archived.flags)")  // letters too
        #expect(try ExtraKeywords.load(folder: run.maildir + "/Archive").byUnique.values.first == ["k27"])
        #expect(try ExtraKeywords.load(folder: run.maildir + "/INBOX").isEmpty)
    }

    /// Upgrade: an earlier release left the 27th keyword on the server and said so in `unsynced-keywords`
    /// (no `mo-keywords`, no `.extra` base). The next run lists the folder whole once: the keyword comes
    /// into `mo-keywords`, nothing is downloaded again, and the line goes.
    @Test func keywordsAnEarlierReleaseLeftOnTheServerArrive() throws {
        let (server, run) = try Self.syncedWithTwentySevenKeywords()
        defer { run.remove() }
        let inbox = run.maildir + "/INBOX"
        // As an earlier release leaves it.
        unlink(inbox + "/mo-keywords")
        for name in try FileManager.default.contentsOfDirectory(atPath: run.stateDirectory + "/t") where name.hasSuffix(".extra") {
            unlink(run.stateDirectory + "/t/" + name)
        }
        try "INBOX\tk27\tthe folder already holds 26 keywords, the most a Maildir folder can\n".write(
            toFile: run.stateDirectory + "/t/unsynced-keywords", atomically: false, encoding: .utf8)
        let before = server.receivedText.count
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        let sent = String(server.receivedText.dropFirst(before))
        #expect(sent.contains("UID FETCH 1:* (UID FLAGS)") && !sent.contains("BODY"), "\(sent.prefix(400))")
        #expect(try ExtraKeywords.load(folder: inbox).byUnique.values.first == ["k27"])
        #expect(access(run.stateDirectory + "/t/unsynced-keywords", F_OK) != 0)
    }

    /// Killed at each of the merge's two crash points, in each direction, the next run converges: both
    /// sides hold the change, and a third run sends nothing (docs/sync-design.md, "Keywords beyond the 26
    /// letters").
    @Test(arguments: ["extra keywords: stored", "extra keywords: local written"])
    func killedInTheMergeConverges(_ step: String) throws {
        let (server, run) = try Self.syncedWithTwentySevenKeywords()
        defer { run.remove() }
        let inbox = run.maildir + "/INBOX"
        var extra = try ExtraKeywords.load(folder: inbox)
        let unique = try #require(extra.byUnique.keys.first)

        // Push (k27 → k28 here) and pull (k30 added on the server) in one run, killed at `step`.
        extra.set(["k28"], for: unique)
        try extra.save(folder: inbox)
        server.store.modify { $0[0].messages[0].flags += " k30" }
        let killed = try run.sync(env: ["MO_CRASH_AT": step])
        #expect(killed.status == 137, "\(killed.stderrString)")
        #expect(try run.sync().status == 0)
        let flags = Set(server.store.mailboxes[0].messages[0].flags.split(separator: " ").map(String.init))
        #expect(flags.isSuperset(of: ["k28", "k30"]) && !flags.contains("k27"), "\(flags)")
        #expect(try ExtraKeywords.load(folder: inbox).keywords(of: unique) == ["k28", "k30"])
        let before = server.receivedText.count
        #expect(try run.sync().status == 0)
        #expect(!server.receivedText.dropFirst(before).contains("STORE"))
        #expect(try ExtraKeywords.load(folder: inbox).keywords(of: unique) == ["k28", "k30"])
    }

    /// A keyword in `mo-keywords` that has a letter in the folder's table (a line carried from a full
    /// folder, or written before the table had room) is never read as removed: it moves onto the file's
    /// letters, and the server keeps it.
    @Test func aKeywordWithALetterIsNeverReadAsRemoved() throws {
        let server = try ScriptedIMAPServer(mailboxes: [
            .init(
                "INBOX",
                messages: [
                    MailStore.message(1, subject: "one", flags: "\\Seen proj"), MailStore.message(2, subject: "two", flags: "\\Seen")
                ])
        ])
        let run = try ScriptedRun(server)
        defer { run.remove() }
        #expect(try run.sync().status == 0)
        let inbox = run.maildir + "/INBOX"
        let two = try #require(try run.files("INBOX").first { !$0.hasSuffix("a") && !$0.contains(",Sa") })
        let unique = String(two.split(separator: "/").last!.split(separator: ":").first!)
        var extra = ExtraKeywords()
        extra.set(["proj"], for: unique)
        try extra.save(folder: inbox)
        for _ in 0..<3 { #expect(try run.sync().status == 0) }
        #expect(server.store.mailboxes[0].messages.allSatisfy { $0.flags.split(separator: " ").contains("proj") })
        #expect(!server.receivedText.contains("-FLAGS.SILENT (proj)"))
        let files = try run.files("INBOX")
        #expect(files.filter { $0.hasSuffix(",Sa") }.count == 2, "\(files)")
    }

    /// A server that sends 9,000 keywords on one message: every one beyond the 26 letters is kept in
    /// `mo-keywords`, none is reported as staying on the server, and the next run sends nothing back.
    @Test func thousandsOfKeywordsAreKept() throws {
        let many = (1...9000).map { "k" + String(100_000 + $0) }
        let server = try ScriptedIMAPServer(mailboxes: [
            .init("INBOX", messages: [MailStore.message(1, subject: "many", flags: many.joined(separator: " "))])
        ])
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString.prefix(500))")
        #expect(!(r.stdoutString + r.stderrString).contains("beyond the 26"))
        let extra = try ExtraKeywords.load(folder: run.maildir + "/INBOX")
        #expect(extra.byUnique.values.first?.count == 8974)
        let before = server.receivedText.count
        #expect(try run.sync().status == 0)
        #expect(!server.receivedText.dropFirst(before).contains("STORE"))
    }
}
