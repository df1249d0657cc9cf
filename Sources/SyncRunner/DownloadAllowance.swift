#if canImport(Glibc)
    import Glibc
#endif
import MoCore
import Synchronization
import SyncState

/// An account's daily download allowance, shared by a run's folders and connections (issue 26, item 3).
/// Gmail allows 2,500 MB of IMAP downloads a day and refuses an account past it for a day, so an initial
/// sync of a larger mailbox must stop before it, cleanly, and go on the next day: the fetch takes its
/// bodies' sizes from the allowance before it asks for them, newest first, and what does not fit waits
/// (`PreparedFolder.fetch`; the folder is not committed, so the next run lists and fetches the rest).
/// What a run takes is written to `DownloadLog` before the FETCH (a killed run has counted it).
final class DownloadAllowance: Sendable {
    /// Bytes a rolling 24 hours may download.
    let limit: Int
    private let directory: String
    private let log: Mutex<DownloadLog>
    private let spent = Atomic<Bool>(false)

    /// Unset on Gmail: 2,300 MiB, under its 2,500 MB whichever megabyte it counts, with room for a phone.
    static let gmailDefault = 2_300 << 20

    /// The allowance an account's run keeps to: `configured` bytes (`daily-download`; 0: none), else
    /// Gmail's default on a server that announces X-GM-EXT-1, else none.
    static func make(configured: Int?, gmail: Bool, directory: String) -> DownloadAllowance? {
        let limit = configured ?? (gmail ? gmailDefault : 0)
        return limit > 0 ? DownloadAllowance(limit: limit, directory: directory) : nil
    }

    init(limit: Int, directory: String) {
        self.limit = limit
        self.directory = directory
        log = Mutex(DownloadLog.load(in: directory))
    }

    /// How many of `sizes`, in the order given, fit in what is left today; those are counted at once
    /// (and written down). `all`: all of them or none.
    func take(_ sizes: [Int], all: Bool = false) throws -> Int {
        guard !spent.load(ordering: .relaxed) else { return 0 }
        let now = Int(time(nil))
        return try log.withLock { log throws(StateError) -> Int in
            let used = log.last24Hours(now: now)
            var left = limit - used
            var n = 0, bytes = 0
            for size in sizes {
                guard size <= left else { break }
                left -= size
                bytes += size
                n += 1
            }
            if all && n < sizes.count { return 0 }
            // One message larger than the whole allowance would wait forever, and every older one behind it:
            // on a day with nothing downloaded yet it goes alone.
            if n == 0, !all, let first = sizes.first, first > limit, used == 0 { n = 1; bytes = first }
            if bytes > 0 {
                log.add(bytes, now: now)
                try log.save(in: directory)
            }
            return n
        }
    }

    /// The server refused a download for its bandwidth (`OVERQUOTA`): nothing more this run, and the day's
    /// allowance counts as spent (the server will refuse until its day is over).
    func spendAll() {
        spent.store(true, ordering: .relaxed)
        let now = Int(time(nil))
        log.withLock { log in
            log.add(max(0, limit - log.last24Hours(now: now)), now: now)
            try? log.save(in: directory)
        }
    }

    /// Whether the server refused a download this run (`spendAll`).
    var isSpent: Bool { spent.load(ordering: .relaxed) }

    /// Whether anything may be downloaded now: the server has not refused, and the day's count is below the
    /// limit. A run whose day is spent asks the server for no sizes (a `--watch` wakes often).
    var hasRoom: Bool { !isSpent && log.withLock { $0.last24Hours(now: Int(time(nil))) } < limit }
}
