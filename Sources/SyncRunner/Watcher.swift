#if canImport(Glibc)
import Glibc
#endif
import IMAPClient
import IMAPCodec
import MoConfig
import MoCore
import Synchronization

/// `mo-sync --watch` for one account: sync, then IDLE on every watched folder (one connection each, up to
/// `maxWatched`) until the server reports a change in any (EXISTS, EXPUNGE, VANISHED, RECENT) or 29 minutes
/// pass (servers drop idlers after 30, RFC 2177), then sync again. Network failures reconnect with backoff (5 s doubling to 5 min). SIGTERM or SIGINT
/// ends the loop cleanly: at once while idling (nothing is in flight), after the current sync otherwise.
public final class Watcher {
    public let account: Account
    public let config: Config
    public let options: SyncOptions
    /// Called with each run's summaries, or with the error that ended a run.
    public let report: (Result<[FolderSummary], Error>) -> Void

    static let idleSeconds: Double = 29 * 60

    public init(account: Account, config: Config, options: SyncOptions,
                report: @escaping (Result<[FolderSummary], Error>) -> Void) {
        self.account = account
        self.config = config
        self.options = options
        self.report = report
    }

    /// Runs until stopped by a signal; returns normally then.
    public func run() {
        var backoff: Double = 5
        while !WatchSignals.stopRequested {
            do {
                WatchSignals.phase.store(WatchSignals.syncing, ordering: .sequentiallyConsistent)
                let summaries = try AccountSync(account: account, config: config, options: options).run()
                report(.success(summaries))
                if WatchSignals.stopRequested { return }
                try waitForChange()
                backoff = 5
            } catch let error as MoError where error.kind == .temporary || error.kind == .busy {
                report(.failure(error))
                sleepInterruptibly(backoff)
                backoff = min(backoff * 2, 300)
            } catch {
                report(.failure(error))
                // Configuration, authentication or TLS problems do not mend themselves quickly.
                sleepInterruptibly(300)
            }
        }
    }

    /// IMAP IDLE watches one mailbox per connection; more folders than this are synced on each wake only.
    static let maxWatched = 8

    /// One IDLE session per watched folder, in parallel; the first change (or error) ends them all.
    func waitForChange() throws {
        let folders = Array((account.sync.watch.isEmpty ? ["INBOX"] : account.sync.watch).prefix(Self.maxWatched))
        let woken = Atomic<Bool>(false)
        let firstError = Mutex<WatchError?>(nil)
        WatchSignals.phase.store(WatchSignals.idling, ordering: .sequentiallyConsistent)
        defer { WatchSignals.phase.store(WatchSignals.syncing, ordering: .sequentiallyConsistent) }
        if WatchSignals.stopRequested { return }
        let bodies: [() -> Void] = folders.map { folder in {
            do {
                try self.idle(on: folder) { woken.load(ordering: .sequentiallyConsistent) || WatchSignals.stopRequested }
            } catch {
                firstError.withLock { if $0 == nil { $0 = WatchError(error: error) } }
            }
            woken.store(true, ordering: .sequentiallyConsistent)
        } }
        if bodies.count == 1 { bodies[0]() } else { runOnThreads(bodies) }
        if let failure = firstError.withLock({ $0 }) { throw failure.error }
    }

    private func idle(on folder: String, interrupted: () -> Bool) throws {
        let imap = try IMAPConnection.open(AccountSync.imapSettings(account), trace: options.trace)
        defer { imap.logout() }
        _ = try imap.select(MailboxName(ModifiedUTF7.encode(folder)), readOnly: true)
        options.verbose("\(account.name): idling on \(folder)")
        _ = try imap.idle(seconds: Self.idleSeconds, stop: { event in
            switch event {
            case .untagged(.exists), .untagged(.expunge), .untagged(.vanished), .fetch: return true
            default: return false
            }
        }, interrupted: interrupted)
    }

    func sleepInterruptibly(_ seconds: Double) {
        WatchSignals.phase.store(WatchSignals.idling, ordering: .sequentiallyConsistent)
        defer { WatchSignals.phase.store(WatchSignals.syncing, ordering: .sequentiallyConsistent) }
        var left = seconds
        while left > 0 && !WatchSignals.stopRequested {
            usleep(200_000)
            left -= 0.2
        }
    }
}

private struct WatchError: @unchecked Sendable { let error: Error }

/// SIGTERM/SIGINT handling for --watch. While idling nothing is in flight, so the handler ends the process
/// at once; during a sync it only asks the loop to stop after the sync (a half-done sync would be safe
/// too — the journal sees to that — but finishing is kinder).
public enum WatchSignals {
    static let syncing = 0, idling = 1
    static let phase = Atomic<Int>(0)
    static let stop = Atomic<Bool>(false)
    static var stopRequested: Bool { stop.load(ordering: .sequentiallyConsistent) }

    public static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            WatchSignals.stop.store(true, ordering: .sequentiallyConsistent)
            if WatchSignals.phase.load(ordering: .sequentiallyConsistent) == WatchSignals.idling { _exit(0) }
        }
        signal(SIGTERM, handler)
        signal(SIGINT, handler)
    }
}
