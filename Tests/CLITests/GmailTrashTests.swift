import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue 26: Trash and Spam in Gmail mode when `gmail-folders` asks for them. They are outside All Mail, with
/// UIDs of their own; a message that moves between them and the views (deleted or restored in the web
/// interface, a rename or `mo-index move @trash` here) moves as a file, paired by key one way and by
/// COPYUID or X-GM-MSGID the other, and is never downloaded again.
@Suite(.serialized) struct GmailTrashTests {
    typealias Account = GmailModeTests.Account

    /// The local file of a model message: `FOLDER/cur/NAME`, nil when none.
    static func file(of m: GmailModel.Message, in a: Account, folders: [String] = ["INBOX", "Sent", "Drafts", "Archive", "Trash", "Spam"])
        throws -> String?
    {
        let wanted = GmailModeTests.messageID(m.body)
        for folder in folders {
            for f in try a.files(folder) {
                let body = try String(contentsOfFile: a.run.maildir + "/" + folder + "/" + f, encoding: .isoLatin1)
                if GmailModeTests.messageID(Array(body.utf8)) == wanted { return folder + "/" + f }
            }
        }
        return nil
    }

    static func messages(_ a: Account, labelled label: String) -> [GmailModel.Message] {
        a.model.messages.filter { $0.labels.contains(label) }
    }

    @Test func trashAndSpamAreFoldersAndMovesNeverDownloadAgain() throws {
        let a = try Account(24, sync: "gmail-folders = [\"Trash\", \"Spam\"]")
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        // Every message once, Trash and Spam included, each in its folder.
        #expect(a.model.bodyDownloads.count == a.model.messages.count)
        #expect(a.model.bodyDownloads.values.allSatisfy { $0 == 1 })
        #expect(try a.files("Trash").count == Self.messages(a, labelled: "\\Trash").count)
        #expect(try a.files("Spam").count == Self.messages(a, labelled: "\\Spam").count)
        #expect(try a.check().status == 0)

        // Deleted in the web interface: the file moves from INBOX to Trash. Restored there: from Trash to INBOX.
        let deleted = try #require(a.model.messages.first { $0.labels.contains("\\Inbox") })
        let restored = try #require(Self.messages(a, labelled: "\\Trash").first)
        a.model.webChange {
            $0[deleted.id]!.labels.insert("\\Trash")
            $0[restored.id]!.labels = ["\\Inbox"]
        }
        var downloads = a.model.bodyDownloads
        _ = try a.sync()
        #expect(try Self.file(of: deleted, in: a)?.hasPrefix("Trash/") == true)
        #expect(try Self.file(of: restored, in: a)?.hasPrefix("INBOX/") == true)
        #expect(a.model.bodyDownloads == downloads, "\(a.model.bodyDownloads) \(downloads)")
        #expect(try a.check().status == 0)

        // Here: a rename INBOX → Trash (what mo-index move @trash does), and Spam → INBOX ("not spam").
        let trashed = try #require(a.model.messages.first { $0.labels.contains("\\Inbox") && !$0.labels.contains("\\Trash") })
        let notSpam = try #require(Self.messages(a, labelled: "\\Spam").first)
        downloads = a.model.bodyDownloads
        for (m, to) in [(trashed, "Trash"), (notSpam, "INBOX")] {
            let from = try #require(try Self.file(of: m, in: a))
            #expect(rename(a.run.maildir + "/" + from, a.run.maildir + "/" + to + "/cur/" + from.split(separator: "/").last!) == 0)
        }
        _ = try a.sync()
        let t = try #require(a.model.messages.first { $0.id == trashed.id })
        #expect(t.labels.contains("\\Trash"), "\(t.labels)")
        let n = try #require(a.model.messages.first { $0.id == notSpam.id })
        #expect(!n.labels.contains("\\Spam") && n.labels.contains("\\Inbox"), "\(n.labels)")
        #expect(a.model.bodyDownloads == downloads)
        #expect(a.model.messages.count == 24)  // nothing uploaded as a second copy
        // Nothing left to do: the next run changes nothing, and the checker agrees.
        let files = try ["INBOX", "Archive", "Trash", "Spam"].map { try a.files($0).sorted() }
        _ = try a.sync()
        let after = try ["INBOX", "Archive", "Trash", "Spam"].map { try a.files($0).sorted() }
        #expect(after == files, "\(zip(after, files).map { Set($0).symmetricDifference($1) })")
        #expect(a.model.bodyDownloads == downloads)
        let checked = try a.check()
        #expect(checked.status == 0, "\(checked.stdoutString) \(checked.stderrString)")

        // Deleted in Trash here: gone for good, as "Delete forever".
        let forever = try #require(try a.files("Trash").first)
        #expect(unlink(a.run.maildir + "/Trash/" + forever) == 0)
        let before = Self.messages(a, labelled: "\\Trash").count
        _ = try a.sync()
        #expect(Self.messages(a, labelled: "\\Trash").count == before - 1)
        #expect(try a.check().status == 0)
    }

