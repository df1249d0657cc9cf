#if canImport(Glibc)
    import Glibc
#endif

/// `date:` values as spans of local time, in seconds since 1970 (docs/query-language.md):
/// `2024-03-31`, `2024-03`, `2024`, `today`, `yesterday`, `now`, relative `3d`, `2w`, `6m`, `1y`
/// (that long before now), and ranges `A..B`, `A..`, `..B`. A span covers its whole unit: `2024`
/// is the whole year, so `..2023` ends on 2023-12-31 23:59:59. A relative date alone means since then
/// (`2w`: the last two weeks); as an end of a range it stands for its whole unit as in notmuch 0.37
/// (`..2w`: until the end of the week, Sunday to Saturday, of two weeks ago; `30d..10d`: from the day 30
/// days ago through the day 10 days ago). notmuch's other absolute forms are read too (`otherSpan`), and
/// `A..!` is A's own span (notmuch's "same").
enum DateExpression {
    /// The inclusive range a value stands for; nil bounds are open.
    static func range(_ text: String, now: Int64) -> (low: Int64?, high: Int64?)? {
        if let dots = text.range(of: "..") {
            let a = String(text[..<dots.lowerBound]), b = String(text[dots.upperBound...])
            if a.isEmpty && b.isEmpty { return nil }
            var low: Int64? = nil, high: Int64? = nil
            // A relative end is rounded to its unit, as notmuch rounds it: `..2w` ends with the week of two
            // weeks ago, `30d..10d` runs from the start of the day 30 days ago to the end of the day 10 days ago.
            if !a.isEmpty { guard let s = relativeSpan(a, now: now) ?? span(a, now: now) else { return nil }; low = s.low }
            let end = b == "!" ? a : b
            if !end.isEmpty { guard let s = relativeSpan(end, now: now) ?? span(end, now: now) else { return nil }; high = s.high }
            return (low, high)
        }
        guard let s = span(text, now: now) else { return nil }
        return (s.low, s.high)
    }

    /// `3d`, `2w`, `6m`, `1y`: the moment that long before now (days and weeks of 24 hours; months and years
    /// of the calendar, as `date -d "6 months ago"`), with its unit.
    static func relative(_ text: String, now: Int64) -> (moment: Int64, unit: Character)? {
        let t = text.lowercased()
        guard let unit = t.last, "dwmy".contains(unit), let n = Int32(t.dropLast()), n >= 0, n < 100_000 else { return nil }
        var time = time_t(now)
        var tm = Glibc.tm()
        localtime_r(&time, &tm)
        switch unit {
        case "d": tm.tm_mday -= n
        case "w": tm.tm_mday -= 7 * n
        case "m": tm.tm_mon -= n
        default: tm.tm_year -= n
        }
        tm.tm_isdst = -1
        return (Int64(mktime(&tm)), unit)
    }

    /// A relative date's whole unit: the day, the week (Sunday to Saturday), the month or the year it
    /// falls in, as notmuch 0.37 reads the ends of a range.
    static func relativeSpan(_ text: String, now: Int64) -> (low: Int64, high: Int64)? {
        guard let (moment, unit) = relative(text, now: now) else { return nil }
        var time = time_t(moment)
        var tm = Glibc.tm()
        localtime_r(&time, &tm)
        let y = tm.tm_year + 1900, m = tm.tm_mon + 1, d = tm.tm_mday
        switch unit {
        case "d": return (local(y, m, d), local(y, m, d + 1) - 1)
        case "w": return (local(y, m, d - tm.tm_wday), local(y, m, d - tm.tm_wday + 7) - 1)
        case "m": return (local(y, m, 1), local(y, m + 1, 1) - 1)
        default: return (local(y, 1, 1), local(y + 1, 1, 1) - 1)
        }
    }

