#if canImport(Glibc)
    import Glibc
#endif
import Maildir
import MoConfig
import MoCore
import Synchronization

/// Watches the `cur/` and `new/` of every local folder of an account (inotify) and rings the doorbell with
/// `.local` once a burst of changes has settled (`Debounce`): a flag rename, a new file, a deletion, a move
/// between folders. The sync that follows finds out what changed; this only says that something did.
///
/// `arm()` (re)lists the folders and adds the new ones; the watcher calls it after every sync, so a folder
/// created while watching (by the user or by the sync) is watched from the next sync on. The listening
/// thread sleeps in poll(2) on the inotify descriptor, waking once a second to check `stop`.
final class LocalChanges: @unchecked Sendable {
    let account: Account
    private let watch: DirectoryWatch
    private let doorbell: Doorbell
    private let stopping = Atomic<Bool>(false)
    private var thread: ThreadHandle?

    init(account: Account, doorbell: Doorbell) throws {
        self.account = account
        self.doorbell = doorbell
        watch = try DirectoryWatch()
    }

    /// Adds every local folder's cur/ and new/; returns what could not be watched (reported, not fatal:
    /// those folders are then synced only when something else wakes the watcher).
    @discardableResult
    func arm() -> [String] {
        guard let root = account.syncPair?.maildir,
            let listing = try? MaildirScanner.listFolders(root: root, layout: account.layout)
        else { return [] }
        var problems: [String] = []
        for relative in listing.folders {
            guard let path = FolderNameMapper.absolutePath(root: root, relative: relative) else { continue }
            let folder = MaildirFolder(path: path)
            for subdir in [MaildirSubdir.cur, .new] {
                if case .failure(let e) = watch.add(folder.directory(subdir)) { problems.append(e.description) }
            }
        }
        return problems
    }

    func start() {
        thread = startThread { [self] in listen() }
    }

    /// Ends the thread (within a second) and joins it.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        thread?.join()
        thread = nil
    }

    private func listen() {
        var first: Double?, last = 0.0
        while !stopping.load(ordering: .relaxed) {
            let now = monotonicSeconds()
            var timeout = 1.0
            if case .waitUntil(let t) = Debounce.decide(first: first, last: last, now: now) { timeout = min(1, t - now) }
            if watch.wait(seconds: timeout) {
                let batch = watch.drain()
                if batch.events > 0 || batch.overflowed {
                    let at = monotonicSeconds()
                    if first == nil { first = at }
                    last = at
                }
            }
            if Debounce.decide(first: first, last: last, now: monotonicSeconds()) == .fire {
                doorbell.ring(.local)
                first = nil
            }
        }
    }
}
