#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Deterministic crash injection for the crash-safety tests (isync's `-Ts<step>` idea): every call to
/// `CrashPoint.step(_:)` counts one step; when the count reaches `MO_CRASH_AT`, the process ends at once
/// with `_exit(137)` — no cleanup, no buffered output, as after `kill -9`. `MO_CRASH_AT=list` prints each
/// step's number and name on stderr instead, so a test can learn how many steps a run has.
///
/// Unset (the normal case) this costs one load per step.
public enum CrashPoint {
    private static let target: Int? = {
        guard let raw = getenv("MO_CRASH_AT") else { return nil }
        let s = String(cString: raw)
        return s == "list" ? 0 : Int(s)
    }()
    private static let counter = Atomic<Int>(0)

    @inline(__always)
    public static func step(_ name: StaticString) {
        guard let target else { return }
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        if target == 0 {
            let line = "crash-point \(n) \(name)\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
        } else if n == target {
            _exit(137)
        }
    }
}
