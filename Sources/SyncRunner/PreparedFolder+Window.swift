import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import SyncEngine
import SyncState

/// A folder's date window as a run applies it (`max-age`, docs/sync-design.md "Date windows"): fixed for
/// the run by `AccountSync` from the configuration and the window the last run recorded
/// (`FolderStateStore.windowLine`). `line` writes that record and `widened` reads it back.
struct FolderWindow {
    /// The window's first day this run (00:00 UTC); nil: no window any more (the last run had one).
    let firstDay: InternalDate?
    let keepFlagged: Bool
    let keepUnread: Bool
    let expireLocal: Bool
    /// The window as the last finished run applied it (`FolderStateStore.windowLine`); nil: none.
    let last: String?

    init(_ age: MaxAge?, config: SyncConfig, last: String?, now: Int64) {
        switch age {
        case .days(let n)?:
            let d = InternalDate(epochSeconds: now - Int64(n) * 86_400)
            firstDay = InternalDate(year: d.year, month: d.month, day: d.day, hour: 0, minute: 0, second: 0, zoneMinutes: 0)
        case .since(let y, let m, let d)?:
            firstDay = InternalDate(year: y, month: m, day: d, hour: 0, minute: 0, second: 0, zoneMinutes: 0)
        case nil:
            firstDay = nil
        }
        keepFlagged = config.maxAgeKeepsFlagged
        keepUnread = config.maxAgeKeepsUnread
        expireLocal = config.expireLocal
        self.last = last
    }

    /// `2025-11-27 keep=flagged,unread expire-local`, as the state directory records it; nil: no window.
    var line: String? {
        guard let firstDay else { return nil }
        let keeps = [keepFlagged ? "flagged" : nil, keepUnread ? "unread" : nil].compactMap { $0 }.joined(separator: ",")
        return MaxAge.day(year: firstDay.year, month: firstDay.month, day: firstDay.day) + " keep=" + keeps
            + (expireLocal ? " expire-local" : "")
    }
    /// The window changed since the last run (its first day moves once a day): the fast paths are skipped
    /// once, so the full path records it (and, with `expireLocal`, lets go what left the window).
    var moved: Bool { line != last }
    /// The window grew (an earlier first day, a kind of message kept that was not) or went: the server is
    /// listed whole and every outside record judged again, so what is now inside is fetched.
    var widened: Bool {
        guard let last else { return false }
        guard let line else { return true }
        let was = last.split(separator: " "), now = line.split(separator: " ")
        guard was.count >= 2, now.count >= 2 else { return true }
        let keptBefore = Set(was[1].dropFirst("keep=".count).split(separator: ","))
        return now[0] < was[0] || !Set(now[1].dropFirst("keep=".count).split(separator: ",")).isSubset(of: keptBefore)
    }
}

/// `PreparedFolder`'s window: which of the messages the plan may meet are outside it (one `UID SEARCH
/// BEFORE`, asked only when there are such messages), the expiry pass, and the window recorded.
extension PreparedFolder {
    /// After the listing, before the settled pairs are let go: sets `window` for the plan. With
    /// `expireLocal` on the full path, when the first day moved, the settled pairs outside the window
    /// are taken back into the plan (their files found), so it can let their local copies go.
    func judgeWindow(on server: any ServerStore) throws {
        guard let w = sync.window else { return }
        guard let firstDay = w.firstDay else {
            window = .everything
            return
        }
        let expiring = w.expireLocal && w.moved && loadedUIDs == nil
        // An outside record needs judging when its message changed on the server (a flag may keep it now)
        // or the window grew; a whole listing (no QRESYNC) lists it unchanged on every run.
        let meets =
            !unpairedRemote.isEmpty
            || table.unsettledRecords.contains { r in
                r.isOutside
                    && remote[r.uid].map {
                        w.widened || $0.subtracting(SyncRecord.outsideMark) != r.flags.subtracting(SyncRecord.outsideMark)
                    } ?? false
            }
        guard meets || expiring else { return }
        try ensureSelected(on: server)
        let before = try server.ids(arrivedBefore: firstDay)
        // Only the ids the plan can meet (a hostile `1:4294967295` costs what we know).
        var candidates = Array(remote.keys)
        if expiring { candidates += table.unorderedRecords.lazy.filter { $0.uid != 0 && self.remote[$0.uid] == nil }.map(\.uid) }
        let known = Set(candidates)
        let outside = before.elements(among: candidates, knownCount: known.count, isKnown: { known.contains($0) })
        let judged = SyncWindow(outside: Set(outside), keepFlagged: w.keepFlagged, keepUnread: w.keepUnread, expireLocal: expiring)
        window = judged
        guard expiring else { return }
        var back: [(unique: String, flags: MaildirFlags)] = []
        for uid in outside where remote[uid] == nil {
            guard let r = table.record(uid: uid), !r.unique.isEmpty, !r.isOutside, !judged.admits(uid: uid, flags: r.flags),
                table.unsettle(uid: uid) != nil
            else { continue }
            remote[uid] = r.flags  // settled: the server's flags are the record's
            back.append((r.unique, r.flags))
        }
        try findFiles(back)
    }

    /// After a finished run: the window as applied, when it changed (nothing for a dry run).
    func recordWindow() throws {
        guard let w = sync.window, !dryRun, w.moved else { return }
        try store.recordWindowLine(w.line)
    }
}
