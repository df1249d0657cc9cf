/// Durations as people write and read them: the config's `"5d"`, `"12h"`, `"30m"`, `"45s"`, and the
/// rounded `"3 h"` of status lines. Seconds throughout.
public enum DurationText {
    static let units: [(suffix: Character, seconds: Int)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]

    /// A whole number with one unit (`d`, `h`, `m`, `s`), e.g. `"5d"`; nil for anything else (no bare
    /// numbers: "5" could mean days or seconds), for zero, and for values that overflow.
    public static func parse(_ text: String) -> Int? {
        guard let unit = text.last, let scale = units.first(where: { $0.suffix == unit })?.seconds,
            let n = Int(text.dropLast()), n > 0, text.first != "+"
        else { return nil }
        let (seconds, overflow) = n.multipliedReportingOverflow(by: scale)
        return overflow ? nil : seconds
    }

    /// Rounded down to the largest unit that still reads naturally: `"45 s"`, `"12 min"`, `"5 h"`, `"3 d"`.
    public static func format(_ seconds: Int) -> String {
        seconds < 120
            ? "\(seconds) s"
            : seconds < 7_200
                ? "\(seconds / 60) min"
                : seconds < 172_800
                    ? "\(seconds / 3_600) h"
                    : "\(seconds / 86_400) d"
    }
}
