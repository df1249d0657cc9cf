import Foundation
import Synchronization
import Testing
import MoCore
import MoTestSupport

/// Issue 26, Gmail mode, end to end: mo-sync against the Gmail-model server (`GmailModel`, which follows
/// Google's published behaviour), with real messages from the shared lkml corpus and a realistic label
/// spread. Each message is downloaded once and stored once, archived mail arrives, every web change
/// arrives, and every local action becomes the right label change.
/// Closes the connection at the k-th command a server sees while armed (a network cut), and counts them.
final class CutGate: Sendable {
    private let state = Mutex<(armed: Bool, seen: Int, at: Int)>((false, 0, 0))
    func arm(at k: Int) { state.withLock { $0 = (true, 0, k) } }
    /// Disarms; returns the commands seen while armed.
    func disarm() -> Int {
        state.withLock { s in
            s.armed = false; return s.seen
        }
    }
    func cutsHere() -> Bool {
        state.withLock { s in
            guard s.armed else { return false }
            s.seen += 1
            return s.seen == s.at
        }
    }
}

@Suite(.serialized) struct GmailModeTests {
    /// Real messages (wire form), from ../shared/corpora/notmuch-test/lkml.
    static func corpus(_ count: Int) throws -> [[UInt8]] {
        let dir = TestPaths.corpus("notmuch-test/lkml/cur")
        var seen = Set<String>(), out: [[UInt8]] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: dir).sorted() where out.count < count {
            let text = try String(contentsOfFile: dir + "/" + name, encoding: .isoLatin1)
            let wire = Array(text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n").utf8)
            // The corpus holds some messages twice (two deliveries): each Message-ID once here.
            if seen.insert(GmailModeTests.messageID(wire)).inserted { out.append(wire) }
        }
        return out
    }

    /// A label spread like a real account's: a third in the inbox, a few sent, most archived; user labels
    /// on many (some two), some starred or important; one in Trash and one in Spam (not shown).
    static func spread(_ bodies: [[UInt8]]) -> [(labels: Set<String>, flags: Set<String>, body: [UInt8])] {
        bodies.enumerated().map { i, body in
            var labels: Set<String> = []
            var flags: Set<String> = i % 4 == 0 ? [] : ["\\Seen"]
            if i % 3 == 0 { labels.insert("\\Inbox") }
            if i % 10 == 1 { labels.insert("\\Sent") }
            if i % 5 == 2 { labels.insert("Lists/lkml") }
            if i % 7 == 3 { labels.insert("work") }
            if i % 14 == 3 { labels.insert("travel plans") }
            if i % 6 == 0 { labels.insert("\\Important") }
            if i % 8 == 5 { flags.insert("\\Flagged") }
            if i == bodies.count - 1 { labels = ["\\Trash"] }
            if i == bodies.count - 2 { labels = ["\\Spam"] }
            return (labels, flags, body)
        }
    }

