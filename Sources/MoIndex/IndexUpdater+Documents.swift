import MoCore
import Threading
import XapianKit

/// Steps 3–6 of an update: the writes to message documents. Nothing here commits but step 5's bounds on
/// Xapian's buffers; the final commit is `IndexUpdater.commitUpdate`.
extension IndexUpdater {
    /// Step 4's result: the thread partition kept up to date while files are added, and the thread id each
    /// document has (the documents written in step 5 included).
    struct ThreadState {
        /// Messages come or go, or an earlier update left threads dirty: the partition was loaded and
        /// step 6 rewrites the thread ids that changed.
        let active: Bool
        var index = ThreadIndex()
        /// Message-ID → the thread id its document was written with.
        var written: [String: String] = [:]
    }

    /// Step 3: renames and removals touch the documents found by their file terms; a message whose last file
    /// went is deleted. Returns the deleted messages' ids.
    func applyRenamesAndRemovals(
        _ diff: FileDiff, _ db: WritableXapianDatabase, tags: TagTerms,
        into summary: inout UpdateSummary
    ) throws -> Set<String> {
        let reader = db.reader
        var changedDocs: [String: (record: MessageRecord, files: [String])] = [:]  // by Message-ID
        func record(ofFile path: String) throws -> MessageRecord? {
            guard let doc = try reader.document(uniqueTerm: IndexSchema.Prefix.file + path) else { return nil }
            return MessageRecord(decoding: try doc.data())
        }
        for (old, new) in diff.renames.sorted(by: { $0.key < $1.key }) {
            guard let record = try record(ofFile: old) else { continue }
            var entry = changedDocs[record.id] ?? (record, record.files)
            entry.files = entry.files.map { $0 == old ? new : $0 }
            changedDocs[record.id] = entry
            summary.renamed += 1
        }
        for path in diff.removals {
            guard let record = try record(ofFile: path) else { continue }
            var entry = changedDocs[record.id] ?? (record, record.files)
            entry.files.removeAll { $0 == path }
            changedDocs[record.id] = entry
            summary.removedFiles += 1
        }
        var removedIDs = Set<String>()
        for (id, entry) in changedDocs {
            let term = IndexSchema.Prefix.id + id
            if entry.files.isEmpty {
                try db.deleteDocuments(uniqueTerm: term)
                removedIDs.insert(id)
                summary.removed += 1
                continue
            }
            try rewriteFiles(db, reader, id: id, files: entry.files, tags: tags)
        }
        return removedIDs
    }

    /// Step 4: every stored message's links, when `needed`. Marks threads dirty (committed with the first
    /// commit of step 5, or the final one) until step 6 has rewritten them.
    func loadThreads(_ db: WritableXapianDatabase, needed: Bool) throws -> ThreadState {
        var threads = ThreadState(active: needed)
        guard needed else { return threads }
        try db.setMetadata(Self.threadsDirtyKey, "1")
        let reader = db.reader
        let lastID = try reader.lastDocumentID
        if lastID > 0 {
            for docID in 1...lastID {
                guard let doc = try? reader.document(docID), let record = MessageRecord(decoding: try doc.data()) else { continue }
                threads.index.add(Self.threadInput(record))
                threads.written[record.id] = String(decoding: try doc.value(slot: IndexSchema.Slot.thread), as: UTF8.self)
            }
        }
        return threads
    }

    /// Step 5: the new files, parsed in parallel, written here, committed every `commitInterval` documents
    /// or `commitBytes` of mail.
    func addNewFiles(
        _ jobs: [ParallelParser.Job], _ db: WritableXapianDatabase, threads: inout ThreadState,
        tags: TagTerms, pending: RulesPending, into summary: inout UpdateSummary
    ) throws {
        let reader = db.reader
        var sinceCommit = 0, sinceCommitBytes = 0
        // A new document's words get their stem synonyms in the same commit: a crash cannot leave a document
        // that stemmed queries miss. The new messages' ids go into every commit that adds them. On an error,
        // the caller's closing of the writer commits what was added, so both are staged first.
        let synonyms = try IndexSchema.stemSynonyms()
        defer { try? synonyms.write(to: db) }
        defer { try? db.setMetadata(Self.rulesPendingKey, pending.value(adding: summary.newMessageIDs)) }
        let parser = ParallelParser(jobs: jobs)
        var ticker = ProgressTicker(total: jobs.count, report: progress)
        defer { ticker.finish() }
        try parser.run(threads: parserThreads) { outcome in
            ticker.step()
            switch outcome {
            case .skipped(let file, let reason):
                summary.skipped += 1
                summary.skippedFiles.append(file)
                summary.warnings.append("\(quotedForMessage(file)): \(reason); skipped")
            case .message(let prepared):
                if let thread = try Self.write(prepared, db, reader, threads: &threads.index, tags: tags) {
                    threads.written[prepared.record.id] = thread
                    try synonyms.add(prepared.document)
                    summary.added += 1
                    summary.newMessageIDs.append(prepared.record.id)
                } else {
                    summary.addedFiles += 1
                }
                sinceCommit += 1
                sinceCommitBytes += prepared.size
                if sinceCommit >= commitInterval || sinceCommitBytes >= commitBytes {
                    try synonyms.write(to: db)
                    try db.setMetadata(Self.rulesPendingKey, pending.value(adding: summary.newMessageIDs))
                    try db.commit()
                    sinceCommit = 0
                    sinceCommitBytes = 0
                    log("\(summary.added) messages indexed")
                }
            }
        }
        try synonyms.write(to: db)
    }

