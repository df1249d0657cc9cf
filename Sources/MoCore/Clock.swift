#if canImport(Glibc)
    import Glibc
#endif

/// Seconds on a clock that never jumps (CLOCK_MONOTONIC), for deadlines and intervals.
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The wall clock (Unix seconds) for timed actions: send later, send-delay, snooze. Tests move it with
/// `MO_CLOCK_SKEW=SECONDS` (added to the real time, read once), as `MO_CRASH_AT` injects crashes, so a
/// process run "tomorrow at 09:00" needs no waiting; unset it costs one load.
public enum WallClock {
    private static let skew: Int = getenv("MO_CLOCK_SKEW").flatMap { Int(String(cString: $0)) } ?? 0

    public static func now() -> Int { Int(time(nil)) + skew }
}