    struct Account {
        let model: GmailModel
        let run: ScriptedRun
        let index: TemporaryDirectory
        /// `cut`: when armed, the connection is closed at its command instead of answered (a network cut).
        init(_ count: Int = 60, sync: String = "", cut: CutGate? = nil) throws {
            model = GmailModel(GmailModeTests.spread(try GmailModeTests.corpus(count)))
            let m = model
            let server = try ScriptedIMAPServer(
                greeting: GmailModel.greeting, script: { cut?.cutsHere() == true ? [.close] : m.answer($0) })
            let dir = try TemporaryDirectory("mo-gmail-index")
            index = dir
            run = try ScriptedRun(
                server, account: "[account.t.sync]\nconnections = 1\n" + sync, general: "index-dir = \"\(dir.path)/index\"")
        }
        func sync() throws -> ChildProcess.Result {
            let r = try run.sync()
            #expect(r.status == 0, "\(r.stderrString)")
            return r
        }
        /// mo-index's answer (the index updated first).
        func count(_ query: String) throws -> Int {
            _ = try ChildProcess.run([TestPaths.binDirectory + "/mo-index", "--config", run.config, "update"])
            let r = try ChildProcess.run([TestPaths.binDirectory + "/mo-index", "--config", run.config, "count", query])
            return Int(r.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        func files(_ view: String) throws -> [String] { (try? run.files(view)) ?? [] }
        /// mo-sync-check's verdict (its Gmail mode: All Mail against the four folders).
        func check() throws -> ChildProcess.Result {
            try ChildProcess.run([TestPaths.binDirectory + "/mo-sync-check", "--config", run.config])
        }
        /// The message of the model whose body has this Message-ID line.
        func message(containing text: String) -> GmailModel.Message? {
            model.messages.first { String(decoding: $0.body, as: UTF8.self).contains(text) }
        }
    }

    static func messageID(_ body: [UInt8]) -> String {
        // By bytes: "\r\n" is one Character, so a String split at "\n" would miss it.
        let lines = body.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        let line = lines.first { $0.lowercased().hasPrefix("message-id:") } ?? ""
        return String(line.dropFirst("message-id:".count)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func eachMessageOnceInTheViewsWithLabelsAsTags() throws {
        let a = try Account()
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let shown = a.model.messages.filter { !$0.labels.contains("\\Trash") && !$0.labels.contains("\\Spam") }
        // Downloaded once each, never Trash or Spam.
        #expect(a.model.bodyDownloads.count == shown.count)
        #expect(a.model.bodyDownloads.values.allSatisfy { $0 == 1 })
        let inbox = shown.filter { $0.labels.contains("\\Inbox") }
        let sent = shown.filter { $0.labels.contains("\\Sent") && !$0.labels.contains("\\Inbox") }
        #expect(try a.files("INBOX").count == inbox.count)
        #expect(try a.files("Sent").count == sent.count)
        #expect(try a.files("Archive").count == shown.count - inbox.count - sent.count)  // archived mail is here
        #expect(try a.files("Drafts").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: a.run.maildir + "/[Gmail]"))
        // Labels as tags, `\Starred` as the flagged letter, `\Important` as `important`.
        #expect(try a.count("tag:work") == shown.filter { $0.labels.contains("work") }.count)
        #expect(try a.count("tag:Lists/lkml") == shown.filter { $0.labels.contains("Lists/lkml") }.count)
        #expect(try a.count("tag:\"travel plans\"") == shown.filter { $0.labels.contains("travel plans") }.count)
        #expect(try a.count("tag:important") == shown.filter { $0.labels.contains("\\Important") }.count)
        #expect(try a.count("tag:flagged") == shown.filter { $0.flags.contains("\\Flagged") }.count)
        #expect(try a.count("tag:sent") == shown.filter { $0.labels.contains("\\Sent") && $0.labels.contains("\\Inbox") }.count)

        // A run with no change downloads nothing and changes nothing.
        let before = a.model.bodyDownloads
        _ = try a.sync()
        #expect(a.model.bodyDownloads == before)
        #expect(try a.files("INBOX").count == inbox.count)

        // The checker agrees, and sees a message missing from its folder.
        let checked = try a.check()
        #expect(checked.status == 0, "\(checked.stdoutString) \(checked.stderrString)")
        let gone = try #require(try a.files("Archive").first)
        #expect(unlink(a.run.maildir + "/Archive/" + gone) == 0)
        let broken = try a.check()
        #expect(
            broken.status != 0 && (broken.stdoutString + broken.stderrString).contains("1× only on the server"), "\(broken.stdoutString)")
    }

    @Test func webChangesArrive() throws {
        let a = try Account()
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let inbox = a.model.messages.filter { $0.labels.contains("\\Inbox") }
        let archived = a.model.messages.filter { $0.labels.isEmpty }
        let (archive, star, read, label, delete, back) = (inbox[0].id, inbox[1].id, inbox[2].id, inbox[3].id, inbox[4].id, archived[0].id)
        let byID = { (id: UInt64) in "id:" + Self.messageID(a.model.messages.first { $0.id == id }!.body).dropFirst().dropLast() }
        let inboxCount = try a.files("INBOX").count, archiveCount = try a.files("Archive").count
        a.model.webChange { m in
            m[archive]!.labels.remove("\\Inbox")
            m[star]!.flags.insert("\\Flagged")
            m[read]!.flags.insert("\\Seen")
            m[label]!.labels.insert("receipts")
            m[delete]!.labels = ["\\Trash"]
            m[back]!.labels.insert("\\Inbox")
        }
        let downloads = a.model.bodyDownloads
        _ = try a.sync()
        // Archived and un-archived: moved between the views, not downloaded again.
        #expect(a.model.bodyDownloads == downloads)
        #expect(try a.files("INBOX").count == inboxCount - 2 + 1)
        #expect(try a.files("Archive").count == archiveCount + 1 - 1)
        #expect(try a.count("tag:receipts") == 1)
        #expect(try a.count(byID(star) + " and tag:flagged") == 1)
        #expect(try a.count(byID(read) + " and not tag:unread") == 1)
        #expect(try a.count(byID(delete)) == 0)
        #expect(try a.count(byID(archive) + " and folder:t/Archive") == 1)
        #expect(try a.count(byID(back) + " and folder:t/INBOX") == 1)
    }

    @Test func localActionsBecomeLabelChanges() throws {
        let a = try Account()
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let root = a.run.maildir
        /// The local file of a model message, as `VIEW/cur/NAME`.
        func file(_ id: UInt64) throws -> String {
            let wanted = Self.messageID(a.model.messages.first { $0.id == id }!.body)
            for view in ["INBOX", "Sent", "Archive"] {
                for f in try a.files(view) {
                    let body = try String(contentsOfFile: root + "/" + view + "/" + f, encoding: .isoLatin1)
                    if Self.messageID(Array(body.utf8)) == wanted { return view + "/" + f }
                }
            }
            throw GenericError(.data, "no local file for \(wanted)")
        }
        func id(_ id: UInt64) -> String { "id:" + Self.messageID(a.model.messages.first { $0.id == id }!.body).dropFirst().dropLast() }
        let inbox = a.model.messages.filter { $0.labels.contains("\\Inbox") && !$0.labels.contains("\\Sent") }
        let archived = a.model.messages.filter { $0.labels.isEmpty }
        let lkml = a.model.messages.first { $0.labels.contains("Lists/lkml") }!
        let (toArchive, toInbox, toFlag, toRead, toDelete) = (inbox[0].id, archived[0].id, archived[1].id, inbox[1].id, inbox[2].id)
        // neomutt's actions on the Maildir: save to another folder (a rename keeping the name), flag, read, delete.
        func mv(_ from: String, _ to: String) { #expect(rename(root + "/" + from, root + "/" + to) == 0, "\(from) → \(to)") }
        let a1 = try file(toArchive)
        mv(a1, "Archive/cur/" + a1.split(separator: "/").last!)
        let i1 = try file(toInbox)
        mv(i1, "INBOX/cur/" + i1.split(separator: "/").last!)
        /// The name with a flag letter added, as neomutt renames it (letters in ASCII order).
        func adding(_ letter: Character, _ path: String) -> String {
            let parts = path.components(separatedBy: ":2,")
            guard parts.count == 2 else { return path.replacingOccurrences(of: "/new/", with: "/cur/") + ":2," + String(letter) }
            return parts[0] + ":2," + String(Set(parts[1] + String(letter)).sorted())
        }
        let f1 = try file(toFlag)
        mv(f1, adding("F", f1))
        let r1 = try file(toRead)
        mv(r1, adding("S", r1))
        #expect(unlink(root + "/" + (try file(toDelete))) == 0)
        // Tags from the shell.
        let tagger = [TestPaths.binDirectory + "/mo-index", "--config", a.run.config, "tag"]
        _ = try a.count("*")  // the index up to date
        #expect(try ChildProcess.run(tagger + ["+work", "+important", "--", id(toRead)]).status == 0)
        #expect(try ChildProcess.run(tagger + ["-Lists/lkml", "--", id(lkml.id)]).status == 0)
        // The triage shorthands: @archive is the Archive folder, @trash a deletion (Gmail's Trash).
        let mover = [TestPaths.binDirectory + "/mo-index", "--config", a.run.config, "move"]
        let (shellArchive, shellTrash) = (inbox[3].id, inbox[4].id)
        let moved = try ChildProcess.run(mover + [id(shellArchive), "@archive"])
        #expect(moved.status == 0, "\(moved.stderrString)")
        #expect(try ChildProcess.run(mover + [id(shellTrash), "@trash"]).status == 0)
        let junk = try ChildProcess.run(mover + [id(inbox[5].id), "@junk"])
        #expect(junk.status != 0 && junk.stderrString.contains("Gmail mode"), "\(junk.stderrString)")
        let downloads = a.model.bodyDownloads
        _ = try a.sync()

        let after = Dictionary(uniqueKeysWithValues: a.model.messages.map { ($0.id, $0) })
        #expect(after[toArchive]?.labels.contains("\\Inbox") == false)  // archived
        #expect(after[toInbox]?.labels.contains("\\Inbox") == true)
        #expect(after[toFlag]?.flags.contains("\\Flagged") == true)  // starred
        #expect(after[toRead]?.flags.contains("\\Seen") == true)
        #expect(after[toDelete]?.labels.contains("\\Trash") == true)  // in Trash, not erased
        #expect(after[toRead]?.labels.isSuperset(of: ["work", "\\Important"]) == true)
        #expect(after[lkml.id]?.labels.contains("Lists/lkml") == false)
        #expect(after[shellArchive]?.labels.contains("\\Inbox") == false)
        #expect(after[shellTrash]?.labels.contains("\\Trash") == true)
        #expect(after.count == a.model.messages.count)  // nothing erased
        #expect(a.model.bodyDownloads == downloads)  // nothing downloaded again

        #expect(try a.check().status == 0)  // (it reads every body: counted as downloads from here)
        // The next run finds both sides agreeing: nothing moves, nothing is transferred.
        let labels = a.model.messages.map(\.labels), checked = a.model.bodyDownloads
        let r = try a.sync()
        #expect(a.model.messages.map(\.labels) == labels)
        #expect(a.model.bodyDownloads == checked, "\(r.stderrString)")
        #expect(try file(toArchive).hasPrefix("Archive/") && file(toInbox).hasPrefix("INBOX/"))
    }

    @Test func newLocalMessagesAreUploadedOnceWithTheirLabels() throws {
        let a = try Account(12)
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let root = a.run.maildir
        for (view, name) in [("INBOX", "new-inbox"), ("Archive", "new-archive")] {
            let text = "From: me@example.com\nSubject: \(name)\nMessage-ID: <\(name)@example.com>\n\nHello.\n"
            try writePrivateFile(root + "/" + view + "/tmp/\(name).mo", text)
            #expect(rename(root + "/" + view + "/tmp/\(name).mo", root + "/" + view + "/new/\(name).mo") == 0)
        }
        let count = a.model.messages.count
        _ = try a.sync()
        #expect(a.model.messages.count == count + 2)
        let inbox = a.model.messages.first { String(decoding: $0.body, as: UTF8.self).contains("new-inbox@") }
        let archive = a.model.messages.first { String(decoding: $0.body, as: UTF8.self).contains("new-archive@") }
        #expect(inbox?.labels == ["\\Inbox"])
        #expect(archive?.labels == [])
        _ = try a.sync()
        #expect(a.model.messages.count == count + 2)  // uploaded once
        #expect(try a.files("INBOX").filter { $0.contains("new-inbox") }.count == 1)
        #expect(a.model.bodyDownloads.values.allSatisfy { $0 == 1 })
    }

    @Test func theDailyAllowanceStopsAndResumesWithNothingTwice() throws {
        let model = GmailModel(Self.spread(try Self.corpus(40)))
        let server = try ScriptedIMAPServer(greeting: GmailModel.greeting, script: { model.answer($0) })
        let run = try ScriptedRun(server, account: "[account.t.sync]\ndaily-download = \"40K\"")
        defer { run.remove() }
        let shown = model.messages.filter { !$0.labels.contains("\\Trash") && !$0.labels.contains("\\Spam") }.count
        var files = 0, days = 0
        while files < shown && days < 20 {
            days += 1
            let r = try run.sync()
            let now = try ["INBOX", "Sent", "Archive"].reduce(0) { $0 + ((try? run.files($1).count) ?? 0) }
            #expect(now > files, "day \(days): \(r.stderrString)")
            if now < shown {
                #expect(r.status == 75 && r.stderrString.contains("daily download allowance"), "day \(days): \(r.stderrString)")
            } else {
                #expect(r.status == 0, "\(r.stderrString)")
            }
            files = now
            unlink(run.stateDirectory + "/t/downloads")  // a day passes
        }
        #expect(days > 2 && files == shown)
        #expect(model.bodyDownloads.count == shown && model.bodyDownloads.values.allSatisfy { $0 == 1 })
    }

    @Test func aDryRunChangesNothing() throws {
        let a = try Account(12)
        defer { a.run.remove(); a.index.remove() }
        let r = try a.run.sync(["--dry-run"])
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(r.stdoutString.contains("INBOX: fetch") || r.stderrString.contains("INBOX: fetch"), "\(r.stdoutString) \(r.stderrString)")
        #expect(a.model.bodyDownloads.isEmpty)
        #expect(access(a.run.stateDirectory + "/t/gmail-mode", F_OK) != 0)
        _ = try a.sync()
        #expect(access(a.run.stateDirectory + "/t/gmail-mode", F_OK) == 0)
    }

    @Test func anAccountSyncedFolderByFolderStaysSoUntilTheConfigSaysOn() throws {
        let model = GmailModel(Self.spread(try Self.corpus(12)))
        let server = try ScriptedIMAPServer(greeting: GmailModel.greeting, script: { model.answer($0) })
        let folders = try ScriptedRun(server, account: "[account.t.sync]\ngmail-mode = \"off\"")
        defer { folders.remove() }
        #expect(try folders.sync().status == 0)
        #expect(try folders.files("[Gmail]/All Mail").count > 0)  // every label a folder
        // Back to the default: still folder by folder, with a note.
        var config = try String(contentsOfFile: folders.config, encoding: .utf8)
        config = config.replacingOccurrences(of: "gmail-mode = \"off\"", with: "")
        try writePrivateFile(folders.config, config)
        let r = try folders.sync()
        #expect(
            r.status == 0 && r.stderrString.contains("Gmail mode is off: this account was synced folder by folder before"),
            "\(r.stderrString)")
        let archive = (try? folders.files("Archive")) ?? []
        #expect(archive.isEmpty)
        // Switched on: the views are synced, INBOX's messages paired again (not downloaded), and the old label
        // folders named as left alone.
        config = config.replacingOccurrences(of: "[account.t.sync]\n", with: "[account.t.sync]\ngmail-mode = \"on\"\n")
        try writePrivateFile(folders.config, config)
        let inboxDownloads = model.messages.filter { $0.labels.contains("\\Inbox") }.map { model.bodyDownloads[$0.id] ?? 0 }
        let on = try folders.sync()
        #expect(
            on.status == 0 && on.stderrString.contains("left alone in the Maildir: Lists/lkml, [Gmail]/All Mail"),
            "\(on.stderrString) \(on.stdoutString)")
        #expect(model.messages.filter { $0.labels.contains("\\Inbox") }.map { model.bodyDownloads[$0.id] ?? 0 } == inboxDownloads)
        #expect(try ChildProcess.run([TestPaths.binDirectory + "/mo-sync-check", "--config", folders.config]).status == 0)
    }

    /// The commands of a run with nothing changed, and of one with a few web changes, do not grow with the
    /// mailbox: one SELECT of All Mail when All Mail is as the last run left it; else four SEARCHes more, and
    /// a CHANGEDSINCE FETCH.
    @Test func aRunCostsTheSameCommandsWhateverTheMailboxSize() throws {
        func commands(_ count: Int) throws -> (noop: [String], change: [String]) {
            let a = try Account(count)
            defer { a.run.remove(); a.index.remove() }
            _ = try a.sync()
            func run() throws -> [String] {
                let before = a.run.server.received.count
                _ = try a.sync()
                let sent = String(decoding: a.run.server.received[before...], as: UTF8.self)
                return sent.split(separator: "\r\n").map { $0.split(separator: " ").dropFirst().prefix(2).joined(separator: " ") }
            }
            let noop = try run()
            let some = a.model.messages.filter { $0.labels.contains("\\Inbox") }.prefix(2).map(\.id)
            a.model.webChange { m in
                m[some[0]]!.labels.remove("\\Inbox")
                m[some[1]]!.flags.insert("\\Flagged")
            }
            return (noop, try run())
        }
        let small = try commands(12), large = try commands(170)
        #expect(small.noop == large.noop && small.change == large.change, "\(small) \(large)")
        // Nothing changed since the mark the last run left: the SELECT of All Mail says so, nothing else is asked.
        #expect(large.noop.filter { $0.hasPrefix("SELECT") }.count == 1 && !large.noop.contains { $0.hasPrefix("UID ") }, "\(large.noop)")
        #expect(large.change.filter { $0.hasPrefix("UID SEARCH") }.count == 4, "\(large.change)")
        #expect(large.change.filter { $0.hasPrefix("UID FETCH") }.count == 1, "\(large.change)")
    }

    /// A view with more labels than the 26 keyword letters: the rest are kept in `mo-keywords`, and travel
    /// both ways as labels too.
    @Test func moreLabelsThanLettersTravelBothWays() throws {
        let labels = Set((1...40).map { "label\($0)" })
        let bodies = try Self.corpus(3)
        let model = GmailModel([(labels.union(["\\Inbox"]), ["\\Seen"], bodies[0]), (["\\Inbox"], [], bodies[1]), ([], [], bodies[2])])
        let server = try ScriptedIMAPServer(greeting: GmailModel.greeting, script: { model.answer($0) })
        let dir = try TemporaryDirectory("mo-gmail-index")
        let run = try ScriptedRun(server, general: "index-dir = \"\(dir.path)/index\"")
        defer { run.remove(); dir.remove() }
        #expect(try run.sync().status == 0)
        let index = [TestPaths.binDirectory + "/mo-index", "--config", run.config]
        _ = try ChildProcess.run(index + ["update"])
        for label in ["label1", "label33", "label40"] {
            #expect(try ChildProcess.run(index + ["count", "tag:" + label]).stdoutString.hasPrefix("1"), "\(label)")
        }
        let id = "id:" + Self.messageID(bodies[1]).dropFirst().dropLast()
        let tags = (41...70).map { "+extra\($0)" }
        #expect(try ChildProcess.run(index + ["tag"] + tags + ["--", id]).status == 0)
        #expect(try run.sync().status == 0)
        let second = try #require(model.messages.first { GmailModeTests.messageID($0.body) == Self.messageID(bodies[1]) })
        #expect(second.labels == Set((41...70).map { "extra\($0)" }).union(["\\Inbox"]), "\(second.labels.sorted())")
        #expect(try ChildProcess.run([TestPaths.binDirectory + "/mo-sync-check", "--config", run.config]).status == 0)
    }

    @Test func withGmailDeleteArchiveADeletionInInboxOnlyArchives() throws {
        let a = try Account(12, sync: "gmail-delete = \"archive\"")
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let inbox = try a.files("INBOX"), archive = try a.files("Archive")
        let gone = try #require(inbox.first)
        let wanted = Self.messageID(Array(try Data(contentsOf: URL(fileURLWithPath: a.run.maildir + "/INBOX/" + gone))))
        #expect(unlink(a.run.maildir + "/INBOX/" + gone) == 0)
        _ = try a.sync()
        let m = try #require(a.model.messages.first { Self.messageID($0.body) == wanted })
        #expect(!m.labels.contains("\\Inbox") && !m.labels.contains("\\Trash"), "\(m.labels)")
        _ = try a.sync()  // it comes back in Archive
        #expect(try a.files("INBOX").count == inbox.count - 1 && a.files("Archive").count == archive.count + 1)
        #expect(try a.check().status == 0)
    }

    /// A move between views is a label change, whatever the deletion policy: with `delete = "none"` a web
    /// archive still moves the file (no second copy), and a local move still changes the labels.
    @Test func movesFollowLabelsWhateverTheDeletionPolicy() throws {
        let a = try Account(12, sync: "delete = \"none\"")
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let inbox = try a.files("INBOX"), archive = try a.files("Archive")
        let archived = try #require(a.model.messages.first { $0.labels.contains("\\Inbox") })
        a.model.webChange { $0[archived.id]!.labels.remove("\\Inbox") }
        let downloads = a.model.bodyDownloads
        _ = try a.sync()
        #expect(try a.files("INBOX").count == inbox.count - 1 && a.files("Archive").count == archive.count + 1)
        #expect(a.model.bodyDownloads == downloads)
        let back = try #require(try a.files("Archive").first)
        let wanted = Self.messageID(Array(try Data(contentsOf: URL(fileURLWithPath: a.run.maildir + "/Archive/" + back))))
        #expect(rename(a.run.maildir + "/Archive/" + back, a.run.maildir + "/INBOX/" + back) == 0)
        _ = try a.sync()
        #expect(a.model.messages.first { Self.messageID($0.body) == wanted }?.labels.contains("\\Inbox") == true)
        #expect(try a.check().status == 0)
    }

    /// The views are one mailbox: when one cannot be listed, none is finished (a message that left it may be
    /// new in another), and the next run converges.
    @Test func aViewThatCannotBeListedHoldsBackTheOthers() throws {
        let a = try Account(12)
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let sentCur = a.run.maildir + "/Sent/cur"
        let sentMessage = try #require(
            a.model.messages.first { $0.labels == ["\\Sent"] || $0.labels.contains("\\Sent") && !$0.labels.contains("\\Inbox") })
        #expect(rename(sentCur, sentCur + ".away") == 0)
        try writePrivateFile(sentCur, "not a directory")
        a.model.webChange { $0[sentMessage.id]!.labels.remove("\\Sent") }  // Sent → Archive
        let downloads = a.model.bodyDownloads, archive = try a.files("Archive")
        let r = try a.run.sync()
        #expect(r.status != 0 && r.stderrString.contains("none was finished this run"), "\(r.stderrString)")
        let archiveAfter = try a.files("Archive")
        #expect(a.model.bodyDownloads == downloads && archiveAfter == archive)
        #expect(unlink(sentCur) == 0 && rename(sentCur + ".away", sentCur) == 0)
        _ = try a.sync()
        let archiveLater = try a.files("Archive")
        #expect(a.model.bodyDownloads == downloads && archiveLater.count == archive.count + 1)
        #expect(try a.check().status == 0)
    }

