#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// The keyword a snoozed message carries: `$snoozed-20261128T090000Z`, its return time in UTC. On the
/// server it travels with the message, so any device's mo-sync can bring it back at the time.
public enum SnoozeMark {
    public static let prefix = "$snoozed-"

    public static func keyword(for time: Int) -> String {
        var t = time_t(time)
        var tm = Glibc.tm()
        gmtime_r(&t, &tm)
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return prefix + "\(tm.tm_year + 1900)\(two(tm.tm_mon + 1))\(two(tm.tm_mday))T\(two(tm.tm_hour))\(two(tm.tm_min))\(two(tm.tm_sec))Z"
    }

    /// The time a keyword names, or nil for any other keyword.
    public static func time(of keyword: String) -> Int? {
        guard keyword.lowercased().hasPrefix(prefix) else { return nil }
        let s = Array(keyword.utf8.dropFirst(prefix.utf8.count))
        guard s.count == 16, s[8] == UInt8(ascii: "T") || s[8] == UInt8(ascii: "t"),
            s[15] == UInt8(ascii: "Z") || s[15] == UInt8(ascii: "z")
        else { return nil }
        func n(_ r: Range<Int>) -> Int32? { Int32(String(decoding: s[r], as: UTF8.self)) }
        guard let y = n(0..<4), let mo = n(4..<6), let d = n(6..<8), let h = n(9..<11), let mi = n(11..<13), let se = n(13..<15),
            (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, se < 61
        else { return nil }
        var tm = Glibc.tm()
        tm.tm_year = y - 1900; tm.tm_mon = mo - 1; tm.tm_mday = d; tm.tm_hour = h; tm.tm_min = mi; tm.tm_sec = se
        return Int(timegm(&tm))
    }

    /// The earliest snooze time among `keywords`.
    public static func time(in keywords: Set<String>) -> Int? { keywords.compactMap(time(of:)).min() }
}

/// The snooze folder's messages, and their return to INBOX: shared by `mo-index snooze --cancel` and
/// mo-sync, which wakes those whose time has come after a pass over the account (`AccountSync.run`). A
/// wake is a local move (`KeywordMove`: to INBOX, the marks and `S` taken off), which the next pass makes
/// a UID MOVE (claimed first: the mark comes off under UNCHANGEDSINCE, `MoveDetector+Claims`). Two devices
/// waking one message both move their file: the server's message moves once, by the claim's winner, and
/// the other device's file waits a run and then pairs with the moved message by key: one message in INBOX.
public enum SnoozedFiles {
    /// Every message file in `folder` with a snooze mark, and its earliest time.
    public static func list(_ folder: String) -> [(path: String, until: Int)] {
        let table = (try? MaildirKeywords.load(folder: folder, lenient: true)) ?? MaildirKeywords()
        let extra = (try? ExtraKeywords.load(folder: folder, lenient: true)) ?? ExtraKeywords()
        var out: [(String, Int)] = []
        for sub in ["cur", "new"] {
            guard case .success(let names) = directoryNames(folder + "/" + sub) else { continue }
            for n in names where !n.hasPrefix(".") {
                guard let name = try? MaildirFilename(parsing: n),
                    let t = SnoozeMark.time(in: KeywordMove.keywords(of: name, table: table, extra: extra))
                else { continue }
                out.append((folder + "/" + sub + "/" + n, t))
            }
        }
        return out.sorted { $0.1 < $1.1 }
    }

    /// The change that wakes the file at `path`: every snooze mark off, and unread (only the changes the
    /// file needs, so that an undo puts back exactly what was there).
    public static func wakeChange(_ path: String) -> KeywordMove.Change {
        let seen = KeywordMove.name(of: path)?.flags.contains(.seen) ?? true
        return KeywordMove.Change(
            removeKeywords: KeywordMove.keywords(of: path).filter { SnoozeMark.time(of: $0) != nil }, removeFlags: seen ? .seen : [])
    }

    /// Moves every message of `folder` whose time is at or before `now` to `inbox`; returns how many.
    @discardableResult
    public static func wakeDue(_ folder: String, inbox: String, now: Int) throws -> Int {
        var woken = 0
        for (path, until) in list(folder) where until <= now {
            if try KeywordMove.move(path, to: inbox, change: wakeChange(path)) != nil { woken += 1 }
        }
        return woken
    }
}
