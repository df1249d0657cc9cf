import Foundation
import Maildir
import MoCore
import Testing
import XapianKit
@testable import MoIndex

/// Tags in the index (`K` terms from keyword letters, the local store) and `MessageTagger`.
@Suite struct TagIndexTests {
    static func message(_ id: String) -> String { "From: a@x\nSubject: s \(id)\nMessage-ID: <\(id)@x>\n\nbody\n" }

    /// A tree with INBOX holding `files` (name → Message-ID stem) and a keyword table.
    func tree(_ files: [String: String], keywords: [String] = ["$label2", "project=20x"]) throws -> IndexedTree {
        let tree = try IndexedTree(folders: ["INBOX": []])
        for (name, id) in files {
            try Self.message(id).write(toFile: "\(tree.maildir)/INBOX/cur/\(name)", atomically: false, encoding: .utf8)
        }
        let table = keywords.enumerated().map { "\($0.offset) \($0.element)\n" }.joined()
        try table.write(toFile: "\(tree.maildir)/INBOX/dovecot-keywords", atomically: false, encoding: .utf8)
        return tree
    }

    @Test func keywordLettersAndFlagsAreTagTerms() throws {
        let tree = try tree(["1.a.host:2,Sa": "a", "2.b.host:2,Fb": "b", "3.c.host:2,": "c"])
        try tree.update()
        #expect(try tree.ids("tag:work") == ["a@x"])
        #expect(try tree.ids("tag:Work").isEmpty)  // exact and case-kept, as notmuch
        #expect(try tree.ids("tag:\"project x\"") == ["b@x"])
        #expect(try tree.ids("tag:unread") == ["b@x", "c@x"])
        #expect(try tree.ids("tag:flagged") == ["b@x"])
        #expect(try tree.ids("tag:pro*") == ["b@x"])
        let index = try tree.index()
        let b = try #require(try index.messages(try index.query("id:b@x")).first)
        #expect(try index.tags(of: b) == ["flagged", "project x", "unread"])
        #expect(try index.tagCounts().map { "\($0.tag)=\($0.messages)" } == ["flagged=1", "project x=1", "unread=2", "work=1"])
    }