    /// The T letter (neomutt's "deleted", before it expunges) is not stored on Gmail: it would expunge the
    /// message past Trash. The file's removal is the deletion.
    @Test func theDeletedLetterIsNotStored() throws {
        let a = try Account(12)
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let file = try #require(try a.files("INBOX").first { $0.hasPrefix("cur/") })
        let wanted = Self.messageID(Array(try Data(contentsOf: URL(fileURLWithPath: a.run.maildir + "/INBOX/" + file))))
        let parts = file.components(separatedBy: ":2,")
        #expect(
            rename(a.run.maildir + "/INBOX/" + file, a.run.maildir + "/INBOX/" + parts[0] + ":2," + String(Set(parts[1] + "T").sorted()))
                == 0)
        _ = try a.sync()
        let m = try #require(a.model.messages.first { Self.messageID($0.body) == wanted })
        #expect(!m.flags.contains("\\Deleted") && m.labels.contains("\\Inbox"), "\(m.flags) \(m.labels)")
        // The letter stays on the file, run after run (a web change to the message does not take it away).
        a.model.webChange { $0[m.id]!.flags.insert("\\Flagged") }
        _ = try a.sync()
        _ = try a.sync()
        let now = try a.files("INBOX").first { $0.hasPrefix("cur/" + parts[0].dropFirst(4)) }
        let letters = now.map { String($0.split(separator: ",").last ?? "") } ?? ""
        #expect(letters.contains("F") && letters.contains("T"), "\(now ?? "gone")")
    }

