import Maildir

/// One step of a folder sync. The planner decides them; the executor journals each before performing it.
public enum SyncAction: Sendable, Hashable, CustomStringConvertible {
    /// Download server message `uid` into the Maildir with `flags`.
    case fetch(uid: UInt32, flags: MaildirFlags)
    /// Upload local message `unique` to the server with `flags`.
    case append(unique: String, flags: MaildirFlags)
    /// A new message on each side is the same message: remember the pair, transfer nothing.
    /// `localFlags`: the file's target; `remoteFlags`: the server's syncable flags, the pair's base until a
    /// `setRemoteFlags` planned after it (when the two differ) brings the server to the file's.
    case adopt(uid: UInt32, unique: String, localFlags: MaildirFlags, remoteFlags: MaildirFlags)
    /// Rename local `unique` to carry `flags` (a flag change that came from the server).
    case setLocalFlags(unique: String, flags: MaildirFlags)
    /// Store flags on the server (a change that came from the Maildir).
    case setRemoteFlags(uid: UInt32, add: MaildirFlags, remove: MaildirFlags)
    /// Remove the local file (deleted on the server, or expunged as `T`).
    case deleteLocal(unique: String)
    /// Mark `\Deleted` and expunge on the server (deleted locally, or expunged as `\Deleted`).
    case deleteRemote(uid: UInt32)
    /// Let the local copy of server message `uid` go: it left the window (`SyncWindow.expireLocal`). Not a
    /// deletion (the server keeps it, and the mass-deletion guard does not count it). The executor records
    /// the pair as outside (`flags` with `SyncRecord.outsideMark`), durably, before the file goes.
    case expireLocal(uid: UInt32, unique: String, flags: MaildirFlags)
    /// Replace the saved pair for `uid`/`unique` by `record`, or drop it when nil.
    case updateRecord(uid: UInt32, unique: String, record: SyncRecord?)

    public var description: String {
        switch self {
        case .fetch(let uid, let flags): "fetch UID \(uid) [\(flags)]"
        case .append(let unique, let flags): "append \(unique) [\(flags)]"
        case .adopt(let uid, let unique, let lf, _): "pair UID \(uid) with \(unique) [\(lf)]"
        case .setLocalFlags(let unique, let flags): "flags ↓ \(unique) [\(flags)]"
        case .setRemoteFlags(let uid, let add, let remove): "flags ↑ UID \(uid) +[\(add)] -[\(remove)]"
        case .deleteLocal(let unique): "delete local \(unique)"
        case .deleteRemote(let uid): "delete UID \(uid)"
        case .expireLocal(let uid, let unique, _): "let local \(unique) go (UID \(uid) outside the window)"
        case .updateRecord(let uid, let unique, let record):
            record.map { "record UID \($0.uid) ↔ \($0.unique) [\($0.flags)]" } ?? "forget UID \(uid) ↔ \(unique)"
        }
    }
}

/// The mass-deletion guard fired: `side` would lose `count` of its `total` messages.
public struct DeletionGuard: Sendable, Hashable, CustomStringConvertible {
    public enum Side: String, Sendable { case local, remote }
    public var side: Side
    public var count: Int
    public var total: Int
    public var description: String {
        "would delete \(count) of \(total) \(side == .local ? "local" : "server") messages; "
            + "nothing done in this folder (run with --force if that is intended)"
    }
}

/// The actions for one folder, or the guard that stopped it.
public struct FolderPlan: Sendable, Hashable {
    public var actions: [SyncAction]
    public var stoppedBy: DeletionGuard?

    public init(actions: [SyncAction], stoppedBy: DeletionGuard? = nil) {
        self.actions = actions
        self.stoppedBy = stoppedBy
    }

    /// Counts for the one-line summary.
    public var summary: (new: Int, deleted: Int, flagsDown: Int, flagsUp: Int, uploaded: Int) {
        var s = (new: 0, deleted: 0, flagsDown: 0, flagsUp: 0, uploaded: 0)
        for a in actions {
            switch a {
            case .fetch: s.new += 1
            case .append: s.uploaded += 1
            case .setLocalFlags: s.flagsDown += 1
            case .setRemoteFlags: s.flagsUp += 1
            case .deleteLocal, .deleteRemote: s.deleted += 1
            case .adopt, .updateRecord, .expireLocal: break
            }
        }
        return s
    }
}
