import Foundation
import MailMessage
import MoCore
import XapianKit

/// One parsed file, ready for the writer: its record and a document holding its content terms.
/// The document was built on a parser thread and is handed over whole: after `ParallelParser` passes it
/// on, no other thread touches it (the parser's term generator has been pointed at another document),
/// which is what makes the unchecked Sendable sound.
final class PreparedMessage: @unchecked Sendable {
    let file: String
    let record: MessageRecord
    let document: XapianDocument
    /// Bytes of the file: what the writer counts to commit before its buffers grow too big.
    let size: Int

    init(file: String, record: MessageRecord, document: XapianDocument, size: Int) {
        self.file = file
        self.record = record
        self.document = document
        self.size = size
    }
}

/// What parsing one file gave.
enum ParseOutcome: @unchecked Sendable {
    case message(PreparedMessage)
    /// Not mail (notmuch's rule) or unreadable: skipped with a warning.
    case skipped(file: String, reason: String)
}

/// Parses files on worker threads (one per core) and hands results to the calling thread in input
/// order, so the single Xapian writer stays on one thread. At most `window` results are in flight,
/// which bounds memory whatever the number of files.
final class ParallelParser: @unchecked Sendable {
    struct Job: Sendable {
        let absolutePath: String
        let indexPath: String
        var userHeaders: [UserHeader] = []
    }

    private let jobs: [Job]
    private let condition = Condition()
    // Guarded by `condition`.
    private var nextJob = 0
    private var nextDelivery = 0
    private var done: [Int: ParseOutcome] = [:]
    private var failure: XapianError?
    private let window: Int

    init(jobs: [Job], window: Int = 64) {
        self.jobs = jobs
        self.window = window
    }

    /// Runs the workers and calls `consume` for each outcome, in input order, on the calling thread.
    func run(
        threads: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ consume: (ParseOutcome) throws -> Void
    ) throws {
        guard !jobs.isEmpty else { return }
        let workers = max(1, min(threads, jobs.count))
        for _ in 0..<workers {
            startDetachedThread(stackSize: 8 << 20) { [self] in work() }  // deep MIME trees
        }
        defer {
            // Stop the workers early on a consumer error: no new jobs are taken.
            condition.lock()
            nextJob = jobs.count
            condition.broadcast()
            condition.unlock()
        }
        for index in 0..<jobs.count {
            condition.lock()
            while done[index] == nil && failure == nil { condition.wait() }
            if let failure { condition.unlock(); throw failure }
            let outcome = done.removeValue(forKey: index)!
            nextDelivery = index + 1
            condition.broadcast()
            condition.unlock()
            try consume(outcome)
        }
    }

    private func work() {
        let generator: XapianTermGenerator
        do {
            generator = try XapianTermGenerator()
        } catch {
            fail(error)
            return
        }
        while true {
            condition.lock()
            while nextJob < jobs.count && nextJob - nextDelivery >= window { condition.wait() }
            guard nextJob < jobs.count else { condition.unlock(); return }
            let index = nextJob
            nextJob += 1
            condition.unlock()

            let outcome: ParseOutcome
            do {
                outcome = try Self.parse(jobs[index], generator)
            } catch {
                fail(error)
                return
            }
            condition.lock()
            done[index] = outcome
            condition.broadcast()
            condition.unlock()
        }
    }

    private func fail(_ error: XapianError) {
        condition.lock()
        failure = failure ?? error
        condition.broadcast()
        condition.unlock()
    }

    /// Reads and parses one file into a document. `generator` belongs to the calling thread.
    static func parse(_ job: Job, _ generator: XapianTermGenerator) throws(XapianError) -> ParseOutcome {
        let bytes: [UInt8]
        switch readMessageFile(job.absolutePath) {
        case .success(let b): bytes = b
        case .failure(let e): return .skipped(file: job.absolutePath, reason: "cannot read: \(e)")
        }
        let message = ParsedMessage.parse(bytes)
        guard message.looksLikeMail else { return .skipped(file: job.absolutePath, reason: "not an e-mail message") }
        let record = DocumentTerms.record(for: message, file: job.indexPath)
        let doc = XapianDocument()
        try DocumentTerms.fill(
            doc, generator: generator, message: message, record: record, size: Int64(bytes.count), userHeaders: job.userHeaders)
        // Let go of the document before handing it over (see PreparedMessage).
        try generator.setDocument(XapianDocument())
        return .message(PreparedMessage(file: job.indexPath, record: record, document: doc, size: bytes.count))
    }
}