    /// `mo-sync --watch` in Gmail mode: the listener IDLEs on INBOX, and mail that arrives there is in the
    /// Maildir within seconds (the model sends `* N EXISTS` to idling clients, as IDLE does).
    @Test func watchBringsNewInboxMailWithinSeconds() throws {
        let a = try Account(12)
        defer { a.run.remove(); a.index.remove() }
        a.model.attach(a.run.server)
        _ = try a.sync()
        let log = a.run.dir.path + "/watch.log"
        let watcher = try BackgroundProcess([
            "/bin/sh", "-c", "exec \"$0\" --config \"$1\" --watch --verbose >>\"$2\" 2>&1",
            TestPaths.binDirectory + "/mo-sync", a.run.config, log
        ])
        defer { watcher.kill() }
        func logText() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        func wait(_ seconds: Double, _ condition: () throws -> Bool) -> Bool {
            let end = monotonicSeconds() + seconds
            while monotonicSeconds() < end {
                if (try? condition()) == true { return true }
                usleep(50_000)
            }
            return false
        }
        #expect(wait(20) { logText().contains("listening with") }, "\(logText())")
        usleep(500_000)
        let before = try a.files("INBOX").count
        a.model.deliver(
            labels: ["\\Inbox"],
            body: Array("From: a@example.com\r\nSubject: pushed\r\nMessage-ID: <pushed@gmail.test>\r\n\r\nHi.\r\n".utf8))
        #expect(wait(8) { try a.files("INBOX").count == before + 1 }, "\(logText())")
    }

