import MoCore

/// Date header parsing: RFC 5322, its obsolete forms and what real mail carries.
public enum DateParser {
    /// Seconds since the epoch for a Date header value, or nil when no plausible date is found (the
    /// caller then falls back to the file's mtime). Accepts: optional day name; `5 Mar 2002` or
    /// `Mar 5 2002` (ctime order) or ISO `2002-03-05` (also `2002/03/05`); two-digit years (00–49 → 20xx,
    /// 50–99 → 19xx) and three-digit years (+1900), while four digits are the year as written (`0102`: 102,
    /// out of range); `hh:mm[:ss]` with `T` or blank separators; zones as `±hhmm` (any hours: `-1900`),
    /// `±hh:mm`, `±hh`, named (UT, GMT, Z, EST/EDT, CST/CDT, MST/MDT, PST/PDT, and a few more) or
    /// single-letter military (treated as +0000, as RFC 5322 advises); comments and junk ignored.
    /// A missing zone means UTC. Never traps, whatever the input.
    public static func parse(_ text: String) -> Int64? {
        parse(Array(text.utf8))
    }

    /// Bytes variant of ``parse(_:)-swift.type.method``.
    public static func parse(_ bytes: [UInt8]) -> Int64? { parseWithZone(bytes)?.seconds }

    /// The date and the zone it was written in (seconds east of UTC; 0 when none was given), for
    /// printing it again as its sender wrote it.
    public static func parseWithZone(_ bytes: [UInt8]) -> (seconds: Int64, zone: Int)? {
        let tokens = tokenize(bytes)
        var day: Int?, month: Int?, year: Int?, yearDigits = 4
        var hour: Int?, minute: Int?, second = 0
        var zone: Int?  // seconds east of UTC
        var pendingNumbers = [(value: Int, digits: Int)]()

        for tok in tokens.prefix(64) {
            switch tok {
            case .word(let w):
                if month == nil, let m = monthNames[String(w.prefix(3))], w.count >= 3 {
                    month = m
                } else if hour != nil, zone == nil, let z = zoneNames[w] {
                    zone = z * 3600
                } else if hour != nil, zone == nil, w.count == 1, let c = w.first, c != "t" {
                    zone = 0  // military zone: RFC 5322 says treat as -0000 (their sign was botched)
                }
            case .number(let v, let digits):
                pendingNumbers.append((v, digits))
            case .time(let h, let m, let s):
                if hour == nil { hour = h; minute = m; second = s }
            case .offset(let secs):
                if hour != nil || !pendingNumbers.isEmpty, zone == nil { zone = secs }
            case .isoDate(let y, let m, let d):
                if year == nil { year = y; month = m; day = d }
            }
        }
        // Assign the bare numbers: day (1–31, 1–2 digits) then year.
        for (v, digits) in pendingNumbers {
            if day == nil, digits <= 2, v >= 1, v <= 31 {
                day = v
            } else if year == nil {
                year = v
                yearDigits = digits
            } else if day == nil, v >= 1, v <= 31 {
                day = v
            }
        }
        guard var y = year, let mo = month, let d = day else { return nil }
        // Two and three digits only: a four-digit "0102" is the year 102 (out of range: nil), as GMime
        // reads it for notmuch, not 2002.
        if yearDigits <= 3 { if y < 50 { y += 2000 } else { y += 1900 } }
        guard y >= 1900 && y <= 9999, d >= 1 && d <= 31 else { return nil }
        let h = hour ?? 0, mi = minute ?? 0
        guard h <= 24, mi <= 59, second <= 61 else { return nil }
        let days = daysFromCivil(y, mo, d)
        return (Int64(days) * 86400 + Int64(h * 3600 + mi * 60 + min(second, 59)) - Int64(zone ?? 0), zone ?? 0)
    }

    enum Token {
        case word(String)  // lower-cased letters
        case number(Int, Int)  // value, digit count
        case time(Int, Int, Int)
        case offset(Int)  // seconds
        case isoDate(Int, Int, Int)
    }

    static let monthNames: [String: Int] = [
        "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
        "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12
    ]

    static let zoneNames: [String: Int] = [
        "ut": 0, "utc": 0, "gmt": 0, "z": 0, "wet": 0, "bst": 1, "cet": 1, "met": 1, "mez": 1, "cest": 2,
        "mest": 2, "eet": 2, "eest": 3, "msk": 3, "ist": 5, "jst": 9, "kst": 9, "hkt": 8, "sgt": 8,
        "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6, "pst": -8, "pdt": -7,
        "akst": -9, "akdt": -8, "hst": -10, "ast": -4, "adt": -3, "nzst": 12, "nzdt": 13, "aest": 10, "aedt": 11
    ]

