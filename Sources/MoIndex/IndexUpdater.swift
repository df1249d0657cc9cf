import Foundation
import Maildir
import MoCore
import Threading
import XapianKit

/// What an update did.
public struct UpdateSummary: Sendable, Equatable {
    public var added = 0            // new messages
    public var addedFiles = 0       // extra files of messages already indexed
    public var renamed = 0          // files renamed or moved (flags, folder): no re-parse
    public var removedFiles = 0
    public var removed = 0          // messages whose last file went
    public var skipped = 0          // files that are not mail
    public var retagged = 0         // documents whose tags were recomputed without a rename (upgrade, keyword table, local tags)
    /// Message-IDs of the messages new in this update (not renames, not extra files).
    public var newMessageIDs: [String] = []
    /// With `recordsNewMessages`: the messages the tag rules have yet to see (earlier runs' not yet
    /// `rulesApplied`, then this run's new ones). See IndexUpdater+Tags.
    public var rulesPending: [String] = []
    public var threadsRewritten = 0 // documents whose thread id changed
    public var scannedDirectories = 0
    /// The older format this update rebuilt the index from (nil: none).
    public var rebuiltFromFormat: String?
    public var warnings: [String] = []
    public var isNoOp: Bool { scannedDirectories == 0 && threadsRewritten == 0 && retagged == 0 }
}

/// Brings an index up to date with its roots, incrementally (see docs/index-schema.md):
/// 1. stat every directory recorded in `mo-index-dirs`; unchanged ones are not read at all;
/// 2. rescan changed folders and diff their files against the `XFILE:` terms: a file whose Maildir
///    unique name reappears elsewhere is a rename (flags, cur/new, folder): only file terms change;
/// 3. parse new files on worker threads, write on this thread (Xapian handles are single-threaded);
/// 4. when messages came or went, recompute threads from every message's stored links
///    (Threading.ThreadIndex) and rewrite the documents whose thread id changed.
public final class IndexUpdater {
    let indexPath: String
    let roots: [IndexRoot]
    /// Documents written between commits: bounds Xapian's buffers (and so peak memory).
    public var commitInterval = 4000
    /// Bytes of mail files written between commits: bounds Xapian's buffers when messages are big.
    public var commitBytes = 8 << 20
    /// A new index of at least this many files is built in shards on every core (`ShardedBuild`).
    public var shardThreshold = 2000
    /// Bytes of mail files each shard writer takes between commits. Xapian's buffers hold several times the
    /// mail's bytes, and commits to a small database are cheap (at 1.5–6 MB, smaller was no slower).
    public var shardCommitBytes = 2 << 20
    public var parserThreads = ProcessInfo.processInfo.activeProcessorCount
    /// The configuration's `[keywords]` table (keyword → tag), over `TagVocabulary`'s defaults.
    public var keywordTable: [(keyword: String, tag: String)] = []
    /// The `LocalTagStore` whose tags the index adds (default: beside the index directory).
    public var localTagsPath: String
    /// Keep new messages' ids for the tag rules (`rulesPending`), until a run names them in `rulesApplied`.
    public var recordsNewMessages = false
    public var rulesApplied: Set<String> = []
    /// Progress lines (for --verbose).
    public var log: (String) -> Void = { _ in }
    /// New files parsed so far, of how many (for a status line on a terminal); called at most every 0.2 s
    /// and once at the end, from the updating thread.
    public var progress: ((_ done: Int, _ total: Int) -> Void)?

    static let threadsDirtyKey = "mo-index-threads-dirty"

    public init(indexPath: String, roots: [IndexRoot]) {
        self.indexPath = indexPath
        self.roots = roots
        self.localTagsPath = LocalTagStore.path(forIndex: indexPath)
    }

