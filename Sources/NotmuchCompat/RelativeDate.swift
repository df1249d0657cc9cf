#if canImport(Glibc)
    import Glibc
#endif

/// notmuch's `date_relative` (notmuch-time.c), in the local time zone: front ends show it as it comes.
///
/// | `then` against `now`                         | shown         |
/// |----------------------------------------------|---------------|
/// | after now                                    | `the future`  |
/// | more than 180 days before                    | `2008-06-30`  |
/// | less than an hour before                     | `5 mins. ago` |
/// | under a day, same weekday                    | `Today 12:30` |
/// | at most 7 days, the weekday before           | `Yest. 12:30` |
/// | at most 7 days, another weekday              | `Mon. 12:30`  |
/// | otherwise (7 to 180 days, or a week to the day) | `October 12` |
public enum RelativeDate {
    static let minute = 60, hour = 3600, day = 86_400

    public static func describe(_ then: Int64, now: Int64) -> String {
        if then > now { return "the future" }
        let delta = now - then
        var t = time_t(then), n = time_t(now)
        var tmThen = tm(), tmNow = tm()
        localtime_r(&t, &tmThen)
        localtime_r(&n, &tmNow)
        if delta > 180 * Int64(day) { return format("%F", &tmThen) }
        if delta < Int64(hour) { return "\(delta / 60) mins. ago" }
        if delta <= 7 * Int64(day) {
            if tmThen.tm_wday == tmNow.tm_wday && delta < Int64(day) { return format("Today %R", &tmThen) }
            if (tmNow.tm_wday + 7 - tmThen.tm_wday) % 7 == 1 { return format("Yest. %R", &tmThen) }
            if tmThen.tm_wday != tmNow.tm_wday { return format("%a. %R", &tmThen) }
        }
        return format("%B %d", &tmThen)
    }

    /// strftime into notmuch's 20-byte buffer (a longer month name in some locale is cut as there).
    private static func format(_ pattern: String, _ tm: inout tm) -> String {
        var out = [CChar](repeating: 0, count: 20)
        let n = strftime(&out, 20, pattern, &tm)
        return String(decoding: out.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
