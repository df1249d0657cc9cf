#if canImport(Glibc)
    import Glibc
#endif
import MailMessage
import MoCore
import Threading
import Synchronization
import XapianKit

/// A new index built on every core. Writing (Xapian's inverter and B-trees) costs several times the
/// parsing, so one writer thread fed by parsers leaves a core idle; here the new files, in input order,
/// are cut into two contiguous chunks per core (of about equal bytes), and each worker thread parses *and
/// writes* the next chunk into its own shard database (`build.K`), exactly as the sequential updater would write
/// those files alone (repeated Message-IDs merged, thread ids from a chunk-local ThreadIndex). Few shards
/// matter: compaction keeps one postlist chunk per term and shard (13 shards of 2,500 files made the
/// postlist table half as big again as 1 shard).
///
/// The calling thread then replays every file in input order as the sequential updater does (the first
/// file of a Message-ID makes the document, later ones add files and links; one ThreadIndex for all) and
/// fixes the shards up: a message whose first file lies in an earlier chunk leaves the later shard and its
/// files and links join the earlier document; a document whose final thread differs from the one written
/// gets it rewritten. Compacting the shards in chunk order numbers the documents in input order, so the
/// result is the database the sequential updater writes, compacted.
final class ShardedBuild: @unchecked Sendable {
    /// One file as its chunk wrote it, for the replay.
    struct FileEvent {
        let input: ThreadInput
        /// The chunk's document for this Message-ID was created from this file.
        let created: Bool
    }

    struct ChunkResult {
        var events: [FileEvent] = []
        var skipped: [(file: String, reason: String)] = []
        /// The thread id written into each document the chunk created.
        var written: [String: String] = [:]
    }

    let jobs: [ParallelParser.Job]
    let directory: IndexDirectory
    let chunks: [Range<Int>]
    let commitBytes: Int
    let log: (String) -> Void
    let progress: ((Int, Int) -> Void)?

    private let lock = Condition()
    // Guarded by `lock`.
    private var nextChunk = 0
    private var finished = 0
    private var results: [Int: ChunkResult] = [:]
    private var failure: Error?
    private var filesDone = 0

    let threads: Int
    let tags: TagTerms
    /// Thread ids predicted from headers (Message-ID -> thread id), written with each new document.
    private var predicted: [String: String] = [:]

    init(
        jobs: [ParallelParser.Job], directory: IndexDirectory, threads: Int, tags: TagTerms, commitBytes: Int,
        log: @escaping (String) -> Void, progress: ((Int, Int) -> Void)? = nil
    ) {
        self.jobs = jobs
        self.tags = tags
        self.directory = directory
        self.threads = max(1, threads)
        self.chunks = Self.split(jobs, into: max(1, threads) * Self.chunksPerThread)
        self.commitBytes = commitBytes
        self.log = log
        self.progress = progress
    }

    var chunkCount: Int { chunks.count }
    /// Chunks per worker, taken in turn, so that a run of slow files does not leave a core idle at the end
    /// (with 1, one core idled for 7 s of 45 on the benchmark; 2 cost 2% more space).
    static let chunksPerThread = 2

    /// `parts` contiguous ranges of `jobs` of about equal file bytes (work grows with size), none empty.
    static func split(_ jobs: [ParallelParser.Job], into parts: Int) -> [Range<Int>] {
        let sizes = jobs.map { job -> Int in
            var st = stat()
            return (stat(job.absolutePath, &st) == 0 ? Int(st.st_size) : 0) + 512  // + a per-file cost
        }
        let total = sizes.reduce(0, +)
        var ranges: [Range<Int>] = []
        var start = 0, sum = 0
        for (i, size) in sizes.enumerated() {
            sum += size
            if ranges.count < parts - 1, sum * parts >= total * (ranges.count + 1), i + 1 < jobs.count {
                ranges.append(start..<i + 1)
                start = i + 1
            }
        }
        if start < jobs.count { ranges.append(start..<jobs.count) }
        return ranges
    }

    /// Runs `body(k)` for k in 0..<count on `threads` threads, returning when all are done.
    private func parallel(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        final class Counter: Sendable { let next = Atomic<Int>(0) }
        let counter = Counter()
        let worker = {
            while true {
                let k = counter.next.wrappingAdd(1, ordering: .relaxed).oldValue
                if k >= count { return }
                body(k)
            }
        }
        runOnThreads(Array(repeating: worker, count: min(threads, count)), stackSize: 8 << 20)  // deep MIME trees
    }

