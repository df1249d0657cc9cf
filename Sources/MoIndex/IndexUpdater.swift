import Foundation
import MoCore
import XapianKit

/// What an update did.
public struct UpdateSummary: Sendable, Equatable {
    public var added = 0  // new messages
    public var addedFiles = 0  // extra files of messages already indexed
    public var renamed = 0  // files renamed or moved (flags, folder): no re-parse
    public var removedFiles = 0
    public var removed = 0  // messages whose last file went
    public var skipped = 0  // files that are not mail
    /// The files passed over (not mail, or unreadable), absolute.
    public var skippedFiles: [String] = []
    /// Symbolic links to nothing under notmuch's mail root, absolute.
    public var brokenLinks: [String] = []
    public var retagged = 0  // documents whose tags were recomputed without a rename (upgrade, keyword table, local tags)
    /// Message-IDs of the messages new in this update (not renames, not extra files).
    public var newMessageIDs: [String] = []
    /// With `recordsNewMessages`: the messages the tag rules have yet to see (earlier runs' not yet
    /// `rulesApplied`, then this run's new ones). See IndexUpdater+Tags.
    public var rulesPending: [String] = []
    public var threadsRewritten = 0  // documents whose thread id changed
    public var scannedDirectories = 0
    /// The older format this update rebuilt the index from (nil: none).
    public var rebuiltFromFormat: String?
    /// The index was rebuilt from the mail (an older format, or other `userHeaders`): its messages were
    /// all added again, and none of them is new mail.
    public var rebuilt = false
    public var warnings: [String] = []
    public var isNoOp: Bool { scannedDirectories == 0 && threadsRewritten == 0 && retagged == 0 }
}

