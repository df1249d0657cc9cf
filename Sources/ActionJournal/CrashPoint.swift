#if canImport(Glibc)
import Glibc
#endif

/// Deterministic crash points for tests: when `MO_CRASH_AT` names a step, the process ends there with
/// `_exit(137)` (what `kill -9` reports), skipping every cleanup, as a real crash would.
///
/// Steps: outbox-written, queued, sending, committing, accepted, sent, appending, appended, compacting.
public enum CrashPoint {
    private static let target: String? = getenv("MO_CRASH_AT").map { String(cString: $0) }

    public static func reach(_ step: String) {
        if let target, target == step { _exit(137) }
    }
}