    /// The thread of every message, from its headers only (Message-ID, In-Reply-To, References, parsed as
    /// `ParsedMessage` does): writing the final thread id with each document saves rewriting it later. A
    /// wrong guess costs only time: the replay rewrites any thread id that differs from the real one.
    private func predictThreads() {
        let parts = threads * 4
        let per = (jobs.count + parts - 1) / parts
        let inputs = UnsafeMutableBufferPointer<ThreadInput?>.allocate(capacity: jobs.count)
        inputs.initialize(repeating: nil)
        defer { inputs.deinitialize(); inputs.deallocate() }
        nonisolated(unsafe) let out = inputs
        parallel(parts) { [jobs] k in
            for i in min(jobs.count, k * per)..<min(jobs.count, (k + 1) * per) {
                out[i] = Self.headerThreadInput(jobs[i].absolutePath)
            }
        }
        var index = ThreadIndex()
        for case let input? in inputs { index.add(input) }
        for case let input? in inputs where predicted[input.messageID] == nil {
            predicted[input.messageID] = index.threadID(of: input.messageID)?.rawValue
        }
    }

    static func headerThreadInput(_ path: String) -> ThreadInput? {
        guard case .success(let bytes) = readMessageFile(path) else { return nil }
        let headers = HeaderBlock.parse(bytes)
        guard !headers.startsWithGarbage, let id = MessageID.fromHeader(headers["Message-ID"]) else { return nil }
        let irt = headers["In-Reply-To"]
        return ThreadInput(
            messageID: MessageID.notmuchKey(id),
            inReplyTo: MessageID.parseList(irt, excluding: id).map(MessageID.notmuchKey),
            references: MessageID.parseList(headers["References"], excluding: id).map(MessageID.notmuchKey))
    }

    /// Builds the shards, fixes them up, stores `metadata` and compacts everything into the directory's
    /// next database (not yet made current: `IndexDirectory.switchToNext`).
    func run(into summary: inout UpdateSummary, metadata: (UpdateSummary) -> [(String, String)]) throws {
        predictThreads()
        log("threads predicted")
        let chunks = chunkCount
        let workers = min(threads, chunks)
        for _ in 0..<workers {
            startDetachedThread(stackSize: 8 << 20) { [self] in work() }  // deep MIME trees
        }
        lock.lock()
        var ticker = ProgressTicker(total: jobs.count, report: progress)
        while finished < workers {
            if progress == nil { lock.wait(); continue }
            lock.wait(until: monotonicSeconds() + 0.2)
            ticker.step(by: filesDone - ticker.done)
        }
        ticker.finish()
        let error = failure
        let results = self.results
        lock.unlock()
        if let error { throw error }
        log("\(chunks) shards written")

        // Replay in input order.
        var threadIndex = ThreadIndex()
        var home: [String: Int] = [:]  // Message-ID -> chunk of its document
        var leaving: [Int: [String]] = [:]  // chunk -> ids whose document moves out
        var joining: [Int: [(id: String, from: Int)]] = [:]  // chunk -> documents merged in, in order
        for c in 0..<chunks {
            let result = results[c]!
            for (file, reason) in result.skipped {
                summary.skipped += 1
                summary.skippedFiles.append(file)
                summary.warnings.append("\(quotedForMessage(file)): \(reason); skipped")
            }
            for event in result.events {
                let id = event.input.messageID
                guard let first = home[id] else {
                    home[id] = c
                    threadIndex.add(event.input)
                    summary.added += 1
                    summary.newMessageIDs.append(id)
                    continue
                }
                summary.addedFiles += 1
                if !event.input.references.isEmpty || !event.input.inReplyTo.isEmpty { threadIndex.add(event.input) }
                if event.created {
                    leaving[c, default: []].append(id)
                    joining[first, default: []].append((id, c))
                }
            }
        }

        // Documents leaving a later shard: take their records out.
        var moved: [Int: [String: MessageRecord]] = [:]  // source chunk -> id -> record
        for c in leaving.keys.sorted() {
            let db = try WritableXapianDatabase(path: directory.shardPath(c), mode: .open, durable: false)
            for id in leaving[c]! {
                let term = IndexSchema.Prefix.id + id
                if let doc = try db.reader.document(uniqueTerm: term), let record = MessageRecord(decoding: try doc.data()) {
                    moved[c, default: [:]][id] = record
                }
                try db.deleteDocuments(uniqueTerm: term)
            }
            try db.close()
        }
        // Merges and thread rewrites, shard by shard; metadata into shard 0 (compaction keeps it).
        var changes: [Int: Set<String>] = [:]
        for (c, list) in joining { changes[c, default: []].formUnion(list.map(\.id)) }
        var finalThread: [String: (now: String, written: String)] = [:]
        for c in 0..<chunks {
            for (id, written) in results[c]!.written where home[id] == c {
                guard let now = threadIndex.threadID(of: id)?.rawValue, now != written else { continue }
                finalThread[id] = (now, written)
                changes[c, default: []].insert(id)
            }
        }
        changes[0, default: []].formUnion([])
        for c in changes.keys.sorted() {
            let db = try WritableXapianDatabase(path: directory.shardPath(c), mode: .open, durable: false)
            let reader = db.reader
            var merges: [String: [MessageRecord]] = [:]
            for (id, from) in joining[c] ?? [] {
                if let record = moved[from]?[id] { merges[id, default: []].append(record) }
            }
            for id in changes[c]!.sorted() {
                let term = IndexSchema.Prefix.id + id
                guard let doc = try reader.document(uniqueTerm: term) else { continue }
                if let extras = merges[id], var record = MessageRecord(decoding: try doc.data()) {
                    for extra in extras {
                        record.files += extra.files
                        for r in extra.references where !record.references.contains(r) { record.references.append(r) }
                        for r in extra.inReplyTo where !record.inReplyTo.contains(r) { record.inReplyTo.append(r) }
                    }
                    try doc.setData(record.encoded())
                    try DocumentTerms.setFileTerms(doc, id: id, files: record.files, tags: tags, fresh: false)
                }
                if let t = finalThread[id] {
                    try DocumentTerms.setThread(doc, t.now, previous: t.written)
                    summary.threadsRewritten += 1
                }
                try db.replaceDocument(uniqueTerm: term, with: doc)
            }
            if c == 0 { for (key, value) in metadata(summary) { try db.setMetadata(key, value) } }
            try db.close()
        }
        log("\(summary.added) messages in \(chunks) shards, \(summary.threadsRewritten) re-threaded; compacting")
        try xapianCompact((0..<chunks).map(directory.shardPath), into: directory.nextPath)
    }

