import Foundation
import MoCore
import Testing
import XapianKit
import MoTestSupport
@testable import MoIndex

@Suite struct IndexUpdateTests {
    @Test func indexesTheFixturesAndANoOpDoesNothing() throws {
        let tree = try IndexedTree()
        let first = try tree.update()
        #expect(first.added + first.addedFiles + first.skipped == IndexedTree.fixtureNames.count)
        #expect(first.added > 15)
        let second = try tree.update()
        #expect(second.isNoOp)
        #expect(second.added == 0)
        let index = try tree.index()
        #expect(try index.messageCount == first.added)
    }

    @Test func flagRenameUpdatesTermsWithoutReparsing() throws {
        let tree = try IndexedTree()
        try tree.update()
        let name = tree.files(in: "INBOX").first { $0.contains("sa-alternative") }!
        #expect(try tree.ids("flag:flagged").isEmpty)
        let renamed = name.replacingOccurrences(of: ":2,S", with: ":2,FS")
        try FileManager.default.moveItem(atPath: "\(tree.maildir)/INBOX/cur/\(name)", toPath: "\(tree.maildir)/INBOX/cur/\(renamed)")
        tree.touchLater("\(tree.maildir)/INBOX/cur")
        let s = try tree.update()
        #expect(s.renamed == 1 && s.added == 0 && s.removed == 0)
        #expect(try tree.ids("flag:flagged").count == 1)
        #expect(try tree.ids("flag:unread").isEmpty)
    }

    @Test func movedFileChangesFolderAndDeletedFileIsRemoved() throws {
        let tree = try IndexedTree(folders: ["INBOX": IndexedTree.fixtureNames, "Archive": []])
        try tree.update()
        let before = try tree.ids("folder:INBOX").count
        let name = tree.files(in: "INBOX").first { $0.contains("nm-mixed-up") }!
        try FileManager.default.moveItem(atPath: "\(tree.maildir)/INBOX/cur/\(name)", toPath: "\(tree.maildir)/Archive/cur/\(name)")
        tree.touchLater("\(tree.maildir)/INBOX/cur")
        tree.touchLater("\(tree.maildir)/Archive/cur")
        let s = try tree.update()
        #expect(s.renamed == 1 && s.added == 0)
        #expect(try tree.ids("folder:Archive").count == 1)
        #expect(try tree.ids("folder:INBOX").count == before - 1)

        try FileManager.default.removeItem(atPath: "\(tree.maildir)/Archive/cur/\(name)")
        tree.touchLater("\(tree.maildir)/Archive/cur")
        let r = try tree.update()
        #expect(r.removed == 1)
        #expect(try tree.ids("folder:Archive").isEmpty)
    }

    @Test func newFolderIsFound() throws {
        let tree = try IndexedTree()
        try tree.update()
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(atPath: "\(tree.maildir)/Lists/dev/\(sub)", withIntermediateDirectories: true)
        }
        let body = "From: a@x\nTo: b@x\nSubject: brand new\nMessage-ID: <brand-new@x>\n\nhello\n"
        try body.write(toFile: "\(tree.maildir)/Lists/dev/new/2000.new.host", atomically: false, encoding: .utf8)
        tree.touchLater(tree.maildir)
        let s = try tree.update()
        #expect(s.added == 1)
        #expect(try tree.ids("folder:Lists/dev") == ["brand-new@x"])
        #expect(try tree.ids("path:Lists/**") == ["brand-new@x"])
    }

    @Test func sameMessageInTwoFoldersIsOneMessageWithTwoFiles() throws {
        let tree = try IndexedTree(folders: ["A": ["sa-plain-mbox.eml"], "B": ["sa-plain-mbox.eml"]])
        let s = try tree.update()
        #expect(s.added == 1 && s.addedFiles == 1)
        let index = try tree.index()
        let m = try index.messages(.matchAll())
        #expect(m.count == 1 && m[0].record.files.count == 2)
        #expect(try tree.ids("folder:A") == tree.ids("folder:B"))
    }

    @Test func repliesJoinTheirThreadIncrementallyAndIdsAreContentDerived() throws {
        let tree = try IndexedTree(folders: ["INBOX": []])
        func deliver(_ n: Int, _ text: String) throws {
            try text.write(toFile: "\(tree.maildir)/INBOX/new/\(n).m.host", atomically: false, encoding: .utf8)
            tree.touchLater("\(tree.maildir)/INBOX/new")
        }
        try deliver(1, "From: a@x\nSubject: root\nMessage-ID: <z-root@x>\nDate: Mon, 1 Jan 2024 10:00:00 +0000\n\nroot\n")
        try tree.update()
        try deliver(
            2,
            "From: b@x\nSubject: Re: root\nMessage-ID: <a-reply@x>\nIn-Reply-To: <z-root@x>\nDate: Mon, 1 Jan 2024 11:00:00 +0000\n\nreply\n"
        )
        let s = try tree.update()
        #expect(s.added == 1 && s.threadsRewritten == 1)  // the anchor became a-reply@x
        let index = try tree.index()
        let all = try index.messages(.matchAll())
        #expect(Set(all.map(\.thread)).count == 1)
        // The same mail indexed from scratch gets the same thread id.
        let fresh = IndexUpdater(indexPath: tree.dir.path + "/fresh", roots: tree.roots)
        _ = try fresh.run()
        let again = try MailIndex(path: tree.dir.path + "/fresh").messages(.matchAll())
        #expect(Set(again.map(\.thread)) == Set(all.map(\.thread)))
        #expect(try tree.ids("thread:{id:z-root@x}") == ["z-root@x", "a-reply@x"])
    }

    @Test func aSecondWriterGetsAClearBusyError() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml"]])
        try tree.update()
        let holder = try WritableXapianDatabase(path: tree.indexPath)
        defer { try? holder.close() }
        let reader = try tree.index()  // readers work while a writer holds the lock
        #expect(try reader.messageCount == 1)
        #expect {
            try tree.update()
        } throws: { error in
            (error as? GenericError)?.kind == .busy && "\(error)".contains("being updated by another process")
        }
    }
}

