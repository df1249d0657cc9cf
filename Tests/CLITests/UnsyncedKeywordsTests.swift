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

    /// A server keyword beyond the 26 letters a folder can hold stays on the server and is recorded.
    @Test func keywordBeyondTwentySixIsRecorded() throws {
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
        let recorded = try readWholeFile(run.stateDirectory + "/t/unsynced-keywords").get()
        #expect(
            String(decoding: recorded, as: UTF8.self)
                == "INBOX\tk27\tthe folder already holds 26 keywords, the most a Maildir folder can\n")
        let status = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync", "status", "--config", run.config])
        #expect(
            status.stdoutString == "t: INBOX: keyword k27 not synced: the folder already holds 26 keywords, the most a Maildir folder can\n"
        )
    }

    /// A server that sends 9,000 keywords on one message gets a bounded note: the count, the first names,
    /// and how many more (all of them are recorded for `mo-sync status`).
    @Test func thousandsOfKeywordsMakeABoundedNote() throws {
        let many = (1...9000).map { "k" + String(100_000 + $0) }
        let server = try ScriptedIMAPServer(mailboxes: [
            .init("INBOX", messages: [MailStore.message(1, subject: "many", flags: many.joined(separator: " "))])
        ])
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString.prefix(500))")
        let note = (r.stdoutString + r.stderrString).split(separator: "\n").first { $0.contains("beyond the 26") } ?? ""
        #expect(
            note.hasSuffix(
                "8974 keyword(s) beyond the 26 a Maildir folder can hold stay on the server: k100027 k100028 k100029 k100030 k100031 k100032 k100033 k100034 k100035 k100036 and 8964 more"
            ), "\(note.prefix(300))")
        let recorded = try readWholeFile(run.stateDirectory + "/t/unsynced-keywords").get()
        #expect(recorded.split(separator: UInt8(ascii: "\n")).count == 8974)
    }
}
