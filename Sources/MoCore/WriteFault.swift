#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// Deterministic full-disk injection for the tests (a sibling of `CrashPoint`): with
/// `MO_FAULT_ENOSPC_AFTER=<bytes>`, message bodies write normally until that many bytes have been written by
/// the process, then every further body write fails with ENOSPC, as on a disk that filled up and stays full.
/// Only the Maildir module's delivery writes consult `check` (mounting a small file system needs root).
///
/// `MO_FAULT_ENOSPC_STATE_AFTER=<bytes>` does the same for the sync state (journal appends and state
/// files, `stateAllowance`), with a budget of its own; a journal append that meets the limit writes what
/// still fits first, as a disk filling up mid-write does.
///
/// Unset (the normal case) this costs one load per write.
public enum WriteFault {
    private static let budget: Int? = {
        guard let raw = getenv("MO_FAULT_ENOSPC_AFTER") else { return nil }
        return Int(String(cString: raw))
    }()
    private static let written = Atomic<Int>(0)
    private static let stateBudget: Int? = {
        guard let raw = getenv("MO_FAULT_ENOSPC_STATE_AFTER") else { return nil }
        return Int(String(cString: raw))
    }()
    private static let stateWritten = Atomic<Int>(0)

    /// For a state write of `count` bytes: nil if it may proceed, else how many of its bytes still fit
    /// (the write then fails with ENOSPC after them).
    @inline(__always)
    public static func stateAllowance(_ count: Int) -> Int? {
        guard let stateBudget else { return nil }
        let total = stateWritten.wrappingAdd(count, ordering: .relaxed).newValue
        return total > stateBudget ? max(0, count - (total - stateBudget)) : nil
    }

    /// ENOSPC if a write of `count` bytes is to fail, else nil (and the bytes are counted).
    @inline(__always)
    public static func check(_ count: Int) -> Int32? {
        guard let budget else { return nil }
        let total = written.wrappingAdd(count, ordering: .relaxed).newValue
        return total > budget ? ENOSPC : nil
    }
}
