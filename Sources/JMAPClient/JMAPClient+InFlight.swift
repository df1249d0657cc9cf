import MoCore
import Synchronization

/// Several requests in flight, each on a connection of its own: a server that serves each connection in a
/// process of its own (Cyrus) works on them at once, and the caller writes one batch of blobs while the
/// next ones are fetched and decoded. For the large reads of an initial sync: `Email/get` of every Email,
/// `Blob/get` of every body.
extension JMAPClient {
    /// `emails(_:)` of many ids with the work split among `inFlight` requests at once (contiguous parts,
    /// answered in the order of `ids`). Each Email is as its part's request found it; the caller's changes
    /// from a state read before (as `allEmailIDs` gives) catch anything later.
    public func emails(_ ids: [String], inFlight: Int) throws -> [JMAPEmail] {
        let parts = min(max(1, inFlight), ids.count / 250)
        guard parts > 1 else { return try emails(ids).emails }
        let size = (ids.count + parts - 1) / parts
        let slices = stride(from: 0, to: ids.count, by: size).map { Array(ids[$0..<min(ids.count, $0 + size)]) }
        return try withSiblings(slices.count - 1) { helpers in
            guard helpers.count == slices.count - 1 else { return try emails(ids).emails }
            let results = Mutex<[Int: Result<[JMAPEmail], Error>]>([:])
            let threads = helpers.enumerated().map { i, client in
                startThread {
                    let r = Result { try client.emails(slices[i + 1]).emails }
                    results.withLock { $0[i + 1] = r }
                }
            }
            let first = Result { try emails(slices[0]).emails }
            for t in threads { t.join() }
            var out = try first.get()
            for i in 1..<slices.count { out += try results.withLock { $0[i]! }.get() }
            return out
        }
    }

    /// `body` with up to `count` clients over the same session and credentials, each with connections of
    /// its own (no request; fewer when one cannot be made); afterwards their requests are counted here and
    /// their connections closed. `body` joins every thread it gave one to before it returns.
    private func withSiblings<R>(_ count: Int, _ body: ([JMAPClient]) throws -> R) rethrows -> R {
        let clients = (0..<count).compactMap { _ -> JMAPClient? in
            let c = try? JMAPClient(sessionBytes: sessionBytes, from: sessionURL, authorization: authorization, tls: tls, timeout: timeout)
            c?.trace = trace
            return c
        }
        defer {
            for c in clients {
                requests += c.requests
                c.close()
            }
        }
        return try body(clients)
    }

    /// The blobs of `batches` (each one `Blob/get`), handed to `each` with their batch and index within it,
    /// in order, as `blobs(_:each:)` hands them; up to `inFlight` requests at a time, and at most
    /// `2 × inFlight` batches fetched ahead of the one being handed over (memory stays bounded). A failure
    /// of a request or of `each` stops the rest and is thrown, after every worker ended.
    public func blobs(batches: [[String]], inFlight: Int, each: ([UInt8], _ batch: Int, _ index: Int) throws -> Void) throws {
        let workers = min(max(1, inFlight), batches.count)
        try withSiblings(workers > 1 ? workers : 0) { clients in
            guard !clients.isEmpty else {
                for (b, ids) in batches.enumerated() { try blobs(ids) { try each($0, b, $1) } }
                return
            }
            let shared = BlobQueue(count: batches.count, ahead: 2 * clients.count)
            let threads = clients.map { client in
                startThread {
                    while let b = shared.take() {
                        var got: [(Int, [UInt8])] = []
                        let result = Result { try client.blobs(batches[b]) { got.append(($1, $0)) } }.map { got }
                        shared.put(b, result)
                    }
                }
            }
            defer {
                shared.stop()
                for t in threads { t.join() }
            }
            for b in 0..<batches.count {
                for (i, bytes) in try shared.wait(for: b).get() { try each(bytes, b, i) }
            }
        }
    }
}

/// The batches' order and results between the workers and the caller (the lock of `Condition`).
private final class BlobQueue: @unchecked Sendable {
    private let condition = Condition()
    private let count: Int, ahead: Int
    private var next = 0, consumed = 0, stopped = false
    private var results: [Int: Result<[(Int, [UInt8])], Error>] = [:]

    init(count: Int, ahead: Int) {
        self.count = count
        self.ahead = ahead
    }

    /// The next batch to fetch, once fewer than `ahead` wait unconsumed; nil when all are taken or stopped.
    func take() -> Int? {
        condition.withLock {
            while !stopped && next < count && next - consumed >= ahead { condition.wait() }
            guard !stopped, next < count else { return nil }
            next += 1
            return next - 1
        }
    }

    func put(_ b: Int, _ result: Result<[(Int, [UInt8])], Error>) {
        condition.withLock {
            results[b] = result
            condition.broadcast()
        }
    }

    /// Batch `b`'s result, once fetched (taken out: its memory goes when it is handed over).
    func wait(for b: Int) -> Result<[(Int, [UInt8])], Error> {
        condition.withLock {
            while results[b] == nil { condition.wait() }
            consumed = b + 1
            condition.broadcast()
            return results.removeValue(forKey: b)!
        }
    }

    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }
}
