import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue 26, Gmail mode, end to end: mo-sync against the Gmail-model server (`GmailModel`, which follows
/// Google's published behaviour), with real messages from the shared lkml corpus and a realistic label
/// spread. Each message is downloaded once and stored once, archived mail arrives, every web change
/// arrives, and every local action becomes the right label change.
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
        init(_ count: Int = 60) throws {
            model = GmailModel(GmailModeTests.spread(try GmailModeTests.corpus(count)))
            let m = model
            let server = try ScriptedIMAPServer(greeting: GmailModel.greeting, script: { m.answer($0) })
            let dir = try TemporaryDirectory("mo-gmail-index")
            index = dir
            run = try ScriptedRun(server, account: "[account.t.sync]\nconnections = 1", general: "index-dir = \"\(dir.path)/index\"")
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
        /// The message of the model whose body has this Message-ID line.
        func message(containing text: String) -> GmailModel.Message? {
            model.messages.first { String(decoding: $0.body, as: UTF8.self).contains(text) }
        }
    }

    static func messageID(_ body: [UInt8]) -> String {
        let text = String(decoding: body, as: UTF8.self)
        let line = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("message-id:") } ?? ""
        return String(line.dropFirst("message-id:".count)).trimmingCharacters(in: .whitespaces)
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
}