    /// Many documents' tags read at once (each tag's posting list) are each document's own, in the same
    /// order; a document with none, or asked twice, or unknown, is read as it is.
    @Test func tagsOfManyDocumentsAreEachDocumentsOwn() throws {
        let tree = try tree(["1.a.host:2,Sa": "a", "2.b.host:2,Fb": "b", "3.c.host:2,S": "c", "4.d.host:2,Fab": "d"])
        try tree.update()
        let index = try tree.index()
        let ids = try index.messages(try index.query("*")).map(\.documentID)
        #expect(ids.count == 4)
        let many = try index.tags(ofDocuments: ids + [ids[0], 999])
        for id in ids { #expect(many[id] == (try index.tags(ofDocument: id)), "\(id)") }
        #expect(many.values.contains([]))  // c: seen, no keyword
        #expect(many[999] == [])
    }

    @Test func unreadOnlyWhenNoFileIsSeenAndTagsAreTheUnionOverFiles() throws {
        let tree = try tree(["1.a.host:2,a": "a", "2.a2.host:2,S": "a"])
        try tree.update()
        #expect(try tree.ids("tag:work") == ["a@x"])
        #expect(try tree.ids("tag:unread").isEmpty)
    }

    @Test func aRenameChangesTagsWithoutReparsing() throws {
        let tree = try tree(["1.a.host:2,S": "a"])
        try tree.update()
        #expect(try tree.ids("tag:work").isEmpty)
        try FileManager.default.moveItem(
            atPath: "\(tree.maildir)/INBOX/cur/1.a.host:2,S", toPath: "\(tree.maildir)/INBOX/cur/1.a.host:2,Sa")
        tree.touchLater("\(tree.maildir)/INBOX/cur")
        let s = try tree.update()
        #expect(s.renamed == 1 && s.added == 0)
        #expect(try tree.ids("tag:work") == ["a@x"])
    }

    /// One tagger's run (it holds the store's lock until it goes).
    func tag(_ tree: IndexedTree, add: [String], remove: [String], id: String, files: [String]) throws -> MessageTagger.Outcome {
        let tagger = try MessageTagger(vocabulary: TagVocabulary(), localTagsPath: LocalTagStore.path(forIndex: tree.indexPath))
        let outcome = try tagger.apply(add: add, remove: remove, messageID: id, files: files)
        try tagger.save()
        return outcome
    }

    @Test func taggerRenamesThroughTheKeywordTableAndKeepsFurtherTagsInMoKeywords() throws {
        let tree = try tree(["1.a.host:2,S": "a", "2.b.host:2,S": "b"])
        try tree.update()
        let localTags = LocalTagStore.path(forIndex: tree.indexPath)
        let a = "\(tree.maildir)/INBOX/cur/1.a.host:2,S"
        let outcome = try tag(tree, add: ["todo", "new tag"], remove: ["unread"], id: "a@x", files: [a])
        #expect(outcome == MessageTagger.Outcome(changedFiles: 1))
        let table = try MaildirKeywords.load(folder: "\(tree.maildir)/INBOX")
        #expect(table.byIndex == [0: "$label2", 1: "project=20x", 2: "$label4", 3: "new=20tag"])
        #expect(tree.files(in: "INBOX").contains("1.a.host:2,Scd"))
        #expect(!FileManager.default.fileExists(atPath: localTags))  // nothing kept locally
        try tree.update()
        #expect(try tree.ids("tag:todo") == ["a@x"])
        #expect(try tree.ids("tag:\"new tag\"") == ["a@x"])

        // Fill the table: the next new tag finds no letter and goes to the folder's mo-keywords (issue 26).
        var full = table
        for n in 0..<22 { _ = full.assignLetter(for: "k\(n)") }
        try full.save(folder: "\(tree.maildir)/INBOX")
        let b = "\(tree.maildir)/INBOX/cur/2.b.host:2,S"
        let over = try tag(tree, add: ["later"], remove: [], id: "b@x", files: [b])
        #expect(over.changedFiles == 0 && over.changedExtra == 1)
        let extraNow = try ExtraKeywords.load(folder: "\(tree.maildir)/INBOX").byUnique
        #expect(extraNow == ["2.b.host": ["$label5"]])  // Thunderbird's keyword for "later" (TagVocabulary)
        #expect(!FileManager.default.fileExists(atPath: localTags))
        let s = try tree.update()  // no file renamed: mo-keywords alone brings the tag in
        #expect(s.retagged == 1)
        #expect(try tree.ids("tag:later") == ["b@x"])

        _ = try tag(tree, add: [], remove: ["later"], id: "b@x", files: [b])
        #expect(try ExtraKeywords.load(folder: "\(tree.maildir)/INBOX").isEmpty)
        #expect(try tree.update().retagged == 1)
        #expect(try tree.ids("tag:later").isEmpty)

        // A file another program renamed since the last update is passed over, not the end of the batch.
        let gone = try tag(tree, add: ["flagged"], remove: [], id: "b@x", files: ["\(tree.maildir)/INBOX/cur/2.b.host:2,RS", b])
        #expect(gone.vanishedFiles == 1 && gone.changedFiles == 1)
    }

    /// Tags an older version kept in the local store (full tables) leave it when tagged again: they travel
    /// with the files now.
    @Test func aTagKeptLocallyByAnOlderVersionLeavesTheLocalStore() throws {
        let tree = try tree(["1.a.host:2,S": "a"])
        try tree.update()
        let localTags = LocalTagStore.path(forIndex: tree.indexPath)
        var old = LocalTagStore()
        old.add(["later"], to: "a@x")
        try old.save(localTags)
        let a = "\(tree.maildir)/INBOX/cur/1.a.host:2,S"
        _ = try tag(tree, add: ["later"], remove: [], id: "a@x", files: [a])
        #expect(try LocalTagStore.load(localTags).tags(of: "a@x").isEmpty)
        #expect(tree.files(in: "INBOX") != ["1.a.host:2,S"])  // a letter now
    }

    @Test func localStoreLinesRoundTrip() {
        var store = LocalTagStore()
        store.add(["a b", "x%y", "ünï"], to: "id with space@x")
        store.add(["plain"], to: "p@x")
        let text = String(decoding: store.rendered, as: UTF8.self)
        #expect(text == "+a%20b +x%25y +%c3%bcn%c3%af -- id:\"id with space@x\"\n+plain -- id:p@x\n")  // as notmuch dump
        #expect(LocalTagStore(parsing: store.rendered) == store)
        // Hand edits: junk lines skipped.
        #expect(LocalTagStore(parsing: Array("garbage\n+t -- nothing\n+t -- id:q@x\n".utf8)).tagsByID == ["q@x": ["t"]])
        #expect(LocalTagStore.path(forIndex: "/home/u/.cache/mo/index/") == "/home/u/.cache/mo/local-tags")
    }

    /// Issue #14: the commands that save the store read it strictly, so a damaged line is never dropped by
    /// a save; blank and `#` lines are hand edits, not damage.
    @Test func localStoreStrictParseNamesFileAndLine() throws {
        #expect(try LocalTagStore.parse(Array("# mine\n\n+t -- id:q@x\n".utf8), file: "L").tagsByID == ["q@x": ["t"]])
        for (text, message) in [
            ("+t -- id:q@x\ngarbage\n", "L:2: no ' -- ' between the tags and the message"),
            ("+t -- id:q@x\n+u -- id:r", "L:2: incomplete last line \"+u -- id:r\" (the file was cut short)"),
            ("+t\u{1B}[2J -- thread:1\n", "L:1: only id:MESSAGE-ID queries are restored, not 'thread:1'")
        ] {
            #expect { try LocalTagStore.parse(Array(text.utf8), file: "L") } throws: { error in
                (error as? GenericError)?.description == message && (error as? GenericError)?.kind == .data
            }
        }
    }