    static func tokenize(_ a: [UInt8]) -> [Token] {
        var out = [Token]()
        var i = 0
        let n = min(a.count, 512)  // a date is short; bounded work on junk
        func digitsAt(_ j: Int) -> (Int, Int) {
            var k = j, v = 0
            while k < n, a[k] >= UInt8(ascii: "0"), a[k] <= UInt8(ascii: "9"), k - j < 9 {
                v = v * 10 + Int(a[k] - UInt8(ascii: "0")); k += 1
            }
            return (v, k - j)
        }
        var depth = 0
        while i < n {
            let b = a[i]
            if b == UInt8(ascii: "(") { depth += 1; i += 1; continue }
            if b == UInt8(ascii: ")") { depth = max(0, depth - 1); i += 1; continue }
            if depth > 0 { i += 1; continue }
            if ASCII.isDigit(b) {
                let (v, len) = digitsAt(i)
                var j = i + len
                if j < n, a[j] == UInt8(ascii: ":") {
                    let (m, ml) = digitsAt(j + 1)
                    if ml > 0 {
                        j = j + 1 + ml
                        var s = 0
                        if j < n, a[j] == UInt8(ascii: ":") {
                            let (sv, sl) = digitsAt(j + 1)
                            if sl > 0 { s = sv; j += 1 + sl }
                        }
                        if j < n, a[j] == UInt8(ascii: ".") {  // fractional seconds
                            j += 1
                            while j < n, ASCII.isDigit(a[j]) { j += 1 }
                        }
                        out.append(.time(v, m, s))
                        i = j
                        continue
                    }
                }
                // ISO 2002-09-14, and 2002/09/14 as some spam writes it (GMime, hence notmuch, reads both).
                if len == 4, j < n, a[j] == UInt8(ascii: "-") || a[j] == UInt8(ascii: "/") {
                    let separator = a[j]
                    let (mo, ml) = digitsAt(j + 1)
                    let k = j + 1 + ml
                    if ml >= 1, ml <= 2, k < n, a[k] == separator {
                        let (d, dl) = digitsAt(k + 1)
                        if dl >= 1, dl <= 2, mo >= 1, mo <= 12 {
                            out.append(.isoDate(v, mo, d))
                            i = k + 1 + dl
                            continue
                        }
                    }
                }
                out.append(.number(v, len))
                i = j
                continue
            }
            let afterLetter = i > 0 && (a[i - 1] | 0x20) >= UInt8(ascii: "a") && (a[i - 1] | 0x20) <= UInt8(ascii: "z")
            if (b == UInt8(ascii: "+") || b == UInt8(ascii: "-")), !afterLetter || out.isEmpty || hasTime(out), i + 1 < n,
                ASCII.isDigit(a[i + 1])
            {
                let sign = b == UInt8(ascii: "-") ? -1 : 1
                var (v, len) = digitsAt(i + 1)
                var j = i + 1 + len
                if len <= 2, j < n, a[j] == UInt8(ascii: ":") {  // +hh:mm
                    let (m, ml) = digitsAt(j + 1)
                    if ml == 2 { v = v * 100 + m; len = 4; j += 3 }
                } else if len <= 2 {
                    v *= 100
                    len = 4
                }
                // Any hours, as GMime takes them: "-1900" is 19 hours west (real spam; notmuch dates it so).
                if len == 4 || len == 3 {
                    let hh = v / 100, mm = v % 100
                    if mm < 60 { out.append(.offset(sign * (hh * 3600 + mm * 60))) }
                }
                i = j
                continue
            }
            if (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z") {
                var j = i
                var w = [UInt8]()
                while j < n, (a[j] | 0x20) >= UInt8(ascii: "a"), (a[j] | 0x20) <= UInt8(ascii: "z") { w.append(a[j] | 0x20); j += 1 }
                // "2002-03-05T12:34" arrives here as the word "t" followed by the time: skip it.
                out.append(.word(String(decoding: w, as: UTF8.self)))
                i = j
                continue
            }
            i += 1
        }
        return out
    }

    static func hasTime(_ t: [Token]) -> Bool {
        t.contains { if case .time = $0 { return true } else { return false } }
    }

    /// Days from 1970-01-01 to the proleptic Gregorian y-m-d (Howard Hinnant's algorithm); the day may
    /// overflow its month (31 Feb → 3 Mar), as mktime does.
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (m + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }
}
