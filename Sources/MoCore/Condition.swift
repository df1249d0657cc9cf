#if canImport(Glibc)
    import Glibc
#endif

/// A lock with a condition variable: for a thread that sleeps until another changes the state both share
/// (a work queue, a doorbell). `Mutex` is the lock for everything else; it cannot wait. The one home of
/// pthread condition variables, as `Threads` is of pthread threads: deadlines are on CLOCK_MONOTONIC, so
/// they do not jump with the wall clock.
///
/// The caller holds the lock around `wait` and around every change of the shared state, and signals or
/// broadcasts after the change; waits are in a loop over the predicate (wake-ups can be spurious).
public final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Sleeps until signalled (the lock held; released while asleep).
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Sleeps until signalled or until `deadline` (`monotonicSeconds()`); false when the deadline came.
    @discardableResult
    public func wait(until deadline: Double) -> Bool {
        var ts = timespec(tv_sec: Int(deadline), tv_nsec: Int((deadline - deadline.rounded(.down)) * 1e9))
        return pthread_cond_timedwait(condition, mutex, &ts) == 0
    }

    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}
