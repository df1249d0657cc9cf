import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue 26: a label shown as a folder of its own (`gmail-label-folders`), without a second copy: a Maildir
/// of links to the messages' files, remade after each run; a flag set on a link and a link deleted there
/// come back to Gmail as the flag and the label's removal.
@Suite(.serialized) struct GmailLabelFolderTests {
    typealias Account = GmailModeTests.Account

    /// The label folder's links: name → the file it points to, relative to the Maildir root.
    static func links(_ a: Account, _ label: String) throws -> [String: String] {
        var out: [String: String] = [:]
        let cur = a.run.maildir + "/Labels/" + label + "/cur"
        for name in try FileManager.default.contentsOfDirectory(atPath: cur) {
            let target = try FileManager.default.destinationOfSymbolicLink(atPath: cur + "/" + name)
            #expect(target.hasPrefix(a.run.maildir + "/"), "\(target)")
            out[name] = String(target.dropFirst(a.run.maildir.count + 1))
        }
        return out
    }

    /// The file of a unique name in the synced folders, relative to the Maildir root (renamed or not).
    static func file(_ a: Account, unique: String) throws -> String? {
        for folder in ["INBOX", "Sent", "Drafts", "Archive"] {
            for f in try a.files(folder) where f.split(separator: "/").last!.hasPrefix(unique + ":") { return folder + "/" + f }
        }
        return nil
    }

    static func labelled(_ a: Account, _ label: String) -> [GmailModel.Message] {
        a.model.messages.filter { $0.labels.contains(label) && !$0.labels.contains("\\Trash") && !$0.labels.contains("\\Spam") }
    }

    @Test func aLabelIsAFolderOfLinksBothWays() throws {
        let a = try Account(30, sync: "gmail-label-folders = [\"work\", \"Lists/lkml\"]")
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let downloads = a.model.bodyDownloads
        // One link per labelled message, to its file in its folder, named as it: no second copy.
        var work = try Self.links(a, "work")
        #expect(work.count == Self.labelled(a, "work").count && !work.isEmpty)
        for (name, target) in work {
            #expect(target.hasSuffix("/" + name) && !target.hasPrefix("Labels/"), "\(name) → \(target)")
            #expect(FileManager.default.fileExists(atPath: a.run.maildir + "/" + target))
        }
        #expect(try Self.links(a, "Lists/lkml").count == Self.labelled(a, "Lists/lkml").count)
        #expect(a.model.bodyDownloads.values.allSatisfy { $0 == 1 })
        // The label folders are no synced folders: no note names them as left alone, the index skips links.
        #expect(try a.count("folder:t/Labels/work") == 0)

        // In the web interface: a label added, one removed; a labelled message archived (its file moves).
        let unlabelled = try #require(a.model.messages.first { $0.labels.isEmpty })
        let dropped = try #require(Self.labelled(a, "work").first)
        let archived = try #require(Self.labelled(a, "work").first { $0.labels.contains("\\Inbox") && $0.id != dropped.id })
        a.model.webChange { m in
            m[unlabelled.id]!.labels.insert("work")
            m[dropped.id]!.labels.remove("work")
            m[archived.id]!.labels.remove("\\Inbox")
        }
        _ = try a.sync()
        work = try Self.links(a, "work")
        #expect(work.count == Self.labelled(a, "work").count)
        #expect(work.values.allSatisfy { FileManager.default.fileExists(atPath: a.run.maildir + "/" + $0) })
        #expect(
            work.values.filter { $0.hasPrefix("Archive/") }.count
                == Self.labelled(a, "work").filter { !$0.labels.contains("\\Inbox") }.count)

        // In neomutt, in the label folder: a message flagged (its link renamed), another one deleted (its link).
        let cur = a.run.maildir + "/Labels/work/cur/"
        let names = work.keys.sorted()
        let flagged = names[0], removed = names[1]
        let unique = flagged.split(separator: ":").first!
        #expect(rename(cur + flagged, cur + unique + ":2,FS") == 0)
        #expect(unlink(cur + removed) == 0)
        _ = try a.sync()
        func message(_ target: String) throws -> GmailModel.Message {
            let body = Array(try Data(contentsOf: URL(fileURLWithPath: a.run.maildir + "/" + target)))
            return try #require(a.model.messages.first { GmailModeTests.messageID($0.body) == GmailModeTests.messageID(body) })
        }
        let f = try message(try #require(try Self.links(a, "work").values.first { $0.contains(String(unique)) }))
        #expect(f.flags.contains("\\Flagged") && f.labels.contains("work"), "\(f.flags) \(f.labels)")
        let r = try message(try #require(try Self.file(a, unique: String(removed.split(separator: ":").first!))))
        #expect(!r.labels.contains("work") && r.labels != ["\\Trash"], "\(r.labels)")  // the label went, the message stayed
        #expect(try Self.links(a, "work").count == Self.labelled(a, "work").count)
        #expect(a.model.bodyDownloads == downloads)
        #expect(try a.check().status == 0)

        // A file saved into the label folder is left alone, with a note, and never uploaded.
        try writePrivateFile(cur + "1800000000.saved.host:2,S", "From: me@example.com\nSubject: saved\nMessage-ID: <saved@x>\n\nHi.\n")
        let count = a.model.messages.count
        let noted = try a.sync()
        #expect(noted.stderrString.contains("not links"), "\(noted.stderrString)")
        #expect(a.model.messages.count == count && FileManager.default.fileExists(atPath: cur + "1800000000.saved.host:2,S"))
    }

    /// A label folder removed by hand is remade and takes no label away.
    @Test func aLabelFolderRemovedByHandTakesNothingAway() throws {
        let a = try Account(12, sync: "gmail-label-folders = [\"work\"]")
        defer { a.run.remove(); a.index.remove() }
        _ = try a.sync()
        let before = Self.labelled(a, "work").count
        #expect(before > 0)
        try FileManager.default.removeItem(atPath: a.run.maildir + "/Labels")
        _ = try a.sync()
        #expect(Self.labelled(a, "work").count == before)
        #expect(try Self.links(a, "work").count == before)
        // Its message directories removed but its record left (a client that removes only what it knows):
        // no label taken away either.
        for sub in ["cur", "new", "tmp"] { try FileManager.default.removeItem(atPath: a.run.maildir + "/Labels/work/" + sub) }
        _ = try a.sync()
        #expect(Self.labelled(a, "work").count == before)
        // A refresh that fails (a regular file where a link goes: the new name of a message whose flags the
        // web changed) leaves no record: the next runs take nothing away, and say why.
        let cur = a.run.maildir + "/Labels/work/cur/"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: cur).first { !$0.contains("F") })
        let flagged = String(name.split(separator: ":").first!) + ":2,F" + name.split(separator: ",").last!
        try writePrivateFile(cur + flagged, "not a link\n")
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: cur + name)
        let body = Array(try Data(contentsOf: URL(fileURLWithPath: target)))
        let m = try #require(a.model.messages.first { GmailModeTests.messageID($0.body) == GmailModeTests.messageID(body) })
        a.model.webChange { $0[m.id]!.flags.insert("\\Flagged") }
        let failed = try a.sync()
        #expect(failed.stderrString.contains("label folders were not remade"), "\(failed.stderrString)")
        #expect(Self.labelled(a, "work").count == before)
        for _ in 0..<2 {
            _ = try a.sync()
            #expect(Self.labelled(a, "work").count == before)
        }
    }
}