    /// Opens the writer: a second writer gets a `.busy` error naming the index.
    static func openWriter(_ path: String) throws -> WritableXapianDatabase {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw IndexError(.localIO, "cannot create the index directory \(quotedForMessage(path)): \(error.localizedDescription)")
        }
        // Xapian's lock, likewise, may be held for a moment by a child between its fork and its exec.
        var result = Result { () throws(XapianError) in try WritableXapianDatabase(path: path) }
        for _ in 0..<20 {
            guard case .failure(let e) = result, e.kind == .busy else { break }
            usleep(50_000)
            result = Result { () throws(XapianError) in try WritableXapianDatabase(path: path) }
        }
        switch result {
        case .success(let db): return db
        case .failure(let e) where e.kind == .busy:
            throw IndexError(.busy, "index \(quotedForMessage(path)) is being updated by another process; try again when it finishes")
        case .failure(let e): throw e
        }
    }

    public func run() throws -> UpdateSummary {
        let directory = try IndexDirectory(path: indexPath)  // the update lock, held until we return
        defer { directory.unlock() }
        var db = try Self.openWriter(indexPath)
        defer { try? db.close() }
        var summary = UpdateSummary()
        let oldFormat = String(decoding: try db.reader.metadata(IndexSchema.Metadata.format), as: UTF8.self)
        if IndexSchema.rebuiltOnUpdate.contains(oldFormat) {
            try db.close()
            try directory.startOver()
            db = try Self.openWriter(indexPath)
            summary.rebuiltFromFormat = oldFormat
            log("index format \(oldFormat) is older than \(IndexSchema.formatVersion): rebuilding it from the mail")
        }
        let reader = db.reader
        try MailIndex.checkFormat(reader, path: indexPath, allowEmpty: true)
        let retags = try tagChanges(reader)
        let tags = retags.tags
        let pending = try rulesPending(reader)
        // A new index is compacted when written (and maybe built in shards): see IndexDirectory.
        let fresh = try reader.documentCount == 0 && directory.isReplaceable

        let storedRoots = IndexRoot.decode(String(decoding: try reader.metadata(IndexSchema.Metadata.roots), as: UTF8.self))
        let stored = DirectoryState(decoding: String(decoding: try reader.metadata(IndexSchema.Metadata.directories), as: UTF8.self))
        let threadsDirty = !(try reader.metadata(Self.threadsDirtyKey)).isEmpty
        let fullScan = storedRoots != roots || stored.entries.isEmpty

        // 1. Which folders to rescan, and which recorded directories are gone.
        var foldersToScan: [(root: IndexRoot, folder: String)] = []
        var goneDirectories: [(root: String, relative: String)] = []
        var newState = DirectoryState()
        var relist = Set<String>()  // root names
        if fullScan {
            relist = Set(roots.map(\.name))
            for entry in stored.entries.values where entry.kind == .messages {
                goneDirectories.append((entry.root, entry.relative))
            }
        } else {
            var changedFolders = Set<String>()
            for (key, entry) in stored.entries {
                guard let root = roots.first(where: { $0.name == entry.root }) else { continue }
                let mtime = DirectoryState.mtime(DirectoryState.join(root.path, entry.relative))
                if mtime == entry.mtime { newState.entries[key] = entry; continue }
                switch entry.kind {
                case .hierarchy: relist.insert(root.name)
                case .messages:
                    if mtime == nil { goneDirectories.append((root.name, entry.relative)); relist.insert(root.name) }
                    let folder = (entry.relative as NSString).deletingLastPathComponent
                    if changedFolders.insert(DirectoryState.key(root.name, folder)).inserted, mtime != nil {
                        foldersToScan.append((root, folder))
                    }
                }
            }
        }
        for root in roots where relist.contains(root.name) {
            let listing = FolderWalker.listFolders(root)
            log("\(root.path): \(listing.folders.count) folders")
            summary.warnings += listing.warnings
            for h in listing.hierarchy {
                if let m = DirectoryState.mtime(DirectoryState.join(root.path, h)) {
                    newState.set(.init(mtime: m, kind: .hierarchy, root: root.name, relative: h))
                }
            }
            let present = Set(listing.folders.flatMap { [DirectoryState.join($0, "cur"), DirectoryState.join($0, "new")] })
            for (_, entry) in stored.entries where entry.root == root.name && entry.kind == .messages
                && !present.contains(entry.relative) && !fullScan {
                goneDirectories.append((root.name, entry.relative))
                newState.entries[DirectoryState.key(root.name, entry.relative)] = nil
            }
            for folder in listing.folders {
                let known = stored.entries[DirectoryState.key(root.name, DirectoryState.join(folder, "cur"))] != nil
                    || stored.entries[DirectoryState.key(root.name, DirectoryState.join(folder, "new"))] != nil
                if fullScan || !known, !foldersToScan.contains(where: { $0.root == root && $0.folder == folder }) {
                    foldersToScan.append((root, folder))
                }
            }
        }
        if foldersToScan.isEmpty && goneDirectories.isEmpty && !threadsDirty && !fullScan && retags.isEmpty {
            summary.rulesPending = pending.ids(adding: [])
            if newState != stored || pending.value(adding: []) != pending.stored {
                try db.setMetadata(IndexSchema.Metadata.directories, newState.encoded())
                try db.setMetadata(Self.rulesPendingKey, pending.value(adding: []))
                try db.commit()
            }
            return summary
        }

        log("\(foldersToScan.count) folders to scan, \(goneDirectories.count) directories gone")
        // 2. Scan, and diff against the files the index holds.
        var onDisk: [String: String] = [:]  // index path -> absolute path
        var inIndex = Set<String>()
        for (root, folder) in foldersToScan {
            summary.scannedDirectories += 2
            for sub in ["cur", "new"] {
                let rel = DirectoryState.join(folder, sub)
                if let m = DirectoryState.mtime(DirectoryState.join(root.path, rel)) {
                    newState.set(.init(mtime: m, kind: .messages, root: root.name, relative: rel))
                }
                try storedFiles(reader, root.indexPath(rel), into: &inIndex)
            }
            for sub in ["new", "cur"] {
                let rel = DirectoryState.join(folder, sub)
                guard let names = FolderWalker.files(DirectoryState.join(root.path, rel), warnings: &summary.warnings) else { continue }
                for name in names { onDisk[root.indexPath(rel + "/" + name)] = DirectoryState.join(root.path, rel) + "/" + name }
            }
        }
        for (root, relative) in goneDirectories {
            let prefix = roots.first { $0.name == root }?.indexPath(relative)
                ?? (root.isEmpty ? relative : root + "/" + relative)
            try storedFiles(reader, prefix, into: &inIndex)
        }

        var added = onDisk.keys.filter { !inIndex.contains($0) }.sorted()
        let gone = inIndex.filter { onDisk[$0] == nil }.sorted()
        // A gone file whose unique name reappears is the same file renamed.
        var addedByUnique: [String: [String]] = [:]
        for path in added { addedByUnique[renameKey(path), default: []].append(path) }
        var renames: [String: String] = [:]
        var removals: [String] = []
        for path in gone {
            let key = renameKey(path)
            if var candidates = addedByUnique[key], !candidates.isEmpty {
                renames[path] = candidates.removeFirst()
                addedByUnique[key] = candidates
            } else {
                removals.append(path)
            }
        }
        let renamedTargets = Set(renames.values)
        added.removeAll { renamedTargets.contains($0) }

        // 3. Renames and removals touch documents found by their file terms.
        var changedDocs: [String: (record: MessageRecord, files: [String])] = [:]  // by Message-ID
        func document(ofFile path: String) throws -> (XapianDocument, MessageRecord)? {
            guard let doc = try reader.document(uniqueTerm: IndexSchema.Prefix.file + path),
                  let record = MessageRecord(decoding: try doc.data()) else { return nil }
            return (doc, record)
        }
        for (old, new) in renames.sorted(by: { $0.key < $1.key }) {
            guard let (_, record) = try document(ofFile: old) else { continue }
            var entry = changedDocs[record.id] ?? (record, record.files)
            entry.files = entry.files.map { $0 == old ? new : $0 }
            changedDocs[record.id] = entry
            summary.renamed += 1
        }
        for path in removals {
            guard let (_, record) = try document(ofFile: path) else { continue }
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

        let jobs = added.map { ParallelParser.Job(absolutePath: onDisk[$0]!, indexPath: $0) }
        let metadata = [(IndexSchema.Metadata.format, IndexSchema.formatVersion),
                        (IndexSchema.Metadata.roots, IndexRoot.encode(roots)),
                        (IndexSchema.Metadata.directories, newState.encoded())] + retags.metadata
        if fresh && jobs.count >= shardThreshold {
            let build = ShardedBuild(jobs: jobs, directory: directory, threads: parserThreads, tags: tags,
                                     commitBytes: shardCommitBytes, log: log, progress: progress)
            try build.run(into: &summary) { summary in
                metadata + [(Self.rulesPendingKey, pending.value(adding: summary.newMessageIDs))]
            }
            summary.rulesPending = pending.ids(adding: summary.newMessageIDs)
            try db.close()
            try directory.switchToNext()
            return summary
        }

        // 4. Threading state: every stored message's links, when messages come or go.
        let threading = !added.isEmpty || !removedIDs.isEmpty || threadsDirty
        var threads = ThreadIndex()
        var writtenThread: [String: String] = [:]
        if threading {
            try db.setMetadata(Self.threadsDirtyKey, "1")
            let lastID = try reader.lastDocumentID
            if lastID > 0 {
                for docID in 1...lastID {
                    guard let doc = try? reader.document(docID), let record = MessageRecord(decoding: try doc.data()) else { continue }
                    threads.add(Self.threadInput(record))
                    writtenThread[record.id] = String(decoding: try doc.value(slot: IndexSchema.Slot.thread), as: UTF8.self)
                }
            }
        }

        // 5. New files, parsed in parallel, written here.
        var sinceCommit = 0, sinceCommitBytes = 0
        // A new document's words get their stem synonyms in the same commit: a crash cannot leave a document
        // that stemmed queries miss. On an error, closing the writer (deferred above) commits what was added,
        // so the synonyms collected so far go in first (defers run in reverse order).
        let synonyms = try IndexSchema.stemSynonyms()
        defer { try? synonyms.write(to: db) }
        // The new messages' ids go into every commit that adds them (on an error too: this runs first).
        defer { try? db.setMetadata(Self.rulesPendingKey, pending.value(adding: summary.newMessageIDs)) }
        let parser = ParallelParser(jobs: jobs)
        var ticker = ProgressTicker(total: jobs.count, report: progress)
        defer { ticker.finish() }
        try parser.run(threads: parserThreads) { outcome in
            ticker.step()
            switch outcome {
            case .skipped(let file, let reason):
                summary.skipped += 1
                summary.warnings.append("\(quotedForMessage(file)): \(reason); skipped")
            case .message(let prepared):
                if let thread = try Self.write(prepared, db, reader, threads: &threads, tags: tags) {
                    writtenThread[prepared.record.id] = thread
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

        // 6. Thread ids that changed since they were written (merges, new anchors, removals).
        if threading {
            for (id, written) in writtenThread {
                guard let now = threads.threadID(of: id)?.rawValue, now != written else { continue }
                guard let doc = try reader.document(uniqueTerm: IndexSchema.Prefix.id + id) else { continue }
                try DocumentTerms.setThread(doc, now, previous: written)
                try db.replaceDocument(uniqueTerm: IndexSchema.Prefix.id + id, with: doc)
                summary.threadsRewritten += 1
            }
            try db.setMetadata(Self.threadsDirtyKey, "")
        }

        // 7. Tags that changed without a rename (documents just written have them already).
        summary.retagged = try retag(db, reader, retags)

        try synonyms.write(to: db)
        for (key, value) in metadata { try db.setMetadata(key, value) }
        try db.setMetadata(Self.rulesPendingKey, pending.value(adding: summary.newMessageIDs))
        summary.rulesPending = pending.ids(adding: summary.newMessageIDs)
        try db.commit()
        if fresh && summary.added > 0 {
            // Incremental commits leave blocks part-empty: a compacted copy is about half the size.
            try xapianCompact([directory.currentPath], into: directory.nextPath)
            try db.close()
            try directory.switchToNext()
        }
        return summary
    }

    /// Writes one parsed file: a new document (returns the thread id written), or another file of a message
    /// `db` already has (returns nil). `threads` learns the file's links either way.
    /// `thread`: the id to write instead of `threads`' current one (`ShardedBuild`'s prediction).
    static func write(_ prepared: PreparedMessage, _ db: WritableXapianDatabase, _ reader: XapianDatabase,
                      threads: inout ThreadIndex, thread predicted: String? = nil, tags: TagTerms) throws -> String? {
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

    /// Renames are matched within a root by Maildir unique name.
    func renameKey(_ path: String) -> String {
        let root = roots.first { !$0.name.isEmpty && path.hasPrefix($0.name + "/") }?.name ?? ""
        return root + "\u{0}" + IndexedFile(path).unique
    }

    static func threadInput(_ r: MessageRecord) -> ThreadInput {
        ThreadInput(messageID: r.id, inReplyTo: r.inReplyTo, references: r.references, date: r.date,
                    strictInReplyTo: .some(r.strictInReplyTo))
    }

    /// The `XFILE:` terms under a directory, as index paths.
    private func storedFiles(_ reader: XapianDatabase, _ directory: String, into set: inout Set<String>) throws {
        let prefix = IndexSchema.Prefix.file + directory + "/"
        let skip = IndexSchema.Prefix.file.utf8.count
        for (term, _) in try reader.allTerms(withPrefix: prefix) {
            set.insert(String(decoding: term.dropFirst(skip), as: UTF8.self))
        }
    }

    /// Replaces a message's file list (flags, folders) without touching its content terms.
    private func rewriteFiles(_ db: WritableXapianDatabase, _ reader: XapianDatabase, id: String, files: [String],
                              tags: TagTerms) throws {
        let term = IndexSchema.Prefix.id + id
        guard let doc = try reader.document(uniqueTerm: term), var record = MessageRecord(decoding: try doc.data()) else { return }
        record.files = files
        try doc.setData(record.encoded())
        try DocumentTerms.setFileTerms(doc, id: id, files: files, tags: tags, fresh: false)
        try db.replaceDocument(uniqueTerm: term, with: doc)
    }

    /// Another file of an indexed message: its file terms, and its thread links (notmuch links the
    /// headers of every file of a message).
    static func addFile(_ db: WritableXapianDatabase, _ reader: XapianDatabase, _ prepared: PreparedMessage,
                        threads: inout ThreadIndex, tags: TagTerms) throws {
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

    /// The root, every folder directory and every directory between them: where new folders appear.
    static func hierarchyDirectories(_ folders: [String]) -> Set<String> {
        var out: Set<String> = [""]
        for folder in folders where !folder.isEmpty {
            var parts = folder.split(separator: "/").map(String.init)
            while !parts.isEmpty {
                out.insert(parts.joined(separator: "/"))
                parts.removeLast()
            }
        }
        return out
    }
}

extension IndexUpdater {
    /// Re-packs the index into db.N+1 and switches to it (as after a full index), under the update lock;
    /// readers keep working. Incremental updates split the full blocks of a compacted database (Xapian's
    /// B-trees are copy-on-write and keyed by term, so a few new messages touch blocks everywhere): it
    /// settles near 2.5 times its compacted size. Returns the database's bytes before and after.
    public static func compact(indexPath: String) throws -> (before: Int64, after: Int64) {
        _ = try MailIndex(path: indexPath)  // exists, has a format this build reads
        let directory = try IndexDirectory(path: indexPath)
        defer { directory.unlock() }
        guard directory.isReplaceable else {
            throw IndexError(.data, "index \(quotedForMessage(indexPath)) has the old layout: run `mo-index update` to rebuild it")
        }
        let before = bytesInside(directory.currentPath)
        try xapianCompact([directory.currentPath], into: directory.nextPath)
        try directory.switchToNext()
        return (before, bytesInside(directory.currentPath))
    }

    /// The bytes of the files directly in `dir`.
    static func bytesInside(_ dir: String) -> Int64 {
        var total: Int64 = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            var st = stat()
            if stat(dir + "/" + name, &st) == 0 { total += Int64(st.st_blocks) * 512 }
        }
        return total
    }
}

/// Calls a progress report at most every 0.2 s, and once at the end.
struct ProgressTicker {
    let total: Int
    let report: ((Int, Int) -> Void)?
    private(set) var done = 0
    private var last = DispatchTime.now().uptimeNanoseconds

    init(total: Int, report: ((Int, Int) -> Void)?) {
        self.total = total
        self.report = report
    }

    mutating func step(by n: Int = 1) {
        done += n
        guard let report else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        if now - last >= 200_000_000 { last = now; report(done, total) }
    }

    func finish() { if total > 0 { report?(done, total) } }
}