    private func work() {
        let generator: XapianTermGenerator
        let synonyms: XapianStemSynonyms
        do {
            generator = try XapianTermGenerator()
            synonyms = try IndexSchema.stemSynonyms()
        } catch {
            finish(error: error)
            return
        }
        while true {
            lock.lock()
            guard failure == nil, nextChunk < chunkCount else { lock.unlock(); break }
            let c = nextChunk
            nextChunk += 1
            lock.unlock()
            do {
                let result = try writeChunk(c, generator, synonyms)
                lock.lock()
                results[c] = result
                lock.unlock()
                log("shard \(c) written")  // with --verbose: shows how balanced the chunks were
            } catch {
                finish(error: error)
                return
            }
        }
        finish(error: nil)
    }

    private func finish(error: Error?) {
        lock.lock()
        if let error, failure == nil { failure = error }
        if error != nil { nextChunk = chunkCount }
        finished += 1
        lock.broadcast()
        lock.unlock()
    }

    /// Parses and writes chunk `c` into its shard, as the sequential updater writes files.
    /// The shard's stem synonyms are written from its term list at the end (each word once; compaction merges
    /// the shards' synonym tables).
    private func writeChunk(_ c: Int, _ generator: XapianTermGenerator, _ synonyms: XapianStemSynonyms) throws -> ChunkResult {
        let db = try WritableXapianDatabase(path: directory.shardPath(c), mode: .createOrOverwrite, durable: false)
        let reader = db.reader
        var threads = ThreadIndex()
        var result = ChunkResult()
        var pendingBytes = 0
        for job in jobs[self.chunks[c]] {
            if progress != nil { lock.lock(); filesDone += 1; lock.unlock() }
            switch try ParallelParser.parse(job, generator) {
            case .skipped(let file, let reason):
                result.skipped.append((file, reason))
            case .message(let prepared):
                let thread = try IndexUpdater.write(
                    prepared, db, reader, threads: &threads,
                    thread: predicted[prepared.record.id], tags: tags)
                if let thread { result.written[prepared.record.id] = thread }
                result.events.append(FileEvent(input: IndexUpdater.threadInput(prepared.record), created: thread != nil))
                pendingBytes += prepared.size
                if pendingBytes >= commitBytes {
                    try db.commit()
                    pendingBytes = 0
                }
            }
        }
        try synonyms.addAllWords(of: db)
        try synonyms.write(to: db)
        try db.close()
        return result
    }
}
