/// Sizes as people write them in the configuration: `"2500M"`, `"2G"`, `"512K"`, or bytes (`"1048576"`);
/// K, M and G are powers of 1024, as in mbsync's `MaxSize`. And the rounded `"2.4 GB"` of status lines.
public enum SizeText {
    static let units: [(suffix: Character, bytes: Int)] = [("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)]

    /// A whole number, with or without one unit (either case); nil for anything else and for overflow.
    public static func parse(_ text: String) -> Int? {
        guard let last = text.last, text.first != "+" else { return nil }
        let scale = units.first { $0.suffix == Character(last.uppercased()) }?.bytes
        guard let n = Int(scale == nil ? Substring(text) : text.dropLast()), n >= 0 else { return nil }
        let (bytes, overflow) = n.multipliedReportingOverflow(by: scale ?? 1)
        return overflow ? nil : bytes
    }

    /// `"512 bytes"`, `"12 KB"`, `"340 MB"`, `"2.4 GB"` (1024-based, as `parse`).
    public static func format(_ bytes: Int) -> String {
        if bytes < 1 << 10 { return "\(bytes) bytes" }
        if bytes < 1 << 20 { return "\(bytes >> 10) KB" }
        if bytes < 1 << 30 { return "\(bytes >> 20) MB" }
        let tenths = (bytes * 10) >> 30
        return "\(tenths / 10).\(tenths % 10) GB"
    }
}
