#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import MoCore

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
private final class OpenedConnections: @unchecked Sendable {
    private var list: [IMAPConnection] = []
    private var lock = pthread_mutex_t()
    init() { pthread_mutex_init(&lock, nil) }
    deinit { pthread_mutex_destroy(&lock) }
    func add(_ c: IMAPConnection) { pthread_mutex_lock(&lock); list.append(c); pthread_mutex_unlock(&lock) }
    func takeAll() -> [IMAPConnection] {
        pthread_mutex_lock(&lock)
        defer { list = []; pthread_mutex_unlock(&lock) }
        return list
    }
}