    /// One date's span [low, high].
    static func span(_ text: String, now: Int64) -> (low: Int64, high: Int64)? {
        let t = text.lowercased()
        switch t {
        case "now": return (now, now)
        case "today": let d = startOfDay(now); return (d, endOfDay(d))
        case "yesterday": let d = startOfDay(startOfDay(now) - 1); return (d, endOfDay(d))
        default: break
        }
        // Alone, a relative date means since then: `date:2w` is the last two weeks.
        if let (moment, _) = relative(t, now: now) { return (moment, now) }
        let parts = t.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) }),
            let year = Int32(parts[0]), parts[0].count == 4
        else { return otherSpan(t) }
        let month = parts.count > 1 ? Int32(parts[1]) ?? 0 : 1
        let dayOfMonth = parts.count > 2 ? Int32(parts[2]) ?? 0 : 1
        guard (1...12).contains(month), (1...31).contains(dayOfMonth) else { return nil }
        let low = local(year, month, dayOfMonth)
        let high: Int64
        switch parts.count {
        case 1: high = local(year + 1, 1, 1) - 1
        case 2: high = month == 12 ? local(year + 1, 1, 1) - 1 : local(year, month + 1, 1) - 1
        default: high = local(year, month, dayOfMonth + 1) - 1
        }
        return (low, high)
    }

    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// notmuch's (parse-time-string's) other absolute forms: `12/16/2010` (month/day/year) and
    /// `18-Nov-2009`, each its day; a date with a time after `_` or `t` (`2009-11-18_04:49:52`,
    /// `18-nov-2009_02:19`) and an optional zone (`-0800`, `-06:00`, `z`, `utc`; else local time): that
    /// second, or that minute. `t` is lower-cased.
    static func otherSpan(_ t: String) -> (low: Int64, high: Int64)? {
        var datePart = Substring(t), timePart: Substring? = nil
        if let sep = t.firstIndex(where: { $0 == "_" || $0 == "t" }), t[t.index(after: sep)...].first?.isNumber == true {
            datePart = t[..<sep]
            timePart = t[t.index(after: sep)...]
        }
        let y: Int32, m: Int32, d: Int32
        let slash = datePart.split(separator: "/", omittingEmptySubsequences: false)
        let dash = datePart.split(separator: "-", omittingEmptySubsequences: false)
        if slash.count == 3, let mm = Int32(slash[0]), let dd = Int32(slash[1]), let yy = Int32(slash[2]), slash[2].count == 4 {
            (y, m, d) = (yy, mm, dd)
        } else if dash.count == 3, let dd = Int32(dash[0]), let mi = months.firstIndex(of: String(dash[1].prefix(3))),
            dash[1].count >= 3, let yy = Int32(dash[2]), dash[2].count == 4
        {
            (y, m, d) = (yy, Int32(mi) + 1, dd)
        } else if dash.count == 3, dash[0].count == 4, let yy = Int32(dash[0]), let mm = Int32(dash[1]), let dd = Int32(dash[2]) {
            (y, m, d) = (yy, mm, dd)
        } else {
            return nil
        }
        guard (1...12).contains(m), (1...31).contains(d), (1000...9999).contains(y) else { return nil }
        guard let time = timePart else { return (local(y, m, d), local(y, m, d + 1) - 1) }
        // The zone: a sign and hhmm or hh:mm, or z/utc, at the end.
        var clock = time, offset: Int64? = nil
        if clock.hasSuffix("z") || clock.hasSuffix("utc") {
            clock = clock.dropLast(clock.hasSuffix("z") ? 1 : 3)
            offset = 0
        } else if let sign = clock.lastIndex(where: { $0 == "+" || $0 == "-" }) {
            let zone = clock[clock.index(after: sign)...].filter { $0 != ":" }
            guard zone.count == 4, let hh = Int64(zone.prefix(2)), let mm = Int64(zone.suffix(2)), hh < 24, mm < 60 else { return nil }
            offset = (clock[sign] == "-" ? -1 : 1) * (hh * 3600 + mm * 60)
            clock = clock[..<sign]
        }
        let fields = clock.split(separator: ":", omittingEmptySubsequences: false).map { Int32($0) }
        guard (2...3).contains(fields.count), fields.allSatisfy({ $0 != nil }) else { return nil }
        let (hh, mi, ss) = (fields[0]!, fields[1]!, fields.count == 3 ? fields[2]! : 0)
        guard (0...23).contains(hh), (0...59).contains(mi), (0...60).contains(ss) else { return nil }
        let seconds = Int64(hh) * 3600 + Int64(mi) * 60 + Int64(ss)
        let moment: Int64
        if let offset {
            var tm = Glibc.tm()
            (tm.tm_year, tm.tm_mon, tm.tm_mday) = (y - 1900, m - 1, d)
            moment = Int64(timegm(&tm)) + seconds - offset
        } else {
            moment = local(y, m, d) + seconds
        }
        return (moment, moment + (fields.count == 3 ? 0 : 59))
    }

    static func local(_ year: Int32, _ month: Int32, _ day: Int32) -> Int64 {
        var tm = Glibc.tm()
        tm.tm_year = year - 1900
        tm.tm_mon = month - 1
        tm.tm_mday = day
        tm.tm_isdst = -1
        return Int64(mktime(&tm))
    }

    static func startOfDay(_ t: Int64) -> Int64 {
        var time = time_t(t)
        var tm = Glibc.tm()
        localtime_r(&time, &tm)
        return local(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday)
    }

    static func endOfDay(_ start: Int64) -> Int64 {
        var time = time_t(start)
        var tm = Glibc.tm()
        localtime_r(&time, &tm)
        return local(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday + 1) - 1
    }
}

/// `size:` values in bytes: `>1M`, `<10k`, `>=2M`, `100k..1M`, `..50k`, `2M` (exactly). k, M, G are
/// powers of 1024.
enum SizeExpression {
    static func range(_ text: String) -> (low: Double?, high: Double?)? {
        if let dots = text.range(of: "..") {
            let a = String(text[..<dots.lowerBound]), b = String(text[dots.upperBound...])
            if a.isEmpty && b.isEmpty { return nil }
            var low: Double? = nil, high: Double? = nil
            if !a.isEmpty { guard let v = number(a) else { return nil }; low = v }
            if !b.isEmpty { guard let v = number(b) else { return nil }; high = v }
            return (low, high)
        }
        for (op, make) in [
            (">=", { (v: Double) in (v, nil as Double?) }), ("<=", { (nil, $0) }),
            (">", { ($0 + 1, nil) }), ("<", { (nil, $0 - 1) })
        ] as [(String, (Double) -> (Double?, Double?))] {
            if text.hasPrefix(op) {
                guard let v = number(String(text.dropFirst(op.count))) else { return nil }
                return make(v)
            }
        }
        guard let v = number(text) else { return nil }
        return (v, v)
    }

    static func number(_ text: String) -> Double? {
        var t = text.lowercased()
        if t.hasSuffix("b") { t.removeLast() }
        var factor: Double = 1
        if let last = t.last, let f = ["k": 1024.0, "m": 1_048_576.0, "g": 1_073_741_824.0][String(last)] {
            factor = f
            t.removeLast()
        }
        guard let v = Double(t), v >= 0 else { return nil }
        return (v * factor).rounded()
    }
}
