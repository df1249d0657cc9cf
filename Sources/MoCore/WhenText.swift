#if canImport(Glibc)
    import Glibc
#endif

/// Times as people type them for "send later" and "snooze", read in the local time zone, and the line
/// that shows one back. One home for both: mo-sendmail `--at`, its `X-Mo-Send-At:` field and mo-index
/// `snooze` read the same words.
///
/// | text                                   | means                                                   |
/// |----------------------------------------|---------------------------------------------------------|
/// | `+90s`, `+30m`, `+2h`, `+3d`, `+1w`, `+1h30m` | from now                                         |
/// | `09:00`, `9:05`                         | the next such time: today, or tomorrow once it passed   |
/// | `today 17:00`                           | today at that time                                       |
/// | `tomorrow`, `tomorrow 09:00`            | tomorrow, at 08:00 unless a time is given                |
/// | `monday`, `fri 14:00`                   | the next such weekday (a week on if it is today), 08:00  |
/// | `2026-12-24`, `2026-12-24 18:30`        | that day, 08:00 unless a time is given                   |
/// | `2026-12-24T18:30:00Z`, `…+01:00`        | RFC 3339: the zone given, not the local one              |
/// | `now`                                   | now                                                      |
///
/// A word and its time may be joined by a space, `@` or (after a date) `T`, because neomutt splits its
/// `sendmail` command at spaces: `--at=tomorrow@09:00`. Case does not matter.
public enum WhenText {
    /// What `parse` accepts, for error messages.
    public static let expected =
        "expected +2h, 09:00, tomorrow 09:00, friday 14:00, 2026-12-24 18:30, an RFC 3339 time, or now"

    static let morning = (hour: 8, minute: 0)
    static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    /// The Unix time `text` names, seen at `now`; nil when it is not one of the forms above, or names a
    /// time that does not exist (25:00, 31 February).
    public static func parse(_ text: String, now: Int) -> Int? {
        let t = text.trimmingSpaces().lowercased()
        if t == "now" { return now }
        if t.hasPrefix("+") { return relative(t.dropFirst()).map { now + $0 } }
        if let rfc = rfc3339(t) { return rfc }
        let (word, clock) = split(t)
        var time: (hour: Int, minute: Int)?
        if let clock {
            guard let hm = hourMinute(clock) else { return nil }
            time = hm
        }
        let today = localDay(now)
        if word.isEmpty, let time {
            guard let at = local(today, time) else { return nil }
            return at > now ? at : local(addDays(today, 1), time)
        }
        if word == "today" { return time.flatMap { local(today, $0) } }
        if word == "tomorrow" { return local(addDays(today, 1), time ?? morning) }
        if let w = weekdays.firstIndex(where: { $0 == word || ($0.hasPrefix(word) && word.count >= 3) }) {
            let ahead = (w - today.weekday + 7) % 7
            return local(addDays(today, ahead == 0 ? 7 : ahead), time ?? morning)
        }
        if let day = date(word) { return local(day, time ?? morning) }
        return nil
    }

    /// `Sat 28 Nov 09:00 (in 16 h)`, in the local time zone; the year is shown when it is not this one's.
    public static func describe(_ t: Int, now: Int) -> String {
        var time = time_t(t)
        var tm = Glibc.tm()
        localtime_r(&time, &tm)
        var nowTime = time_t(now)
        var nowTM = Glibc.tm()
        localtime_r(&nowTime, &nowTM)
        var buffer = [CChar](repeating: 0, count: 64)
        let format = tm.tm_year == nowTM.tm_year ? "%a %d %b %H:%M" : "%a %d %b %Y %H:%M"
        let n = strftime(&buffer, buffer.count, format, &tm)
        let text = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // To the nearest minute past two: "+2h" shown a second later is still "in 2 h", not "in 119 min".
        let delta = abs(t - now) >= 120 ? (t - now + (t >= now ? 30 : -30)) / 60 * 60 : t - now
        if delta == 0 { return text + " (now)" }  // a command logged this second, listed at once
        return text + (delta > 0 ? " (in \(DurationText.format(delta)))" : " (\(DurationText.format(-delta)) ago)")
    }

    // MARK: - Pieces

    struct Day: Equatable { var year: Int, month: Int, day: Int, weekday: Int }

    /// `tomorrow 09:00` → ("tomorrow", "09:00"); `09:00` → ("", "09:00"); `2026-12-24t18:30` → (date, time).
    static func split(_ t: String) -> (String, String?) {
        let startsWithDigit = t.utf8.first.map(ASCII.isDigit) ?? false
        if t.contains(":"), !t.contains(" "), !t.contains("@"), !t.contains("t") { return ("", t) }
        for separator: Character in [" ", "@", "t"] where separator != "t" || startsWithDigit {
            if let i = t.firstIndex(of: separator) {
                return (String(t[..<i]), String(t[t.index(after: i)...]).trimmingSpaces())
            }
        }
        return (t, nil)
    }

