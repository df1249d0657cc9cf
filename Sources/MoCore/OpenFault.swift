#if canImport(Glibc)
    import Glibc
#endif

/// Deterministic open failures for the tests, where `chmod 000` cannot stop root (CI runs as root):
/// with `MO_FAIL_OPEN=<text>`, `OpenFault.error(opening:)` gives EACCES for every path containing
/// `<text>`, as opening a mode-000 file does for anyone else. Callers ask it just before the `open`
/// it stands for (today: `WireFile`, reading a message for its key and its upload).
///
/// Unset (the normal case) this costs one load per call.
public enum OpenFault {
    private static let needle: String? = {
        guard let raw = getenv("MO_FAIL_OPEN") else { return nil }
        let s = String(cString: raw)
        return s.isEmpty ? nil : s
    }()

    public static func error(opening path: String) -> Int32? {
        guard let needle, path.contains(needle) else { return nil }
        return EACCES
    }
}
