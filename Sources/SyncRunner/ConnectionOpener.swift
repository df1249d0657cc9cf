#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import MoCore
import Synchronization

/// Opens connections on a thread of its own; `take()` waits for it and returns those that opened (a
/// failure only means fewer connections: the run is slower, not wrong).
///
/// Invariant: the thread holds only `opened` and the `open` closure, never the opener, so the opener's
/// deinit (a run that threw before taking them) runs on the run's thread and joins the opener thread
/// before the process can exit: exit() tears down OpenSSL, which a handshake still running would crash on.
final class ConnectionOpener: @unchecked Sendable {
    private let opened = OpenedConnections()
    private let thread: ThreadHandle
    private var joined = false

    init(count: Int, open: @escaping @Sendable () throws -> IMAPConnection) {
        let opened = self.opened
        thread = startThread {
            for _ in 0..<count {
                guard let c = try? open() else { break }
                opened.add(c)
            }
        }
    }

    /// Joins the thread and hands over the connections (later calls return none).
    func take() -> [IMAPConnection] {
        if !joined { thread.join(); joined = true }
        return opened.takeAll()
    }

    deinit { for c in take() { c.logout() } }
}

/// Written by the opener thread, read after it is joined; the lock only makes that order explicit.
private final class OpenedConnections: @unchecked Sendable {  // `list` is only touched under `lock`
    private let lock = Mutex(())
    private var list: [IMAPConnection] = []
    func add(_ c: IMAPConnection) { lock.withLock { _ in list.append(c) } }
    func takeAll() -> [IMAPConnection] {
        var taken: [IMAPConnection] = []
        lock.withLock { _ in swap(&taken, &list) }
        return taken
    }
}
