import Foundation
import MoCore
import Synchronization
import Testing
import XapianKit
@testable import MoIndex

/// The full-index paths (sharded build, compaction) and the index directory layout.
@Suite struct IndexBuildTests {
    /// Every document in id order: data, thread value, terms.
    static func dump(_ path: String) throws -> [String] {
        let db = try XapianDatabase(path: path)
        var out: [String] = []
        let last = try db.lastDocumentID
        guard last > 0 else { return out }
        for id in 1...last {
            guard let doc = try? db.document(id), let data = try? doc.data() else { continue }
            let terms = try doc.terms().map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
            out.append(
                String(decoding: data, as: UTF8.self) + "|" + String(decoding: try doc.value(slot: IndexSchema.Slot.thread), as: UTF8.self)
                    + "|" + terms)
        }
        return out
    }

    func deliver(_ tree: IndexedTree, _ folder: String, _ name: String, _ text: String) throws {
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(atPath: "\(tree.maildir)/\(folder)/\(sub)", withIntermediateDirectories: true)
        }
        try text.write(toFile: "\(tree.maildir)/\(folder)/cur/\(name)", atomically: false, encoding: .utf8)
    }

    @Test func aShardedBuildWritesWhatTheSequentialUpdaterWrites() throws {
        // B repeats A's messages (duplicates across shards); a reply in A to a root in Z (a thread across
        // shards, whose id the root in the last shard decides).
        let names = IndexedTree.fixtureNames
        let tree = try IndexedTree(folders: ["A": names, "B": Array(names.prefix(6)), "M": names])
        try deliver(
            tree, "A", "1.reply.host:2,S", "From: b@x\nSubject: Re: root\nMessage-ID: <zz-reply@x>\nIn-Reply-To: <aa-root@x>\n\nreply\n")
        try deliver(tree, "Z", "1.root.host:2,", "From: a@x\nSubject: root\nMessage-ID: <aa-root@x>\n\nroot\n")
        try deliver(
            tree, "Z", "2.reply2.host:2,",
            "From: c@x\nSubject: Re: root\nMessage-ID: <mm-reply@x>\nReferences: <aa-root@x>\n\n"
                + String(repeating: "long body words ", count: 600) + "\n")

        let sequential = IndexUpdater(indexPath: tree.dir.path + "/seq", roots: tree.roots)
        sequential.shardThreshold = .max
        let s1 = try sequential.run()
        for threads in [2, 3, 5] {
            let path = tree.dir.path + "/sharded\(threads)"
            let sharded = IndexUpdater(indexPath: path, roots: tree.roots)
            sharded.shardThreshold = 1
            sharded.parserThreads = threads
            sharded.shardCommitBytes = 4000  // several commits per shard
            let s2 = try sharded.run()
            #expect(s2.added == s1.added && s2.addedFiles == s1.addedFiles && s2.skipped == s1.skipped)
            #expect(try Self.dump(path) == Self.dump(tree.dir.path + "/seq"))
            #expect(!FileManager.default.fileExists(atPath: path + "/build.0"))  // shards are gone
            #expect(IndexDirectory.readStub(path) == 2)
        }
        // Stemmed queries (synonym tables written per shard, merged by compaction) answer as the sequential
        // index does, duplicates across shards included.
        let stemmed = ["messages", "attached", "lists", "running", "words", "subject:replies", "from:lists"]
        let seq = try MailIndex(path: tree.dir.path + "/seq")
        let seqAnswers = try stemmed.map { Set(try seq.messages(try seq.query($0)).map(\.record.id)) }
        #expect(seqAnswers.contains { !$0.isEmpty })
        for threads in [2, 3, 5] {
            let sharded = try MailIndex(path: tree.dir.path + "/sharded\(threads)")
            #expect(try stemmed.map { Set(try sharded.messages(try sharded.query($0)).map(\.record.id)) } == seqAnswers)
        }
        let index = try MailIndex(path: tree.dir.path + "/sharded3")
        let thread = try index.messages(try index.query("id:aa-root@x"))[0].thread
        #expect(Set(try index.thread(thread).map(\.record.id)) == ["aa-root@x", "zz-reply@x", "mm-reply@x"])
    }

    /// Stems live in the synonym table (IndexSchema): each way of writing documents must fill it in the same
    /// commit, and stemmed queries must match what Z terms matched.
    @Test func stemmedQueriesMatchInEveryBuildPath() throws {
        let tree = try IndexedTree(folders: ["INBOX": []])
        try deliver(
            tree, "INBOX", "1.a.host:2,S",
            "From: Runner <runner@x>\nSubject: Galloping horses\nMessage-ID: <a@x>\n\nthe horses were galloping\n")
        try deliver(tree, "INBOX", "2.b.host:2,S", "From: b@x\nSubject: other\nMessage-ID: <b@x>\n\nHe gallops; 2002s and 3rd\n")
        let queries = [
            "gallop", "galloped", "horse", "subject:horses", "subject:gallop", "body:horse", "from:runners",
            "2002", "2002s", "3rd", "\"were galloping\"", "gallop*"
        ]
        var answers: [[Set<String>]] = []
        for threshold in [Int.max, 1] {
            let path = tree.dir.path + "/index\(threshold)"
            let updater = IndexUpdater(indexPath: path, roots: tree.roots)
            updater.shardThreshold = threshold
            _ = try updater.run()
            let index = try MailIndex(path: path)
            answers.append(try queries.map { Set(try index.messages(try index.query($0)).map(\.record.id)) })
        }
        #expect(answers[0] == answers[1])
        // from: and subject: match words as written, as notmuch's do (IndexSchema.unstemmedFields).
        #expect(
            answers[0] == [
                ["a@x", "b@x"], ["a@x", "b@x"], ["a@x"], ["a@x"], [], ["a@x"], [],
                [], ["b@x"], ["b@x"], ["a@x"], ["a@x", "b@x"]
            ])
        // An incremental update: a new word's stem synonyms come with the document.
        try deliver(tree, "INBOX", "3.c.host:2,S", "From: c@x\nSubject: later\nMessage-ID: <c@x>\n\nquickly jumped\n")
        let path = tree.dir.path + "/index1"
        _ = try IndexUpdater(indexPath: path, roots: tree.roots).run()
        let index = try MailIndex(path: path)
        #expect(Set(try index.messages(try index.query("jumping quick")).map(\.record.id)) == ["c@x"])
        #expect(Set(try index.messages(try index.query("gallop")).map(\.record.id)) == ["a@x", "b@x"])
    }

    @Test func progressIsReportedOnBothBuildPaths() throws {
        let tree = try IndexedTree()
        let total = IndexedTree.fixtureNames.count
        for threshold in [Int.max, 1] {
            let updater = IndexUpdater(indexPath: tree.dir.path + "/p\(threshold)", roots: tree.roots)
            updater.shardThreshold = threshold
            let reports = Mutex<[(Int, Int)]>([])
            updater.progress = { done, all in reports.withLock { $0.append((done, all)) } }
            _ = try updater.run()
            let seen = reports.withLock { $0 }
            #expect(seen.last.map { $0.0 == total && $0.1 == total } == true, "\(seen)")
            #expect(seen.allSatisfy { $0.0 <= $0.1 })
        }
    }

    /// Phrases match anywhere in a long body (format 6; 4 and 5 stopped positions at 4 KiB).
    @Test func phrasesMatchAnywhereInALongBody() throws {
        let tree = try IndexedTree(folders: ["INBOX": []])
        let filler = String(repeating: "lorem ipsum ", count: 500)  // 6,000 bytes
        try deliver(
            tree, "INBOX", "1.long.host:2,S",
            "From: a@x\nSubject: long\nMessage-ID: <long@x>\n\nearly phrase here " + filler + " late phrase there\n")
        try tree.update()
        #expect(try tree.ids("\"early phrase\"") == ["long@x"])
        #expect(try tree.ids("\"late phrase\"") == ["long@x"])  // 6,000 bytes in
        #expect(try tree.ids("\"phrase late\"").isEmpty)  // in order only
    }

    @Test func aFormatOneIndexIsRefusedByReadersAndRebuiltByUpdate() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml"]])
        // Format 1: the glass database directly in the index directory.
        let old = try WritableXapianDatabase(path: tree.indexPath)
        let doc = XapianDocument()
        try doc.addBooleanTerm("Qold@x")
        try old.addDocument(doc)
        try old.setMetadata(IndexSchema.Metadata.format, "1")
        try old.close()
        #expect {
            _ = try tree.index()
        } throws: { error in
            (error as? GenericError)?.kind == .data && "\(error)".contains("run `mo-index update` to rebuild it")
        }
        let summary = try tree.update()
        #expect(summary.rebuiltFromFormat == "1" && summary.added == 1)
        #expect(IndexDirectory.readStub(tree.indexPath) != nil)  // the stub layout now
        #expect(!FileManager.default.fileExists(atPath: tree.indexPath + "/iamglass"))
        #expect(try tree.ids("*").count == 1 && tree.ids("id:old@x").isEmpty)
    }

    /// Format 4 stored "Z" stem terms in documents and had no stem synonyms: its documents still match
    /// stemmed queries. Its body positions stopped at 4 KiB, so the next update rebuilds it (format 6), and
    /// every message, the old one included, is found the same way after.
    @Test func aFormatFourIndexIsReadThenRebuilt() throws {
        let tree = try IndexedTree(folders: ["INBOX": []])
        try deliver(tree, "INBOX", "1.a.host:2,S", "From: a@x\nSubject: one\nMessage-ID: <a@x>\n\nthe horses were galloping\n")
        try tree.update()
        let db = try WritableXapianDatabase(path: tree.indexPath, mode: .open)
        let doc = XapianDocument()
        let generator = try XapianTermGenerator(stemmingLanguage: "english")
        try generator.setDocument(doc)
        try generator.indexText("a horse gallops")
        // Its file is on disk (so updates keep it); the index never saw it parsed by this build.
        try deliver(tree, "INBOX", "0.old.host:2,S", "From: o@x\nSubject: old\nMessage-ID: <old@x>\n\na horse gallops\n")
        let record = MessageRecord(
            id: "old@x", date: 0, subject: "old", from: "o@x", recipients: [], inReplyTo: [],
            references: [], strictInReplyTo: "", files: ["INBOX/cur/0.old.host:2,S"])
        try doc.setData(record.encoded())
        try doc.addBooleanTerm(IndexSchema.Prefix.id + "old@x")
        try DocumentTerms.setListingValues(doc, record: record)
        try DocumentTerms.setThread(doc, "0000000000000001", previous: nil)
        try DocumentTerms.setFileTerms(doc, id: record.id, files: record.files, tags: TagTerms(roots: []), fresh: true)
        try db.addDocument(doc)
        try db.setMetadata(IndexSchema.Metadata.format, "4")
        try db.close()
        #expect(try tree.ids("galloped") == ["a@x", "old@x"])
        try deliver(tree, "INBOX", "2.b.host:2,S", "From: b@x\nSubject: two\nMessage-ID: <b@x>\n\ngallop on\n")
        try tree.update()
        // Rebuilt from the mail: all three through the synonym table.
        #expect(try tree.ids("gallops") == ["a@x", "b@x", "old@x"])
        #expect(String(decoding: try tree.index().db.metadata(IndexSchema.Metadata.format), as: UTF8.self) == IndexSchema.formatVersion)
    }

    @Test func compactRepacksAnUpdatedIndexWithTheSameAnswers() throws {
        let tree = try IndexedTree()
        try tree.update()
        for i in 0..<20 {
            try deliver(
                tree, "Later", "\(i).late.host:2,",
                "From: p\(i)@x\nSubject: later \(i)\nMessage-ID: <late\(i)@x>\n\nword\(i) running text\n")
            if i % 5 == 4 { try tree.update() }
        }
        let queries = ["*", "running", "subject:later", "folder:Later", "word7"]
        let before = try queries.map(tree.ids)
        let reader = try tree.index()
        let generation = IndexDirectory.readStub(tree.indexPath)!
        let sizes = try IndexUpdater.compact(indexPath: tree.indexPath)
        #expect(sizes.after < sizes.before)
        #expect(IndexDirectory.readStub(tree.indexPath) == generation + 1)
        #expect(try queries.map(tree.ids) == before)
        #expect(try reader.messages(try reader.query("running")).count == before[1].count)  // opened before the switch
        try tree.update()  // the compacted database takes updates
        #expect(try tree.ids("*") == before[0])
        #expect(throws: GenericError.self) { try IndexUpdater.compact(indexPath: tree.dir.path + "/none") }
    }

    @Test func aSwitchKeepsOpenReadersWorkingAndLeftoversGo() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml", "sa-alternative.eml"]])
        try tree.update()
        #expect(IndexDirectory.readStub(tree.indexPath) == 2)  // a new index is compacted into db.2
        #expect(!FileManager.default.fileExists(atPath: tree.indexPath + "/db.1"))
        let reader = try tree.index()
        // A crash during a build or compaction leaves these.
        try FileManager.default.createDirectory(atPath: tree.indexPath + "/build.0", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: tree.indexPath + "/db.3", withIntermediateDirectories: true)
        do {
            let directory = try IndexDirectory(path: tree.indexPath)
            #expect(!FileManager.default.fileExists(atPath: tree.indexPath + "/build.0"))
            #expect(!FileManager.default.fileExists(atPath: tree.indexPath + "/db.3"))
            try xapianCompact([directory.currentPath], into: directory.nextPath)
            try directory.switchToNext()
        }
        #expect(IndexDirectory.readStub(tree.indexPath) == 3)
        #expect(!FileManager.default.fileExists(atPath: tree.indexPath + "/db.2"))
        #expect(try reader.messageCount == 2)  // reads the unlinked db.2
        #expect(try reader.messages(try reader.query("*")).count == 2)
        #expect(try tree.index().messageCount == 2)  // a new reader gets db.3
        #expect(try tree.update().isNoOp)
    }

    @Test func theUpdateLockRefusesASecondUpdater() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml"]])
        try tree.update()
        let holder = try IndexDirectory(path: tree.indexPath)
        #expect {
            try tree.update()
        } throws: { error in
            (error as? GenericError)?.kind == .busy && "\(error)".contains("being updated by another process")
        }
        holder.unlock()
        #expect(try tree.update().isNoOp)
    }
}
