#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// The modification times (ns) of a Maildir folder's `cur/` and `new/`: what a sync keeps so that the
/// next run knows, without listing the folder, that no file came, went or was renamed since.
///
/// A stamp is worth keeping only if every later change is certain to move it. The kernel stamps a
/// directory change with a clock that ticks every 1–10 ms (every second, or two, on file systems without
/// sub-second times), so a change in the same tick as the recorded one would leave the time unchanged.
/// Two things make a time safe to keep:
/// - **age**: the directory last changed more than one window ago (20 ms with sub-second times — twice
///   the coarsest kernel tick — and 2 s otherwise, notmuch's rule), so any later change lands in a later
///   tick;
/// - **set back**: a directory whose last change was this run's own gets an mtime one unit (1 ns, or 1 s
///   without sub-second times) before its current one. Every later change is stamped from the clock,
///   which has already reached the current time, so none can produce the set-back value. This lets a
///   run commit right after its own changes instead of waiting out the window.
///
/// Setting an mtime back by a nanosecond is invisible to mail clients (neomutt and notmuch compare
/// directory times for equality or "newer than what I saw", and the value stays newer than any time
/// before this run's change).
public struct DirectoryStamp: Sendable, Equatable {
    public var cur: Int64
    public var new: Int64
    public init(cur: Int64, new: Int64) {
        self.cur = cur
        self.new = new
    }

    subscript(_ subdir: MaildirSubdir) -> Int64 {
        get { subdir == .cur ? cur : new }
        set { if subdir == .cur { cur = newValue } else { new = newValue } }
    }

    /// What a commit may do with one directory's time.
    ///
    /// | time now vs. this run's last look | equals the committed stamp | age      | moved since the scan | verdict      |
    /// |-----------------------------------|----------------------------|----------|----------------------|--------------|
    /// | different                         | —                          | —        | —                    | `.foreign`   |
    /// | same                              | yes                        | —        | —                    | `.keep`      |
    /// | same                              | no                         | ≥ window | —                    | `.keep`      |
    /// | same                              | no                         | < window | yes (by this run)    | `.setBack`, unless the time set back would equal the committed stamp or the time at the scan |
    /// | same                              | no                         | < window | no                   | `.tooRecent` |
    ///
    /// A committed stamp was safe when it was written, so a time still equal to it is safe at any age
    /// (a set-back time is recent but safe).
    /// `.foreign`: another program changed the directory after this run's last look, and the run did not
    /// see what it did. `.tooRecent`: a program changed it just before the scan; a change in the same
    /// tick after the scan would be invisible, so no stamp may be kept (the next run scans). `.setBack`
    /// applies only to times made by the run's own changes: it knows exactly what it changed. It never sets a
    /// time back onto one a reader may have recorded (the last commit's, or the one before the scan): two
    /// changes in one clock tick (likely with whole-second times) would then look like none to that reader
    /// (mo-index's update, a mail client); such a time is `.tooRecent` instead, and the next run scans.
    public enum Verdict: Equatable, Sendable { case foreign, keep, setBack, tooRecent }

    public static func verdict(now: Int64, lastSeen: Int64, committed: Int64?, atScan: Int64, clock: Int64) -> Verdict {
        guard now == lastSeen else { return .foreign }
        if now == committed || clock - now >= window(now) { return .keep }
        let back = now - unit(now)
        return now != atScan && back != committed && back != atScan ? .setBack : .tooRecent
    }

    /// A time with a zero nanosecond part is taken to come from a file system without sub-second times
    /// (one time in a billion is misjudged, which only makes it wait or step more than needed).
    static func isFine(_ t: Int64) -> Bool { t % 1_000_000_000 != 0 }
    static func window(_ t: Int64) -> Int64 { isFine(t) ? 20_000_000 : 2_000_000_000 }
    static func unit(_ t: Int64) -> Int64 { isFine(t) ? 1 : 1_000_000_000 }
}

extension MaildirFolder {
    /// The current times of cur/ and new/, and the clock (ns); nil if either directory is missing.
    public func stamp() -> (stamp: DirectoryStamp, clock: Int64)? {
        guard let cur = directoryModificationTime(directory(.cur)), let new = directoryModificationTime(directory(.new)) else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return (DirectoryStamp(cur: cur, new: new), Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
    }

    /// The stamp a commit may record: `lastSeen` is the run's last look (after its own last change),
    /// `atScan` the times before it scanned, `committed` the stamp of the last commit. Sets back the times of directories the run itself changed
    /// last (see `DirectoryStamp`); nil when any directory's verdict forbids a stamp, or a set-back did
    /// not take (then the next run scans, which is always safe).
    public func settledStamp(lastSeen: DirectoryStamp, atScan: DirectoryStamp, committed: DirectoryStamp?) -> DirectoryStamp? {
        guard let (now, clock) = stamp() else { return nil }
        var result = now
        for subdir in MaildirSubdir.allCases {
            switch DirectoryStamp.verdict(
                now: now[subdir], lastSeen: lastSeen[subdir],
                committed: committed?[subdir], atScan: atScan[subdir], clock: clock)
            {
            case .foreign, .tooRecent:
                return nil
            case .keep:
                continue
            case .setBack:
                let earlier = now[subdir] - DirectoryStamp.unit(now[subdir])
                guard setModificationTime(directory(subdir), earlier), directoryModificationTime(directory(subdir)) == earlier else {
                    return nil
                }
                result[subdir] = earlier
            }
        }
        return result
    }
}

/// A directory's mtime in ns (not following a final symlink unless `followingLinks`), nil if it is gone or
/// not a directory.
public func directoryModificationTime(_ path: String, followingLinks: Bool = false) -> Int64? {
    var st = stat()
    guard (followingLinks ? stat(path, &st) : lstat(path, &st)) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return nil }
    return Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
}

/// Sets a directory's mtime (ns), leaving its atime alone.
private func setModificationTime(_ path: String, _ time: Int64) -> Bool {
    let omit = timespec(tv_sec: 0, tv_nsec: 1_073_741_822)  // UTIME_OMIT, a macro Swift does not import
    let times = [omit, timespec(tv_sec: Int(time / 1_000_000_000), tv_nsec: Int(time % 1_000_000_000))]
    return utimensat(AT_FDCWD, path, times, 0) == 0
}
