#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// Deterministic crash injection for the crash-safety tests (isync's `-Ts<step>` idea). Every call to
/// `CrashPoint.step(_:)` counts one step, and the process ends at once with `_exit(137)` — no cleanup, no
/// buffered output, as after `kill -9` — when `MO_CRASH_AT` is that step's number or its name (e.g.
/// `committing`: the first step so named). `MO_CRASH_AT=list` prints each step's number and name on
/// stderr instead, so a test can learn how many steps a run has.
///
/// Unset (the normal case) this costs one load per step.
public enum CrashPoint {
    private enum Target { case list, number(Int), name(String) }
    private static let target: Target? = {
        guard let raw = getenv("MO_CRASH_AT") else { return nil }
        let s = String(cString: raw)
        if s.isEmpty { return nil }
        return s == "list" ? .list : Int(s).map(Target.number) ?? .name(s)
    }()
    private static let counter = Atomic<Int>(0)

    @inline(__always)
    public static func step(_ name: StaticString) {
        guard let target else { return }
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        switch target {
        case .list:
            let line = "crash-point \(n) \(name)\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
        case .number(let k) where k == n: _exit(137)
        case .name(let s) where s == name.description: _exit(137)
        default: break
        }
    }

    /// Beside the crash points, for a test that must act on the other side at one instant (another device's
    /// move between this run's listings of two folders): with `MO_PAUSE_AT=PLACE` the process sleeps 3 s
    /// the first time it reaches `pause(PLACE)`. Unset, this costs one load.
    private static let pauseTarget: String? = getenv("MO_PAUSE_AT").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    private static let paused = Atomic<Bool>(false)

    public static func pause(_ place: @autoclosure () -> String) {
        guard let pauseTarget, place() == pauseTarget, !paused.exchange(true, ordering: .relaxed) else { return }
        sleep(3)
    }
}
