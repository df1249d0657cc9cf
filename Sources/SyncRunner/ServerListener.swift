#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import IMAPCodec
import MoConfig
import MoCore
import Synchronization

/// One server connection that listens for news on a thread of its own and rings the doorbell: NOTIFY over
/// every folder, or IDLE on one folder (EXAMINE, so listening never changes the mailbox). It stays connected
/// across the watcher's syncs, so news that arrives during a sync is heard too.
///
/// A failed or lost connection is opened again after 5 s, doubling to 5 min (sleeping, not spinning); once it
/// listens again it rings `.listening`, since what changed while it was away is unknown. IDLE is renewed every
/// `relisten` seconds: the DONE round trip is the keepalive that notices a network path that died silently
/// (within `relisten` + the 60 s timeout), well inside the servers' 30-minute idle limit (RFC 2177).
///
/// A NOTIFY listener renews its whole session instead (LOGOUT, a new login, NOTIFY SET, a ring): Dovecot 2.3
/// watches the mailbox list's and INBOX's index logs with inotify once per NOTIFY SET, so after those logs
/// rotate (at ≥ 32 KB and ≥ 5 min old) its news falls back to a check every 30 s for the rest of the session
/// (measured with bench/watch/rss; a new IDLE does not renew those watches, a new session does).
final class ServerListener: @unchecked Sendable {
    enum Target: Sendable, Equatable {
        case notify
        case folder(String)
    }

    static let relisten: Double = 5 * 60

    let target: Target
    private let settings: IMAPSettings
    private let trace: IMAPTrace?
    private let doorbell: Doorbell
    private let failed: (Error) -> Void
    private let stopping = Atomic<Bool>(false)
    private var thread: ThreadHandle?

    init(_ target: Target, settings: IMAPSettings, trace: IMAPTrace?, doorbell: Doorbell, failed: @escaping (Error) -> Void) {
        self.target = target
        self.settings = settings
        self.trace = trace
        self.doorbell = doorbell
        self.failed = failed
    }

    /// Starts listening; `connection`, if given, is used first (the watcher's capability probe).
    func start(with connection: IMAPConnection? = nil) {
        thread = startThread { [self] in listen(first: connection) }
    }

    /// Ends the listening (DONE and LOGOUT within about a second) and joins the thread.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        thread?.join()
        thread = nil
    }

    private var stopped: Bool { stopping.load(ordering: .relaxed) }

    private func listen(first: IMAPConnection?) {
        var handed = first
        var backoff = Backoff()
        while !stopped {
            do {
                let imap = try handed ?? IMAPConnection.open(settings, trace: trace)
                handed = nil
                try prepare(imap)
                doorbell.ring(.listening)
                backoff.succeeded()
                while !stopped {
                    try imap.idle(seconds: Self.relisten, interrupted: { self.stopped }) { event in
                        if let why = WatchPlan.wake(for: event) { self.doorbell.ring(why) }
                        return false
                    }
                    if target == .notify { break }
                }
                imap.logout()
            } catch {
                // The connection is dropped without LOGOUT: on a dead path that would wait for the timeout.
                handed = nil
                if stopped { return }
                failed(error)
                pause(backoff.failed(), unless: { stopped })
            }
        }
    }

    private func prepare(_ imap: IMAPConnection) throws {
        switch target {
        case .notify:
            // CONDSTORE makes a flag change in an unselected folder visible: STATUS with HIGHESTMODSEQ (RFC 5465 §5.4).
            try imap.enableSyncExtensions()
            try imap.notify(WatchPlan.notifyGroups)
        case .folder(let name):
            _ = try imap.select(MailboxName(ModifiedUTF7.encode(name)), readOnly: true)
        }
    }
}