    /// `9:05`, `09:00`, `18:30:15` → (hour, minute) (seconds dropped); nil for anything else.
    static func hourMinute(_ s: String) -> (hour: Int, minute: Int)? {
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3,
            parts.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 2 && $0.utf8.allSatisfy(ASCII.isDigit) }),
            let h = Int(parts[0]), let m = Int(parts[1]), h < 24, m < 60, parts.count == 2 || (Int(parts[2]) ?? 60) < 60
        else { return nil }
        return (h, m)
    }

    /// `2h`, `30m`, `1h30m`, `90s`, `1w` → seconds (positive, no overflow).
    static func relative(_ s: Substring) -> Int? {
        var total = 0
        var digits = ""
        for ch in s {
            if let b = ch.asciiValue, ASCII.isDigit(b) { digits.append(ch); continue }
            let scale: Int
            switch ch {
            case "s": scale = 1
            case "m": scale = 60
            case "h": scale = 3_600
            case "d": scale = 86_400
            case "w": scale = 604_800
            default: return nil
            }
            guard let n = Int(digits), digits.count <= 9 else { return nil }
            total += n * scale
            digits = ""
        }
        return digits.isEmpty && total > 0 ? total : nil
    }

    /// `2026-12-24` → that day (its weekday filled in).
    static func date(_ s: String) -> Day? {
        let parts = s.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 4, parts[1].utf8.count == 2, parts[2].utf8.count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy(ASCII.isDigit) }),
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        return Day(year: y, month: m, day: d, weekday: 0)
    }

    /// RFC 3339 with its zone: `2026-12-24t18:30:00z`, `…:00.5+01:00` (lowercased already).
    static func rfc3339(_ s: String) -> Int? {
        guard s.count >= 20, let tIndex = s.firstIndex(of: "t"), let day = date(String(s[..<tIndex])) else { return nil }
        var rest = String(s[s.index(after: tIndex)...])
        var offset = 0
        if rest.hasSuffix("z") {
            rest.removeLast()
        } else if let sign = rest.lastIndex(where: { $0 == "+" || $0 == "-" }) {
            let zone = rest[rest.index(after: sign)...].split(separator: ":")
            guard zone.count == 2, zone.allSatisfy({ $0.utf8.count == 2 && $0.utf8.allSatisfy(ASCII.isDigit) }), let h = Int(zone[0]),
                let m = Int(zone[1]), h < 24, m < 60
            else {
                return nil
            }
            offset = (h * 3600 + m * 60) * (rest[sign] == "-" ? -1 : 1)
            rest = String(rest[..<sign])
        } else {
            return nil
        }
        if let dot = rest.firstIndex(of: ".") {
            guard rest[rest.index(after: dot)...].utf8.allSatisfy(ASCII.isDigit) else { return nil }
            rest = String(rest[..<dot])
        }
        let parts = rest.split(separator: ":")
        guard parts.count == 3, parts.allSatisfy({ $0.utf8.count == 2 && $0.utf8.allSatisfy(ASCII.isDigit) }), let h = Int(parts[0]),
            let m = Int(parts[1]), let sec = Int(parts[2]),
            h < 24, m < 60, sec < 61
        else { return nil }
        var tm = Glibc.tm()
        tm.tm_year = Int32(day.year - 1900)
        tm.tm_mon = Int32(day.month - 1)
        tm.tm_mday = Int32(day.day)
        tm.tm_hour = Int32(h)
        tm.tm_min = Int32(m)
        tm.tm_sec = Int32(sec)
        let utc = Int(timegm(&tm))
        guard tm.tm_mday == Int32(day.day) else { return nil }  // 31 February rolled over
        return utc - offset
    }

    static func localDay(_ t: Int) -> Day {
        var time = time_t(t)
        var tm = Glibc.tm()
        localtime_r(&time, &tm)
        return Day(year: Int(tm.tm_year) + 1900, month: Int(tm.tm_mon) + 1, day: Int(tm.tm_mday), weekday: Int(tm.tm_wday))
    }

    static func addDays(_ d: Day, _ n: Int) -> Day {
        var tm = Glibc.tm()
        tm.tm_year = Int32(d.year - 1900)
        tm.tm_mon = Int32(d.month - 1)
        tm.tm_mday = Int32(d.day + n)
        tm.tm_hour = 12  // midday: a DST change never moves the day
        tm.tm_isdst = -1
        return localDay(Int(mktime(&tm)))
    }

    /// The Unix time of `time` on local day `d` (nil for a day that does not exist).
    static func local(_ d: Day, _ time: (hour: Int, minute: Int)) -> Int? {
        var tm = Glibc.tm()
        tm.tm_year = Int32(d.year - 1900)
        tm.tm_mon = Int32(d.month - 1)
        tm.tm_mday = Int32(d.day)
        tm.tm_hour = Int32(time.hour)
        tm.tm_min = Int32(time.minute)
        tm.tm_isdst = -1
        let t = mktime(&tm)
        guard t != -1, tm.tm_mday == Int32(d.day), tm.tm_mon == Int32(d.month - 1) else { return nil }
        return Int(t)
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" || s.last == "\n" || s.last == "\r" { s.removeLast() }
        return String(s)
    }
}
