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
final class Doorbell: @unchecked Sendable {  // `pending` is only touched under `condition`
    private let condition = Condition()
    private var pending: Set<WatchPlan.Wake> = []

    func ring(_ why: WatchPlan.Wake) {
        condition.withLock {
            pending.insert(why)
            condition.signal()
        }
    }

    /// Waits until a ring or the monotonic `deadline` (seconds; nil: none) and returns the reasons rung,
    /// emptying them (empty when the deadline passed first). Wakes at least every `slice` seconds to
    /// let the caller check for a stop request.
    func wait(until deadline: Double?, slice: Double = 1) -> Set<WatchPlan.Wake> {
        condition.withLock {
            if pending.isEmpty {
                let until = min(deadline ?? .infinity, monotonicSeconds() + slice)
                while pending.isEmpty && condition.wait(until: until) {}
            }
            defer { pending = [] }
            return pending
        }
    }

    /// Empties the reasons rung so far (a sync is about to start and will see their changes).
    func take() -> Set<WatchPlan.Wake> {
        condition.withLock {
            defer { pending = [] }
            return pending
        }
    }
}

/// Sleeps `seconds` in steps of 0.2 s, ending early once `stop` says so (no busy loop; a stop is seen
/// within 0.2 s).
func pause(_ seconds: Double, unless stop: () -> Bool) {
    let until = monotonicSeconds() + seconds
    while !stop() && monotonicSeconds() < until { usleep(200_000) }
}