/// Brings an index up to date with its roots, incrementally (docs/index-schema.md, "Update algorithm").
/// `run` takes these steps, each a method returning what the next one needs:
/// 0. `openForUpdate`, `readStart`: the update lock and the one writer (an index of a format rebuilt on
///    update is emptied first); what the index records (directories, roots, tag tables, pending rule ids);
/// 1. `changedFolders` (IndexUpdater+Scan): stat every directory recorded in `mo-index-dirs`, unchanged
///    ones are not read; relist changed hierarchies. Nothing changed: `recordUnchanged`, and done;
/// 2. `scanAndDiff`: readdir the changed folders and diff their files with the `XFILE:` terms; a vanished
///    file whose Maildir unique name reappears (flags, cur/new, folder) is a rename;
/// 3. `applyRenamesAndRemovals` (IndexUpdater+Documents): only file terms change; a message whose last
///    file went is deleted. A new index of at least `shardThreshold` new files is then built by
///    `buildInShards` (`ShardedBuild`) instead of steps 4–9;
/// 4. `loadThreads`: when messages come or go, every stored message's links (Threading.ThreadIndex);
/// 5. `addNewFiles`: parsed on worker threads, written on this one (Xapian handles are single-threaded),
///    committed every `commitInterval` documents or `commitBytes` of mail;
/// 6. `rewriteThreads`: the documents whose thread id changed;
/// 7. `retag` (IndexUpdater+Tags): documents whose tags changed without a rename (the local tag store, the
///    `[keywords]` table, a folder's `mo-keywords`: IndexUpdater+ExtraKeywords);
/// 8. `commitUpdate`: the metadata last, in the final commit;
/// 9. a new index is compacted and switched in (`IndexDirectory`).
///
/// Crash safety: `mo-index-dirs` changes only in an update's last commit, so after a crash the next update
/// rescans the same folders and finds the files already written by their `XFILE:` terms. Every commit
/// before it holds whole documents with their stem synonyms and `mo-index-rules-pending` ids, and, once
/// step 4 has run, `mo-index-threads-dirty`, so the next update re-threads. On an error the writer is
/// closed, which commits what was written (step 5 stages its synonyms and ids first).
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
    /// Scan only these folders (relative to the roots): `notmuch insert` indexes the message it delivered
    /// and nothing else, as notmuch does; the other changes wait for the next update.
    public var onlyFolders: [String]?
    /// Headers a notmuch configuration indexes (`UserHeader`); another list than the index's rebuilds it.
    public var userHeaders: [UserHeader] = []
    /// notmuch's new.ignore, for notmuch's mail root: what it names is passed over (and, once indexed,
    /// goes from the index as its folder is scanned again).
    public var ignore: IgnoreList?
    public var rulesApplied: Set<String> = []
    /// Progress lines (for --verbose).
    public var log: (String) -> Void = { _ in }
    /// New files parsed so far, of how many (for a status line on a terminal); called at most every 0.2 s
    /// and once at the end, from the updating thread.
    public var progress: ((_ done: Int, _ total: Int) -> Void)?

    static let threadsDirtyKey = "mo-index-threads-dirty"
    /// While a rebuild runs: the Message-IDs the index held before it (one per line), committed at once
    /// into the emptied database, so a rebuild that is killed and resumed still knows which messages are
    /// new mail (`UpdateSummary.newMessageIDs`: notmuch's new.tags go on those alone). Cleared by the
    /// rebuild's final commit.
    static let rebuildingKey = "mo-index-rebuilding"
    /// The ids `rebuildingKey` holds, for this run.
    private var previousIDs: Set<String>?
    /// The messages whose last file went in this run.
    private var removedThisRun = Set<String>()

    public init(indexPath: String, roots: [IndexRoot]) {
        self.indexPath = indexPath
        self.roots = roots
        self.localTagsPath = LocalTagStore.path(forIndex: indexPath)
    }

    public func run() throws -> UpdateSummary {
        previousIDs = nil
        removedThisRun = []
        var summary = try runSteps()
        // A rebuild adds every message again: only those the index did not hold before are new mail.
        if let previous = previousIDs {
            summary.rebuilt = true
            summary.newMessageIDs = summary.newMessageIDs.filter { !previous.contains($0) }
        }
        // A message whose last file went while a file of it came under another name (a rename the unique
        // part does not show, as notmuch counts one) is a rename, not new mail: no new.tags, no rules.
        let back = removedThisRun.intersection(summary.newMessageIDs)
        if !back.isEmpty {
            summary.newMessageIDs.removeAll { back.contains($0) }
            summary.added -= back.count
            summary.removed -= back.count
            summary.renamed += back.count
        }
        return summary
    }

    private func runSteps() throws -> UpdateSummary {
        let directory = try IndexDirectory(path: indexPath)  // the update lock, held until we return
        defer { directory.unlock() }
        var summary = UpdateSummary()
        let db = try openForUpdate(directory, into: &summary)
        defer { try? db.close() }
        let start = try readStart(db.reader, directory)

        let changes = changedFolders(start, into: &summary)
        if changes.isEmpty && !start.threadsDirty && !start.fullScan && start.tags.isEmpty {
            try recordUnchanged(db, changes.directories, start, into: &summary)
            return summary
        }
        log("\(changes.foldersToScan.count) folders to scan, \(changes.goneDirectories.count) directories gone")
        let diff = try scanAndDiff(changes, db.reader, into: &summary)
        let extra = try extraKeywordChanges(changes, db.reader)
        let removedIDs = try applyRenamesAndRemovals(diff, db, tags: start.tags.tags, into: &summary)
        removedThisRun = removedIDs

        let metadata =
            [
                (IndexSchema.Metadata.format, IndexSchema.formatVersion),
                (IndexSchema.Metadata.roots, IndexRoot.encode(roots)),
                (IndexSchema.Metadata.directories, diff.directories.encoded()),
                (IndexSchema.Metadata.userHeaders, UserHeader.encode(userHeaders)),
                (Self.rebuildingKey, "")
            ] + start.tags.metadata + extra.metadata
        if start.fresh && diff.added.count >= shardThreshold {
            try buildInShards(diff.added, db, directory, start, metadata: metadata, into: &summary)
            return summary
        }

        var threads = try loadThreads(db, needed: !diff.added.isEmpty || !removedIDs.isEmpty || start.threadsDirty)
        try addNewFiles(diff.added, db, threads: &threads, tags: start.tags.tags, pending: start.pending, into: &summary)
        try rewriteThreads(threads, db, into: &summary)
        summary.retagged = try retag(db, db.reader, start.tags)
        summary.retagged += try retag(db, db.reader, fileTerms: extra.fileTerms, tags: start.tags.tags)
        try commitUpdate(db, metadata: metadata, pending: start.pending, into: &summary)
        if start.fresh && summary.added > 0 {
            // Incremental commits leave blocks part-empty: a compacted copy is about half the size.
            try xapianCompact([directory.currentPath], into: directory.nextPath)
            try db.close()
            try directory.switchToNext()
        }
        return summary
    }

    /// What the index records when the update starts: what steps 1–8 compare against and keep.
    struct UpdateStart {
        let tags: TagChanges
        let pending: RulesPending
        /// A new index: compacted when written (and maybe built in shards); see IndexDirectory.
        let fresh: Bool
        /// `mo-index-dirs` as stored.
        let directories: DirectoryState
        /// An earlier update stopped between a change of messages and the thread rewrite.
        let threadsDirty: Bool
        /// Other roots than recorded, or no directory recorded: every folder is listed and scanned.
        let fullScan: Bool
    }

    /// Step 0: the writer, on an emptied database when the index has a format rebuilt from the mail.
    private func openForUpdate(_ directory: IndexDirectory, into summary: inout UpdateSummary) throws
        -> WritableXapianDatabase
    {
        let db = try Self.openWriter(indexPath)
        let resumed = String(decoding: try db.reader.metadata(Self.rebuildingKey), as: UTF8.self)
        if !resumed.isEmpty { previousIDs = Set(resumed.split(separator: "\n").map(String.init)) }
        let oldFormat = String(decoding: try db.reader.metadata(IndexSchema.Metadata.format), as: UTF8.self)
        // Compared as stored, so a list that reads back otherwise can never rebuild on every run.
        let oldHeaders = String(decoding: try db.reader.metadata(IndexSchema.Metadata.userHeaders), as: UTF8.self)
        let otherHeaders = oldHeaders != UserHeader.encode(userHeaders) && !oldFormat.isEmpty
        guard IndexSchema.rebuiltOnUpdate.contains(oldFormat) || otherHeaders else { return db }
        let skip = IndexSchema.Prefix.id.utf8.count
        let ids = try db.reader.allTerms(withPrefix: IndexSchema.Prefix.id).map { String(decoding: $0.term.dropFirst(skip), as: UTF8.self) }
        try db.close()
        try directory.startOver()
        let emptied = try Self.openWriter(indexPath)
        previousIDs = Set(ids)
        try emptied.setMetadata(Self.rebuildingKey, ids.joined(separator: "\n"))
        try emptied.commit()
        CrashPoint.step("rebuild-started")
        if otherHeaders && !IndexSchema.rebuiltOnUpdate.contains(oldFormat) {
            log("the headers to index changed: rebuilding the index from the mail")
        } else {
            summary.rebuiltFromFormat = oldFormat
            log("index format \(oldFormat) is older than \(IndexSchema.formatVersion): rebuilding it from the mail")
        }
        return emptied
    }

    /// Step 0: what the index records (a format this build cannot update throws).
    private func readStart(_ reader: XapianDatabase, _ directory: IndexDirectory) throws -> UpdateStart {
        try MailIndex.checkFormat(reader, path: indexPath, allowEmpty: true)
        let tags = try tagChanges(reader)
        let pending = try rulesPending(reader)
        let fresh = try reader.documentCount == 0 && directory.isReplaceable
        let storedRoots = IndexRoot.decode(String(decoding: try reader.metadata(IndexSchema.Metadata.roots), as: UTF8.self))
        let stored = DirectoryState(decoding: String(decoding: try reader.metadata(IndexSchema.Metadata.directories), as: UTF8.self))
        let threadsDirty = !(try reader.metadata(Self.threadsDirtyKey)).isEmpty
        return UpdateStart(
            tags: tags, pending: pending, fresh: fresh, directories: stored, threadsDirty: threadsDirty,
            fullScan: storedRoots != roots || stored.entries.isEmpty)
    }

    /// After step 1 found nothing to do: commits only what moved without a change of mail (directory mtimes,
    /// rule ids now applied), if anything did.
    private func recordUnchanged(
        _ db: WritableXapianDatabase, _ directories: DirectoryState, _ start: UpdateStart,
        into summary: inout UpdateSummary
    ) throws {
        let pending = start.pending
        summary.rulesPending = pending.ids(adding: [])
        if directories != start.directories || pending.value(adding: []) != pending.stored {
            try db.setMetadata(IndexSchema.Metadata.directories, directories.encoded())
            try db.setMetadata(Self.rulesPendingKey, pending.value(adding: []))
            try db.commit()
        }
    }

    /// Instead of steps 4–9 for a big new index: `ShardedBuild` writes and compacts it into the next database,
    /// which is switched in.
    private func buildInShards(
        _ jobs: [ParallelParser.Job], _ db: WritableXapianDatabase, _ directory: IndexDirectory,
        _ start: UpdateStart, metadata: [(String, String)], into summary: inout UpdateSummary
    ) throws {
        let build = ShardedBuild(
            jobs: jobs, directory: directory, threads: parserThreads, tags: start.tags.tags,
            commitBytes: shardCommitBytes, log: log, progress: progress)
        try build.run(into: &summary) { summary in
            metadata + [(Self.rulesPendingKey, start.pending.value(adding: summary.newMessageIDs))]
        }
        summary.rulesPending = start.pending.ids(adding: summary.newMessageIDs)
        try db.close()
        try directory.switchToNext()
    }

    /// Step 8: the metadata, written last, and the final commit.
    private func commitUpdate(
        _ db: WritableXapianDatabase, metadata: [(String, String)], pending: RulesPending,
        into summary: inout UpdateSummary
    ) throws {
        for (key, value) in metadata { try db.setMetadata(key, value) }
        try db.setMetadata(Self.rulesPendingKey, pending.value(adding: summary.newMessageIDs))
        summary.rulesPending = pending.ids(adding: summary.newMessageIDs)
        try db.commit()
    }

    /// Opens the writer: a second writer gets a `.busy` error naming the index.
    static func openWriter(_ path: String) throws -> WritableXapianDatabase {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw GenericError(.localIO, "cannot create the index directory \(quotedForMessage(path)): \(error.localizedDescription)")
        }
        // WritableXapianDatabase itself waits out a forked child's brief copy of the lock.
        let result = Result { () throws(XapianError) in try WritableXapianDatabase(path: path) }
        switch result {
        case .success(let db): return db
        case .failure(let e) where e.kind == .busy:
            throw GenericError(.busy, "index \(quotedForMessage(path)) is being updated by another process; try again when it finishes")
        case .failure(let e): throw e
        }
    }
}