    /// `mo-index move @trash` and `@junk` name the folders when `gmail-folders` syncs them.
    @Test func moIndexMoveToTrashAndJunk() throws {
        let a = try Account(12, sync: "gmail-folders = [\"Trash\", \"Spam\"]")
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let m = try #require(a.model.messages.first { $0.labels.contains("\\Inbox") })
        let id = "id:" + GmailModeTests.messageID(m.body).dropFirst().dropLast()
        _ = try a.count("*")  // indexed
        let mover = [TestPaths.binDirectory + "/mo-index", "--config", a.run.config, "move"]
        let r = try ChildProcess.run(mover + [id, "@junk"])
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try Self.file(of: m, in: a)?.hasPrefix("Spam/") == true)
        _ = try a.sync()
        #expect(a.model.messages.first { $0.id == m.id }!.labels.contains("\\Spam"))
        _ = try a.count("*")
        let downloads = a.model.bodyDownloads
        let back = try ChildProcess.run(mover + [id, "@trash"])
        #expect(back.status == 0, "\(back.stderrString)")
        #expect(try Self.file(of: m, in: a)?.hasPrefix("Trash/") == true)
        _ = try a.sync()
        #expect(a.model.messages.first { $0.id == m.id }!.labels.contains("\\Trash"))
        #expect(a.model.bodyDownloads == downloads)
        // A tag set on it in Trash is a label there too.
        _ = try a.count("*")
        let tagged = try ChildProcess.run([TestPaths.binDirectory + "/mo-index", "--config", a.run.config, "tag", "+urgent", "--", id])
        #expect(tagged.status == 0, "\(tagged.stderrString)")
        _ = try a.sync()
        #expect(a.model.messages.first { $0.id == m.id }!.labels.contains("urgent"))
        #expect(try a.check().status == 0)
    }

    /// Trashed and restored on the web between two runs, a message is back in All Mail under a new UID: its
    /// file is paired again by key, neither deleted nor downloaded again (with or without Trash synced).
    @Test(arguments: ["", "gmail-folders = [\"Trash\"]"]) func trashedAndRestoredBetweenRunsIsNotDownloadedAgain(sync: String) throws {
        let a = try Account(12, sync: sync)
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let m = try #require(a.model.messages.first { $0.labels.contains("\\Inbox") })
        let before = try #require(try Self.file(of: m, in: a))
        a.model.webChange { $0[m.id]!.labels.insert("\\Trash") }
        a.model.webChange { $0[m.id]!.labels.remove("\\Trash") }
        let downloads = a.model.bodyDownloads
        let r = try a.sync()
        #expect(a.model.bodyDownloads == downloads, "\(r.stdoutString)")
        #expect(try Self.file(of: m, in: a) == before)
        #expect(try a.check().status == 0)
        _ = try a.sync()
        #expect(try Self.file(of: m, in: a) == before)
    }

    /// With Trash and Spam synced, a run that changed nothing costs a SELECT and a `UID SEARCH` of each
    /// more than All Mail's one SELECT, whatever the mailbox size.
    @Test func aNoOpRunWithTrashAndSpamCostsFiveCommandsWhateverTheSize() throws {
        func noop(_ count: Int) throws -> [String] {
            let a = try Account(count, sync: "gmail-folders = [\"Trash\", \"Spam\"]")
            defer { a.run.remove(); a.index.remove() }
            _ = try a.sync()
            _ = try a.sync()
            let before = a.run.server.received.count
            _ = try a.sync()
            let sent = String(decoding: a.run.server.received[before...], as: UTF8.self)
            return sent.split(separator: "\r\n").map { $0.split(separator: " ").dropFirst().prefix(2).joined(separator: " ") }
                .filter { $0.hasPrefix("SELECT") || $0.hasPrefix("UID") }
        }
        let small = try noop(12), large = try noop(170)
        #expect(small == large, "\(small) \(large)")
        #expect(large == ["SELECT \"[Gmail]/All", "SELECT [Gmail]/Trash", "UID SEARCH", "SELECT [Gmail]/Spam", "UID SEARCH"], "\(large)")
    }

    @Test func aBadGmailFolderIsAOneLineConfigError() throws {
        let a = try Account(4, sync: "gmail-folders = [\"Trash\", \"Important\"]")
        defer { a.run.remove(); a.index.remove() }
        let r = try a.run.sync()
        #expect(r.status == 78, "\(r.status)")
        #expect(r.stderrString.contains("gmail-folders") && r.stderrString.contains("Important"), "\(r.stderrString)")
        #expect(r.stderrString.split(separator: "\n").count == 1, "\(r.stderrString)")
    }
}