    /// A view's folder removed by hand deletes nothing on Gmail (folder by folder that would delete the
    /// mailbox; here it would trash the view's messages): the run stops with a line saying so, and with the
    /// view's state removed as it says, they are downloaded again.
    @Test func aViewFolderRemovedByHandDeletesNothing() throws {
        let a = try Account(12)
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let archive = try a.files("Archive").count
        let labels = a.model.messages.map(\.labels)
        #expect(try ChildProcess.run(["rm", "-rf", a.run.maildir + "/Archive"]).status == 0)
        let r = try a.run.sync()
        #expect(r.status != 0 && r.stderrString.contains("Archive is missing although it was synced"), "\(r.stderrString)")
        #expect(a.model.messages.map(\.labels) == labels)
        // The way on the line names: the view's state removed, it is downloaded again.
        #expect(try ChildProcess.run(["sh", "-c", "rm -f '\(a.run.stateDirectory)/t/~gmail=Archive'.*"]).status == 0)
        let forced = try a.run.sync()
        #expect(forced.status == 0, "\(forced.stderrString)")
        #expect(a.model.messages.map(\.labels) == labels)
        #expect(try a.files("Archive").count == archive)
        #expect(try a.check().status == 0)
    }

    /// A label change Gmail refuses (here: `\Sent`, a label Gmail may keep to itself) does not stop the
    /// view: the run notes it, and the next one shows the message where Gmail keeps it.
    @Test func aRefusedLabelChangeIsNotedAndUndoneNotStuck() throws {
        let model = GmailModel(Self.spread(try Self.corpus(12)))
        let server = try ScriptedIMAPServer(
            greeting: GmailModel.greeting,
            script: { r in
                if r.verb == "UID STORE", r.argumentText.contains("X-GM-LABELS"), r.argumentText.contains("\\Sent") {
                    return [.text("\(r.tag) NO Invalid label (Failure)\r\n")]
                }
                return model.answer(r)
            })
        let run = try ScriptedRun(server)
        defer { run.remove() }
        #expect(try run.sync().status == 0)
        let moved = try #require(try run.files("INBOX").first)
        #expect(rename(run.maildir + "/INBOX/" + moved, run.maildir + "/Sent/cur/" + (moved.split(separator: "/").last ?? "")) == 0)
        let r = try run.sync()
        #expect(r.status == 0 && r.stderrString.contains("Gmail refused a label change"), "\(r.stderrString)")
        #expect(try run.sync().status == 0)
        let name = String(moved.split(separator: "/").last!.split(separator: ":").first!)
        #expect(try run.files("INBOX").contains { $0.contains(name) } && !run.files("Sent").contains { $0.contains(name) })
        #expect(try ChildProcess.run([TestPaths.binDirectory + "/mo-sync-check", "--config", run.config]).status == 0)
    }
}