/// `IndexUpdater.onlyFolders` (notmuch insert indexes the folder it delivered to, nothing else): the
/// changes it leaves wait for the next update, and a first run is never cut short.
@Suite struct OnlyFoldersTests {
    func update(_ tree: IndexedTree, only: [String]?) throws -> UpdateSummary {
        let updater = IndexUpdater(indexPath: tree.indexPath, roots: tree.roots)
        updater.onlyFolders = only
        return try updater.run()
    }

    @Test func aFirstRunIsWhole() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml"], "Sent": ["sa-plain-mbox.eml"]])
        _ = try update(tree, only: ["Sent"])
        #expect(try tree.index().messageCount == 1)
        #expect(try tree.index().count(try tree.index().query("folder:INBOX")) == 1)
    }

    @Test func otherChangesWaitForTheNextUpdate() throws {
        let tree = try IndexedTree(folders: ["INBOX": [], "Sent": [], "Old": ["sa-plain-mbox.eml"]])
        try tree.update()
        #expect(try tree.index().messageCount == 1)
        // Elsewhere: a new folder with mail, and a folder gone with its mail.
        let fixture = IndexedTree.fixtures + "/" + IndexedTree.fixtureNames[0]
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(atPath: tree.maildir + "/New/" + sub, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: fixture, toPath: tree.maildir + "/New/cur/1.x.host:2,S")
        try FileManager.default.removeItem(atPath: tree.maildir + "/Old")
        tree.touchLater(tree.maildir)
        _ = try update(tree, only: ["Sent"])
        #expect(try tree.index().count(try tree.index().query("folder:New")) == 0)
        try tree.update()
        #expect(try tree.index().count(try tree.index().query("folder:New")) == 1)
        #expect(try tree.index().count(try tree.index().query("folder:Old")) == 0)
    }
}

/// A tree whose root is itself a Maildir folder (`--maildir ~/Maildir`): its files are recorded under
/// `/cur`, and a flag change there is a rename, not a second file.
@Suite struct RootMaildirTests {
    @Test func aRenameAtTheRootIsARename() throws {
        let tree = try IndexedTree(folders: [:])
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(atPath: tree.maildir + "/" + sub, withIntermediateDirectories: true)
        }
        let fixture = IndexedTree.fixtures + "/" + IndexedTree.fixtureNames[0]
        try FileManager.default.copyItem(atPath: fixture, toPath: tree.maildir + "/cur/1.x.host:2,")
        try tree.update()
        try FileManager.default.moveItem(atPath: tree.maildir + "/cur/1.x.host:2,", toPath: tree.maildir + "/cur/1.x.host:2,S")
        tree.touchLater(tree.maildir + "/cur")
        let summary = try tree.update()
        #expect(summary.renamed == 1 && summary.addedFiles == 0)
        let files = try tree.index().messages(.matchAll()).flatMap(\.record.files)
        #expect(files == ["/cur/1.x.host:2,S"])
    }
}