    /// Step 6: thread ids that changed since they were written (merges, new anchors, removals).
    func rewriteThreads(_ threads: ThreadState, _ db: WritableXapianDatabase, into summary: inout UpdateSummary) throws {
        guard threads.active else { return }
        let reader = db.reader
        for (id, written) in threads.written {
            guard let now = threads.index.threadID(of: id)?.rawValue, now != written else { continue }
            guard let doc = try reader.document(uniqueTerm: IndexSchema.Prefix.id + id) else { continue }
            try DocumentTerms.setThread(doc, now, previous: written)
            try db.replaceDocument(uniqueTerm: IndexSchema.Prefix.id + id, with: doc)
            summary.threadsRewritten += 1
        }
        try db.setMetadata(Self.threadsDirtyKey, "")
    }

    /// Writes one parsed file: a new document (returns the thread id written), or another file of a message
    /// `db` already has (returns nil). `threads` learns the file's links either way.
    /// `thread`: the id to write instead of `threads`' current one (`ShardedBuild`'s prediction).
    static func write(
        _ prepared: PreparedMessage, _ db: WritableXapianDatabase, _ reader: XapianDatabase,
        threads: inout ThreadIndex, thread predicted: String? = nil, tags: TagTerms
    ) throws -> String? {
        let record = prepared.record
        if try reader.termExists(IndexSchema.Prefix.id + record.id) {
            try addFile(db, reader, prepared, threads: &threads, tags: tags)
            return nil
        }
        let doc = prepared.document
        try doc.setData(record.encoded())
        try DocumentTerms.setFileTerms(doc, id: record.id, files: record.files, tags: tags, fresh: true)
        let change = threads.add(threadInput(record))
        let thread = predicted ?? change.thread?.rawValue ?? ThreadID(anchor: record.id).rawValue
        try DocumentTerms.setThread(doc, thread, previous: nil)
        try db.addDocument(doc)
        return thread
    }

    static func threadInput(_ r: MessageRecord) -> ThreadInput {
        ThreadInput(
            messageID: r.id, inReplyTo: r.inReplyTo, references: r.references, date: r.date,
            strictInReplyTo: .some(r.strictInReplyTo))
    }

    /// Replaces a message's file list (flags, folders) without touching its content terms.
    private func rewriteFiles(
        _ db: WritableXapianDatabase, _ reader: XapianDatabase, id: String, files: [String],
        tags: TagTerms
    ) throws {
        let term = IndexSchema.Prefix.id + id
        guard let doc = try reader.document(uniqueTerm: term), var record = MessageRecord(decoding: try doc.data()) else { return }
        record.files = files
        try doc.setData(record.encoded())
        try DocumentTerms.setFileTerms(doc, id: id, files: files, tags: tags, fresh: false)
        try db.replaceDocument(uniqueTerm: term, with: doc)
    }

    /// Another file of an indexed message: its file terms, and its thread links (notmuch links the
    /// headers of every file of a message).
    static func addFile(
        _ db: WritableXapianDatabase, _ reader: XapianDatabase, _ prepared: PreparedMessage,
        threads: inout ThreadIndex, tags: TagTerms
    ) throws {
        let term = IndexSchema.Prefix.id + prepared.record.id
        guard let doc = try reader.document(uniqueTerm: term), var record = MessageRecord(decoding: try doc.data()) else { return }
        record.files.append(prepared.file)
        let extra = prepared.record
        for id in extra.references where !record.references.contains(id) { record.references.append(id) }
        for id in extra.inReplyTo where !record.inReplyTo.contains(id) { record.inReplyTo.append(id) }
        if !extra.references.isEmpty || !extra.inReplyTo.isEmpty { threads.add(Self.threadInput(extra)) }
        try doc.setData(record.encoded())
        try DocumentTerms.setFileTerms(doc, id: record.id, files: record.files, tags: tags, fresh: false)
        try db.replaceDocument(uniqueTerm: term, with: doc)
    }
}
