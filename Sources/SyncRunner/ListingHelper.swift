#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import MoCore
import Synchronization

/// Whether a second connection should list the folders left alongside the first. A server answers a
/// SELECT of a folder changed lately only after re-reading it (Dovecot re-reads a Maildir folder's
/// directory: about 100 ms for 40,000 messages), and a far server costs a round trip per folder; two
/// sessions wait for two folders at once. A login costs a few round trips and a TLS handshake, so the
/// helper is opened only when the listing so far says the rest will take longer than two logins.
///
/// | `connections` (dry run: 1) | folders left | mean listing time × folders left | helper                        |
/// |----------------------------|--------------|----------------------------------|-------------------------------|
/// | 1                          | —            | —                                | no: one connection allowed    |
/// | > 1                        | < 2          | —                                | no: nothing left to share     |
/// | > 1                        | ≥ 2          | ≤ 2 × the first login's time     | no: the login costs the gain  |
/// | > 1                        | ≥ 2          | > 2 × the first login's time     | yes, one                      |
///
/// `MO_LISTING_HELPER=always` (for the crash tests, as `CrashPoint`): a helper whenever one is allowed and
/// two folders are left, so the sweeps kill runs that list over two connections.
enum ListingPlan {
    static func wantsHelper(configured: Int, listed: Int, seconds: Double, left: Int, login: Double) -> Bool {
        guard configured > 1, left >= 2, listed > 0 else { return false }
        return always || seconds / Double(listed) * Double(left) > 2 * login
    }

    private static let always = getenv("MO_LISTING_HELPER").map { String(cString: $0) == "always" } ?? false
}

/// The folders of a listing, handed out one at a time to the connections that list them.
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
    /// A malformed response failed it, and closed the connection it was listed on.
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
/// malformed response closed it); an error it throws ends the helper and is handed to `join`.
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
