import MoCore

/// An IMAP `date-time` (INTERNALDATE, APPEND): `"17-Jul-1996 02:44:25 -0700"`, kept as its components.
public struct InternalDate: Sendable, Hashable, CustomStringConvertible {
    public var year: Int, month: Int, day: Int
    public var hour: Int, minute: Int, second: Int
    /// Offset from UTC in minutes (-0700 → -420).
    public var zoneMinutes: Int

    /// Nil when a component is out of range.
    public init?(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, zoneMinutes: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), (1...31).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
            (-1439...1439).contains(zoneMinutes)
        else { return nil }
        (self.year, self.month, self.day, self.hour, self.minute, self.second, self.zoneMinutes) =
            (year, month, day, hour, minute, second, zoneMinutes)
    }

    /// A UTC date from seconds since 1970-01-01T00:00:00Z.
    public init(epochSeconds: Int64, zoneMinutes: Int = 0) {
        let local = epochSeconds + Int64(zoneMinutes) * 60
        var days = local >= 0 ? local / 86400 : (local - 86399) / 86400
        let secs = Int(local - days * 86400)
        // Howard Hinnant's civil_from_days.
        days += 719468
        let era = (days >= 0 ? days : days - 146096) / 146097
        let doe = days - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = Int(doy - (153 * mp + 2) / 5 + 1)
        let m = Int(mp < 10 ? mp + 3 : mp - 9)
        let y = Int(yoe + era * 400) + (m <= 2 ? 1 : 0)
        (year, month, day) = (y, m, d)
        (hour, minute, second) = (secs / 3600, secs / 60 % 60, secs % 60)
        self.zoneMinutes = zoneMinutes
    }

    /// Seconds since 1970-01-01T00:00:00Z.
    public var epochSeconds: Int64 {
        // Howard Hinnant's days_from_civil.
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64(month > 2 ? month - 3 : month + 9)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        return days * 86400 + Int64(hour * 3600 + minute * 60 + second) - Int64(zoneMinutes) * 60
    }

    static let monthNames: [String] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The wire form without quotes: `17-Jul-1996 02:44:25 -0700`.
    public var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : String(n) }
        let z = abs(zoneMinutes)
        let year4 = String(repeating: "0", count: max(0, 4 - String(year).count)) + String(year)
        return "\(two(day))-\(InternalDate.monthNames[month - 1])-\(year4) \(two(hour)):\(two(minute)):\(two(second)) "
            + (zoneMinutes < 0 ? "-" : "+") + two(z / 60) + two(z % 60)
    }

    // date-time       = DQUOTE date-day-fixed "-" date-month "-" date-year SP time SP zone DQUOTE
    // date-day-fixed  = (SP DIGIT) / 2DIGIT
    // time            = 2DIGIT ":" 2DIGIT ":" 2DIGIT
    // zone            = ("+" / "-") 4DIGIT
    /// Parses the contents of the quoted date-time. Lenient about a one-digit day without the leading space.
    public init?(_ text: some Collection<UInt8>) {
        var b = Array(text)
        if b.first == UInt8(ascii: " ") { b.removeFirst() }
        if b.count == 25 { b.insert(UInt8(ascii: "0"), at: 0) }  // "1-Jul-..." → "01-Jul-..."
        guard b.count == 26 else { return nil }
        func num(_ r: Range<Int>) -> Int? {
            var v = 0
            for i in r {
                guard ASCII.isDigit(b[i]) else { return nil }; v = v * 10 + Int(b[i] - UInt8(ascii: "0"))
            }
            return v
        }
        guard b[2] == UInt8(ascii: "-"), b[6] == UInt8(ascii: "-"), b[11] == UInt8(ascii: " "), b[14] == UInt8(ascii: ":"),
            b[17] == UInt8(ascii: ":"), b[20] == UInt8(ascii: " "),
            b[21] == UInt8(ascii: "+") || b[21] == UInt8(ascii: "-"),
            let day = num(0..<2), let year = num(7..<11), let h = num(12..<14), let mi = num(15..<17),
            let s = num(18..<20), let zh = num(22..<24), let zm = num(24..<26), zm < 60
        else { return nil }
        let mon = String(decoding: b[3..<6], as: UTF8.self).lowercased()
        guard let m = InternalDate.monthNames.firstIndex(where: { $0.lowercased() == mon }) else { return nil }
        let zone = (zh * 60 + zm) * (b[21] == UInt8(ascii: "-") ? -1 : 1)
        self.init(year: year, month: m + 1, day: day, hour: h, minute: mi, second: s, zoneMinutes: zone)
    }
}
