import JMAPClient
import MoCore
import Synchronization

/// A JMAP account's push for `mo-sync --watch` (RFC 8620 §7.3): one EventSource connection on a thread of
/// its own, ringing the doorbell when the account's Email or Mailbox state moves (`.pushed`), and
/// `.listening` each time the stream opens (what changed while it was not listening is unknown).
///
/// While it is not listening (connecting, or after a failure, again after 5 s doubling to 5 min) the
/// watcher polls every `poll-interval` (`isListening`). A server that offers no push (no `eventSourceUrl`,
/// or Debian's Cyrus answering 204) ends the thread for good and rings `.poll`: polling is all there is.
/// The server sends a ping every `ping` seconds (below the connection's read timeout), so a quiet account
/// keeps the connection and a dead path is noticed.
///
/// `stop()` does not wait for the thread (detached): it may be in a read until the next ping; it stops at
/// that ping and only ever rings the doorbell, so the process can end without it. A stream that ends
/// before any event counts as a failure (the backoff), so a server that answers and closes at once is not
/// met again and again at full speed.
final class JMAPPushListener: @unchecked Sendable {
    private let makeClient: () throws -> JMAPClient
    private let doorbell: Doorbell
    private let ping: Int
    private let failed: (Error) -> Void
    private let unsupported: (String) -> Void
    private let stopping = Atomic<Bool>(false)
    private let listening = Atomic<Bool>(false)

    init(
        ping: Int, doorbell: Doorbell, makeClient: @escaping () throws -> JMAPClient, unsupported: @escaping (String) -> Void,
        failed: @escaping (Error) -> Void
    ) {
        self.ping = ping
        self.doorbell = doorbell
        self.makeClient = makeClient
        self.unsupported = unsupported
        self.failed = failed
    }

    /// Whether the stream is open now: no polling is needed while it is.
    var isListening: Bool { listening.load(ordering: .relaxed) }

    func start() { startDetachedThread { [self] in listen() } }

    func stop() { stopping.store(true, ordering: .relaxed) }

    private var stopped: Bool { stopping.load(ordering: .relaxed) }

    private struct Stop: Error {}

    private func listen() {
        var backoff = Backoff()
        while !stopped {
            var heard = false
            do {
                let client = try makeClient()
                defer { client.close() }
                let account = client.session.accountID
                let end = try client.listen(ping: ping) { [self] event in
                    if stopped { throw Stop() }
                    switch event {
                    case .listening:
                        listening.store(true, ordering: .relaxed)
                        doorbell.ring(.listening)
                    case .changed(let changed):
                        heard = true
                        if changed[account]?.isEmpty == false { doorbell.ring(.pushed) }
                    case .alive: heard = true
                    }
                    // The backoff starts again only once the stream said something: a server that opens
                    // a stream and closes it at once is not met again and again at full speed.
                    if heard { backoff.succeeded() }
                }
                listening.store(false, ordering: .relaxed)
                if case .unsupported(let why) = end {
                    unsupported(why)
                    doorbell.ring(.poll)
                    return
                }
                // The server ended the stream: again at once after a stream that worked, else after a pause.
                if !heard { pause(backoff.failed(), unless: { self.stopped }) }
            } catch is Stop {
                return
            } catch {
                listening.store(false, ordering: .relaxed)
                if stopped { return }
                failed(error)
                pause(backoff.failed(), unless: { self.stopped })
            }
        }
    }
}
