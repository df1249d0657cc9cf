#if canImport(Glibc)
    import Glibc
#endif

/// The one way this project starts a thread: a POSIX thread running a closure.
///
/// Blocking work (poll, SSL_read, Xapian, parsing) must not run on Swift's cooperative pool, which has one
/// thread per core (toolchain notes), so parallel work gets threads of its own. Foundation's `Thread` cannot
/// be joined and raw `pthread_create` at each site repeated the same retain/release dance four times; these
/// two functions are the single copy. Threads that parse mail ask for a larger stack (deep MIME trees).
public struct ThreadHandle: @unchecked Sendable {
    let id: pthread_t

    /// Waits for the thread to end.
    public func join() { pthread_join(id, nil) }
}

/// Starts `body` on a new thread that the caller must `join`.
public func startThread(stackSize: Int = 0, _ body: @escaping () -> Void) -> ThreadHandle {
    ThreadHandle(id: spawn(stackSize: stackSize, body))
}

/// Starts `body` on a new thread whose end nobody waits for (its resources are freed when it ends).
public func startDetachedThread(stackSize: Int = 0, _ body: @escaping () -> Void) {
    pthread_detach(spawn(stackSize: stackSize, body))
}

/// Runs each body on a thread of its own and returns when all have ended.
public func runOnThreads(_ bodies: [() -> Void], stackSize: Int = 0) {
    for thread in bodies.map({ startThread(stackSize: stackSize, $0) }) { thread.join() }
}

private final class ThreadBody: @unchecked Sendable {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

private func spawn(stackSize: Int, _ body: @escaping () -> Void) -> pthread_t {
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    if stackSize > 0 { pthread_attr_setstacksize(&attributes, stackSize) }
    var t = pthread_t()
    let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    let rc = pthread_create(
        &t, &attributes,
        { raw in
            Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box)
    // Out of threads is out of memory in practice; nothing sensible can continue without the worker.
    precondition(rc == 0, "pthread_create failed: \(rc)")
    return t
}
