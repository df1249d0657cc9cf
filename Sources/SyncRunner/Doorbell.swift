#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// Where the watcher's listeners (server connections, the Maildir watch) report that a sync is due, and
/// where the watcher sleeps until one is. Rings collapse: many rings before the watcher looks are one sync.
///
/// Invariant: `take()` empties the set before a sync starts, so a ring during the sync is kept for the
/// next round — a change is never lost in the gap between a sync's listing and its end. The price is one
/// more sync after each sync that changed something (it hears its own changes), which finds nothing to do
/// and so changes nothing: no loop.
final class Doorbell: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var condition = pthread_cond_t()
    private var pending: Set<WatchPlan.Wake> = []

    init() {
        pthread_mutex_init(&mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)  // deadlines do not jump with the wall clock
        pthread_cond_init(&condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(&condition)
        pthread_mutex_destroy(&mutex)
    }

    func ring(_ why: WatchPlan.Wake) {
        pthread_mutex_lock(&mutex)
        pending.insert(why)
        pthread_cond_signal(&condition)
        pthread_mutex_unlock(&mutex)
    }

    /// Waits until a ring or the monotonic `deadline` (seconds; nil: none) and returns the reasons rung,
    /// emptying them (empty when the deadline passed first). Wakes at least every `slice` seconds to
    /// let the caller check for a stop request.
    func wait(until deadline: Double?, slice: Double = 1) -> Set<WatchPlan.Wake> {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        let now = monotonicSeconds()
        if pending.isEmpty {
            let until = min(deadline ?? .infinity, now + slice)
            var ts = timespec(tv_sec: Int(until), tv_nsec: Int((until - until.rounded(.down)) * 1e9))
            while pending.isEmpty && pthread_cond_timedwait(&condition, &mutex, &ts) == 0 {}
        }
        defer { pending = [] }
        return pending
    }

    /// Empties the reasons rung so far (a sync is about to start and will see their changes).
    func take() -> Set<WatchPlan.Wake> {
        pthread_mutex_lock(&mutex)
        defer { pending = []; pthread_mutex_unlock(&mutex) }
        return pending
    }
}

/// Sleeps `seconds` in steps of 0.2 s, ending early once `stop` says so (no busy loop; a stop is seen
/// within 0.2 s).
func pause(_ seconds: Double, unless stop: () -> Bool) {
    let until = monotonicSeconds() + seconds
    while !stop() && monotonicSeconds() < until { usleep(200_000) }
}