    /// Format 7 indexed one alternative of a multipart/alternative; 8 indexes all (as notmuch). The next
    /// update rebuilds a 7 from the mail, and the tags come back from the file names.
    @Test func formatSevenIsRebuiltAndFindsWhatOnlyTheHTMLHolds() throws {
        let tree = try tree(["1.a.host:2,Sa": "a"])
        let alternative = """
            From: a@x
            Subject: s
            Message-ID: <h@x>
            Content-Type: multipart/alternative; boundary=b

            --b
            Content-Type: text/plain

            see the HTML
            --b
            Content-Type: text/html

            <p>an <b>open source</b> tool</p>
            --b--

            """
        try alternative.write(toFile: "\(tree.maildir)/INBOX/cur/2.h.host:2,S", atomically: false, encoding: .utf8)
        try tree.update()
        #expect(try tree.ids("\"open source\"") == ["h@x"])
        let db = try WritableXapianDatabase(path: tree.indexPath, mode: .open)
        try db.setMetadata(IndexSchema.Metadata.format, "7")
        try db.close()
        #expect(try tree.ids("tag:work") == ["a@x"])  // 7 is still read
        let s = try tree.update()
        #expect(s.rebuiltFromFormat == "7" && s.added == 2)
        #expect(try tree.ids("tag:work") == ["a@x"] && tree.ids("\"open source\"") == ["h@x"])
        #expect(String(decoding: try tree.index().db.metadata(IndexSchema.Metadata.format), as: UTF8.self) == IndexSchema.formatVersion)
    }

    @Test func aNewKeywordTableRetagsEveryMessage() throws {
        let tree = try tree(["1.a.host:2,Sa": "a"])
        try tree.update()
        let updater = IndexUpdater(indexPath: tree.indexPath, roots: tree.roots)
        updater.keywordTable = [("$label2", "job")]
        let s = try updater.run()
        #expect(s.retagged == 1)
        #expect(try tree.ids("tag:job") == ["a@x"])
        #expect(try tree.ids("tag:work").isEmpty)
        let again = IndexUpdater(indexPath: tree.indexPath, roots: tree.roots)
        again.keywordTable = [("$label2", "job")]
        #expect(try again.run().isNoOp)
    }

    /// New messages wait for the tag rules in the index until a run says they were applied: a crash
    /// between indexing and tagging leaves them waiting. A new index's messages never wait.
    @Test func newMessagesWaitForTheRulesUntilApplied() throws {
        let tree = try tree(["1.a.host:2,S": "a"])
        func run(applied: Set<String> = []) throws -> UpdateSummary {
            let updater = IndexUpdater(indexPath: tree.indexPath, roots: tree.roots)
            updater.recordsNewMessages = true
            updater.rulesApplied = applied
            return try updater.run()
        }
        #expect(try run().rulesPending == [])
        try Self.message("b").write(toFile: "\(tree.maildir)/INBOX/cur/2.b.host:2,", atomically: false, encoding: .utf8)
        tree.touchLater("\(tree.maildir)/INBOX/cur")
        #expect(try run().rulesPending == ["b@x"])
        #expect(try run().rulesPending == ["b@x"])  // nothing applied them yet (a crash): still waiting
        try Self.message("c").write(toFile: "\(tree.maildir)/INBOX/cur/3.c.host:2,", atomically: false, encoding: .utf8)
        tree.touchLater("\(tree.maildir)/INBOX/cur")
        #expect(try run(applied: ["b@x"]).rulesPending == ["c@x"])
        #expect(try run(applied: ["c@x"]).rulesPending == [])
        #expect(try run().rulesPending == [])
    }

    @Test func newMessagesAreReported() throws {
        let tree = try tree(["1.a.host:2,S": "a"])
        #expect(try tree.update().newMessageIDs == ["a@x"])
        try Self.message("b").write(toFile: "\(tree.maildir)/INBOX/cur/2.b.host:2,", atomically: false, encoding: .utf8)
        try FileManager.default.moveItem(
            atPath: "\(tree.maildir)/INBOX/cur/1.a.host:2,S", toPath: "\(tree.maildir)/INBOX/cur/1.a.host:2,SF")
        tree.touchLater("\(tree.maildir)/INBOX/cur")
        #expect(try tree.update().newMessageIDs == ["b@x"])
    }
}
