#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import IMAPCodec
import MailMessage
import Maildir
import MoCore
import SyncEngine
import SyncState

/// `PreparedFolder`'s directory stamps: the times of cur/ and new/ before the scan and after each of the
/// run's own changes, and the stamp a commit may write (`docs/sync-design.md`, "Cost").
extension PreparedFolder {
    /// The stamp a commit may write (`MaildirFolder.settledStamp`: the directories as this run left them,
    /// their times set back where the run's own change was the last): nil when another program changed
    /// them during the run (that change was not scanned, so the next run must scan), or when the run
    /// passed over a file (`DirectoryTimes.passedOver`).
    func commitStamp() -> LocalStamp? {
        guard !times.foreignChange, !times.passedOver, let lastSeen = times.lastSeen, let atScan = times.atScan else { return nil }
        return folder.settledStamp(lastSeen: lastSeen, atScan: atScan, committed: times.committed)
    }

    /// Notes the directories' times before the scan (or the trusted stamp that replaces a scan).
    func noteScanTimes(_ seen: LocalStamp?, committed: LocalStamp?) {
        times.lastSeen = seen
        times.atScan = seen
        times.committed = committed
    }

    /// Runs this run's own changes to cur/ or new/ and notes the times they leave: a look before and a look
    /// after, so a foreign change is noticed unless it falls between the look before and the last change
    /// of `body`. Never nested on one folder: the plan's renames and removals are one batch, one own change
    /// (`execute`: two looks, not two per file; the window is the batch's few milliseconds), whose body
    /// renames and removes without looks of its own (`renameLocally`, `removeForeignHeaders`).
    func ownChange<R>(_ body: () throws -> R) rethrows -> R {
        if times.lastSeen != nil, folder.stamp()?.stamp != times.lastSeen { times.foreignChange = true }
        defer { times.lastSeen = folder.stamp()?.stamp }
        return try body()
    }
}

/// What a run knows of its folder's cur/ and new/ times, and the two things it may learn that forbid a
/// stamp at the commit (`PreparedFolder.commitStamp`; `docs/sync-design.md`, "Cost").
struct DirectoryTimes {
    /// The directories' times as this run last saw them: taken before the scan (or equal to the stamp
    /// the partial path trusted), and again after each of its own changes. A different time before an
    /// own change, or at the commit, means another program (a mail client) changed the folder meanwhile.
    var lastSeen: LocalStamp?
    /// The times before the scan, and the stamp of the last commit (see `DirectoryStamp.verdict`).
    var atScan: LocalStamp?
    var committed: LocalStamp?
    /// Another program changed the folder during the run (seen at the look before an own change).
    var foreignChange = false
    /// The run passed over a file of cur/ or new/ (the scan could not take it, it is empty or a second
    /// file of a unique name, or it could not be read for upload). A stamp says every file is reflected in
    /// the state, so none is committed: the next run scans again, and finds the file once it can be read
    /// (chmod does not move a directory's time, so a stamp would hide it for good).
    var passedOver = false
}
