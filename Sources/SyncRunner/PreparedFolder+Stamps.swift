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
    /// passed over a file (`passedOver`).
    func commitStamp() -> LocalStamp? {
        guard !foreignChange, !passedOver, let lastSeen = expectedTimes, let atScan = scanTimes else { return nil }
        return folder.settledStamp(lastSeen: lastSeen, atScan: atScan, committed: committedStamp)
    }

    /// Notes the directories' times before the scan (or the trusted stamp that replaces a scan).
    func noteScanTimes(_ times: LocalStamp?, committed: LocalStamp?) {
        expectedTimes = times
        scanTimes = times
        committedStamp = committed
    }

    /// Runs this run's own changes to cur/ or new/ and notes the times they leave: a look before and a look
    /// after, so a foreign change is noticed unless it falls between the look before and the last change
    /// of `body`. Nested calls run inside the outer one's looks: the plan's renames and removals are one
    /// batch (two looks, not two per file; the window is the batch's few milliseconds).
    func ownChange<R>(_ body: () throws -> R) rethrows -> R {
        if inOwnChange { return try body() }
        if expectedTimes != nil, folder.stamp()?.stamp != expectedTimes { foreignChange = true }
        inOwnChange = true
        defer { inOwnChange = false; expectedTimes = folder.stamp()?.stamp }
        return try body()
    }
}
