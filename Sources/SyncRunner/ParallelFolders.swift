#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import MoCore
import Synchronization

/// How many connections beyond the first a run opens: a login (TCP, TLS handshake, LOGIN, ENABLE, and a
/// SELECT per folder on it) costs tens of milliseconds, so more connections pay only for many transfers
/// spread over several folders (a folder's work stays on one connection). Flag changes and deletions are
/// pipelined STOREs and expunges, cheap on one connection whatever their number.
///
/// | `connections` (dry run: 1) | folders with transfers | messages to transfer  | extra connections                    |
/// |----------------------------|------------------------|-----------------------|--------------------------------------|
/// | 1                          | —                      | —                     | 0                                    |
/// | > 1                        | < 2                    | —                     | 0: one folder's work is not shared   |
/// | > 1                        | ≥ 2                    | < `spreadThreshold`   | 0: the login costs what it saves     |
/// | > 1                        | ≥ 2                    | ≥ `spreadThreshold`   | min(`connections`, folders) − 1      |
enum ConnectionPlan {
    /// Messages to fetch or upload, summed over folders.
    static let spreadThreshold = 256

    struct Work {
        var folders = 0
        var transfers = 0
        mutating func add(transfers n: Int) {
            if n > 0 { folders += 1; transfers += n }
        }
    }

    static func extra(configured: Int, work: Work) -> Int {
        guard configured > 1, work.folders >= 2, work.transfers >= spreadThreshold else { return 0 }
        return min(configured, work.folders) - 1
    }
}

/// Runs a step for many folders over a few IMAP connections: one worker thread per connection takes the
/// next folder from a shared counter. IMAP here is blocking, so threads (not the cooperative pool, which
/// has one thread per core) are the right tool. Results come back in the folders' order; the first error
/// stops the workers from taking more folders and is rethrown.
///
/// Invariant: a connection is used by one worker at a time, and a folder by one worker at a time; the
/// step is handed its worker's connection.
struct ParallelFolders {
    let connections: [IMAPConnection]

    func run<R: Sendable>(_ folders: [PreparedFolder], _ step: @escaping (PreparedFolder, IMAPConnection) throws -> R) throws -> [R?] {
        guard !folders.isEmpty else { return [] }
        if connections.count == 1 || folders.count == 1 {
            return try folders.map { try step($0, connections[0]) }
        }
        let shared = SharedWork(folders: folders, step: step)
        runOnThreads(connections.prefix(folders.count).map { connection in { shared.work(on: connection) } })
        if let error = shared.firstError.withLock({ $0 }) { throw error.value }
        return shared.results.withLock { $0 }
    }
}

/// State the workers share. `@unchecked Sendable`: the queue is atomic, results and the error are
/// behind mutexes, and each folder is touched by the one worker that took its index.
private final class SharedWork<R: Sendable>: @unchecked Sendable {
    let folders: [PreparedFolder]
    let step: (PreparedFolder, IMAPConnection) throws -> R
    let queue: FolderQueue
    let results: Mutex<[R?]>
    let firstError = Mutex<UncheckedBox<Error>?>(nil)

    init(folders: [PreparedFolder], step: @escaping (PreparedFolder, IMAPConnection) throws -> R) {
        self.folders = folders
        self.step = step
        self.queue = FolderQueue(count: folders.count)
        self.results = Mutex(Array(repeating: nil, count: folders.count))
    }

    func work(on connection: IMAPConnection) {
        while true {
            if firstError.withLock({ $0 != nil }) { return }
            guard let i = queue.take() else { return }
            let folder = folders[i]
            do {
                let r = try step(folder, connection)
                results.withLock { $0[i] = r }
            } catch {
                let box = UncheckedBox(error)
                firstError.withLock { slot in if slot == nil { slot = box } }
                return
            }
        }
    }
}