/// notmuch's mail root (`IndexRoot.allFiles`) walked as notmuch walks it: links to files and to
/// directories followed (a loop walked once), dot-files and dot-directories read, the root's own
/// `.notmuch` and a Maildir's `tmp/` passed over, a `.notmuch` deeper read; what is not mail is named.
@Suite struct NotmuchRootWalkTests {
    @Test func walkedAsNotmuchWalks() throws {
        let dir = TempDirectory()
        let root = dir.path + "/mail", outside = dir.path + "/outside"
        let names = IndexedTree.fixtureNames
        func put(_ path: String, _ fixture: Int) throws {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: IndexedTree.fixtures + "/" + names[fixture], toPath: path)
        }
        try put(root + "/plain", 0)
        try put(root + "/.hidden", 1)
        try put(root + "/.git/objects/x", 2)
        try put(root + "/deep/.notmuch/cur/1:2,", 3)
        try put(root + "/.notmuch/ignored", 4)
        try put(root + "/box/cur/2:2,", 5)
        try put(root + "/box/tmp/3", 6)
        try put(outside + "/linked-file", 7)
        try put(outside + "/dir/in-linked-dir", 8)
        try FileManager.default.createSymbolicLink(atPath: root + "/link", withDestinationPath: outside + "/linked-file")
        try FileManager.default.createSymbolicLink(atPath: root + "/linkdir", withDestinationPath: outside + "/dir")
        try FileManager.default.createSymbolicLink(atPath: root + "/loop", withDestinationPath: root)
        try FileManager.default.createSymbolicLink(atPath: root + "/broken", withDestinationPath: root + "/nowhere")
        try "not mail\n".write(toFile: root + "/notes.txt", atomically: true, encoding: .utf8)

        let updater = IndexUpdater(
            indexPath: dir.path + "/index", roots: [IndexRoot(name: "", path: root, layout: .verbatim, allFiles: true)])
        let summary = try updater.run()
        let index = try MailIndex(path: dir.path + "/index")
        let files = Set(try index.messages(try index.query("*")).flatMap { $0.record.files })
        #expect(files.contains("plain") && files.contains(".hidden") && files.contains(".git/objects/x"))
        #expect(files.contains("deep/.notmuch/cur/1:2,") && files.contains("box/cur/2:2,"))
        #expect(files.contains("link") && files.contains("linkdir/in-linked-dir"))
        #expect(!files.contains(".notmuch/ignored") && !files.contains("box/tmp/3"))
        #expect(!files.contains { $0.hasPrefix("loop/") })
        #expect(summary.skippedFiles == [root + "/notes.txt"])
        #expect(summary.brokenLinks == [root + "/broken"])
    }

    /// A Maildir root never follows a link: a link to `.` (or to a folder) adds nothing, and cannot loop.
    @Test func aMaildirRootFollowsNoLink() throws {
        let tree = try IndexedTree(folders: ["INBOX": Array(IndexedTree.fixtureNames.prefix(2))])
        try FileManager.default.createSymbolicLink(atPath: tree.maildir + "/loop", withDestinationPath: tree.maildir)
        try FileManager.default.createSymbolicLink(atPath: tree.maildir + "/Linked", withDestinationPath: tree.maildir + "/INBOX")
        try tree.update()
        let index = try tree.index()
        let files = try index.messages(try index.query("*")).flatMap { $0.record.files }
        #expect(files.count == 2 && files.allSatisfy { $0.hasPrefix("INBOX/") })
    }

    /// notmuch's new.ignore: plain names anywhere, `/regex/` on the path from the root; what it names goes
    /// from the index once its folder is scanned again; bad entries are notmuch's error lines.
    @Test func newIgnore() throws {
        let dir = TempDirectory()
        let root = dir.path + "/mail"
        let names = IndexedTree.fixtureNames
        for (i, path) in ["keep", ".mbsyncstate", "sub/.git/x", "sub/drafts/y", "other/drafts/z"].enumerated() {
            try FileManager.default.createDirectory(
                atPath: ((root + "/" + path) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: IndexedTree.fixtures + "/" + names[i], toPath: root + "/" + path)
        }
        func update(_ ignore: [String]) throws -> Set<String> {
            let updater = IndexUpdater(
                indexPath: dir.path + "/index", roots: [IndexRoot(name: "", path: root, layout: .verbatim, allFiles: true)])
            updater.ignore = try IgnoreList(ignore)
            _ = try updater.run()
            let index = try MailIndex(path: dir.path + "/index")
            return Set(try index.messages(try index.query("*")).flatMap { $0.record.files })
        }
        #expect(try update([]) == ["keep", ".mbsyncstate", "sub/.git/x", "sub/drafts/y", "other/drafts/z"])
        usleep(20_000)
        for d in ["", "/sub", "/other"] { _ = utimes(root + d, nil) }
        #expect(try update([".mbsyncstate", ".git", "/^sub/drafts/"]) == ["keep", "other/drafts/z"])
        #expect(throws: IgnoreList.Problem(message: "Error: Malformed pattern '/x' in new.ignore")) { try IgnoreList(["/x"]) }
        #expect(throws: IgnoreList.Problem(message: "Error: Empty string in new.ignore list")) { try IgnoreList([""]) }
        #expect(throws: IgnoreList.Problem.self) { try IgnoreList(["/a[/"]) }
    }
}
