#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import MoCore
import Synchronization

/// Whether a second connection should list the folders left alongside the first. A server answers a
/// SELECT of a folder changed lately only after re-reading it (Dovecot re-reads a Maildir folder's
/// directory: about 100 ms for 40,000 messages), and two sessions wait for two folders at once. Only large
/// folders cost that (`large`: a state of 64 KiB or more, about 1,000 messages), and a login costs a few
/// round trips, a TLS handshake and CPU the listing shares, so the helper opens only when the large
/// folders left, at the mean listing time so far, would take longer than four logins.
///
/// | `connections` (dry run: 1) | large folders left | mean listing time × large folders left | helper          |
/// |----------------------------|--------------------|----------------------------------------|-----------------|
/// | 1                          | —                  | —                                      | no: one allowed |
/// | > 1                        | < 2                | —                                      | no: none to share |
/// | > 1                        | ≥ 2                | ≤ 4 × the first login's time           | no: the login costs the gain |
/// | > 1                        | ≥ 2                | > 4 × the first login's time           | yes, one        |
///
/// `MO_LISTING_HELPER=always` (for the crash tests, as `CrashPoint`): a helper whenever one is allowed and
/// two folders are left, so the sweeps kill runs that list over two connections.
enum ListingPlan {
    static let large = 64 << 10

    /// `largeLeft` is asked only when the folders left, large or not, would take longer than four logins
    /// (it costs a stat of each folder's state).
    static func wantsHelper(
        configured: Int, listed: Int, seconds: Double, largeLeft: () -> Int, left: Int, login: Double
    ) -> Bool {
        guard configured > 1, listed > 0, left >= 2 else { return false }
        if always { return true }
        let mean = seconds / Double(listed)
        guard mean * Double(left) > 4 * login else { return false }
        let large = largeLeft()
        return large >= 2 && mean * Double(large) > 4 * login
    }

    private static let always = getenv("MO_LISTING_HELPER").map { String(cString: $0) == "always" } ?? false
}

/// The folders of a run's step, handed out one at a time to the connections that work on them (the
/// listing's, `ParallelFolders`' workers).
final class FolderQueue: Sendable {
    let count: Int
    private let next = Atomic<Int>(0)
    init(count: Int) { self.count = count }

    /// The next folder's index, or nil when every folder has been taken.
    func take() -> Int? {
        let i = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return i < count ? i : nil
    }

    /// How many folders are not taken yet.
    var left: Int { max(0, count - next.load(ordering: .relaxed)) }

    /// Hands out no more folders.
    func stop() { next.store(count, ordering: .relaxed) }
}

/// What listing one folder came to (`AccountSync.listFolder`).
enum ListingOutcome {
    /// Its listing failed alone (a refusal, a local file problem); the run goes on.
    case failed(FolderSummary)
    /// A malformed response failed it, and closed the connection it was listed on; on the helper's
    /// connection, also a network error or BYE (the first connection goes on with the rest).
    case broken(FolderSummary, IMAPError)
    /// Unchanged on both sides: nothing to finish.
    case unchanged(FolderSync, FolderSummary)
    /// It stood alone and was finished at once (nil: nothing to report).
    case finished(FolderSync, PreparedFolder, FolderSummary?)
    /// Listed; finished after moves between folders are found.
    case pending(FolderSync, PreparedFolder)
}

/// The outcomes by folder index, written by the connection that listed each folder.
final class ListingOutcomes: @unchecked Sendable {  // `list` is only touched under `lock`
    private let lock = Mutex(())
    private var list: [ListingOutcome?]
    init(count: Int) { list = Array(repeating: nil, count: count) }
    func set(_ i: Int, _ outcome: ListingOutcome) { lock.withLock { _ in list[i] = outcome } }
    var all: [ListingOutcome?] { lock.withLock { _ in list } }
}

/// A second connection that opens on a thread of its own and lists folders from the shared queue until
/// it is empty, alongside the first. `list` returns false when the connection can take no more (a
/// malformed response, a network error or BYE ended it; the folder fails alone and the first connection
/// lists the rest); any other error it throws (a local one that ends the run) ends the helper and is
/// handed to `join`.
///
/// Invariants: each folder is listed by the one connection that took it; the helper's thread is joined
/// before its results or its connection are read (and before the run can end: see `ConnectionOpener`).
final class ListingHelper: @unchecked Sendable {  // `connection` and `error` are read only after `join`
    private let thread: ThreadHandle
    private let result = HelperResult()
    private var joined = false

    init(
        queue: FolderQueue, open: @escaping @Sendable () throws -> IMAPConnection,
        list: @escaping (Int, IMAPConnection) throws -> Bool
    ) {
        let result = self.result
        let list = UncheckedBox(list)
        thread = startThread {
            guard let c = try? open() else { return }  // no helper: the first connection lists the rest
            result.connection = c
            while let i = queue.take() {
                do {
                    if try !list.value(i, c) { result.connection = nil; return }
                } catch {
                    result.connection = nil
                    result.error = UncheckedBox(error)
                    return
                }
            }
        }
    }

    /// Waits for the helper; its connection (nil if it never opened or broke) and the error that ended it.
    func join() -> (connection: IMAPConnection?, error: Error?) {
        if !joined { thread.join(); joined = true }
        defer { result.connection = nil }
        return (result.connection, result.error?.value)
    }

    deinit { if let c = join().connection { c.logout() } }
}

/// Written by the helper's thread, read after it is joined.
private final class HelperResult: @unchecked Sendable {
    var connection: IMAPConnection?
    var error: UncheckedBox<Error>?
}

/// A value handed to another thread that reads it only in the order the threads' join makes safe.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// The helper's connection after the listing, until a finish takes it; logged out if none does (a run
/// that fails between the two).
final class SpareConnection {
    private var connection: IMAPConnection?
    init(_ connection: IMAPConnection?) { self.connection = connection }
    var holdsOne: Bool { connection != nil }
    func take() -> IMAPConnection? {
        defer { connection = nil }
        return connection
    }
    deinit { connection?.logout() }
}
