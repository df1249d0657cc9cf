import Maildir

/// A folder's date window (`max-age`): which of the server's messages the Maildir holds. A message that
/// arrived (INTERNALDATE) before the window's first day is outside it, unless its flags keep it (flagged,
/// unread, as mbsync keeps them past `MaxMessages`). Outside is never deleted: not on the server, and not
/// locally unless `expireLocal` lets the local copy of a message that left the window go.
///
/// A server message outside the window that the Maildir does not hold has a record of its own, so no
/// run reads it as new or as deleted: a server-only record whose flags carry `SyncRecord.outsideMark`
/// (`9 - SW` in the state file). An earlier release reads it as a server-only tombstone, which also keeps
/// it on the server and out of the Maildir. The planner's rows are in `SyncPlanner`.
public struct SyncWindow: Sendable, Hashable {
    /// The server ids of the folder that arrived before the window's first day (only those the plan may
    /// ask about need be here).
    public var outside: Set<UInt32>
    public var keepFlagged: Bool
    public var keepUnread: Bool
    /// Lets the local copy of a message that left the window go (`expire-local`); the server keeps it.
    public var expireLocal: Bool

    public init(outside: Set<UInt32>, keepFlagged: Bool = true, keepUnread: Bool = true, expireLocal: Bool = false) {
        self.outside = outside
        self.keepFlagged = keepFlagged
        self.keepUnread = keepUnread
        self.expireLocal = expireLocal
    }

    /// No window (removed from the configuration): every message is inside, so the outside records fetch.
    public static let everything = SyncWindow(outside: [])

    /// Whether the Maildir holds the server message `uid` with (server) `flags`.
    public func admits(uid: UInt32, flags: MaildirFlags) -> Bool {
        !outside.contains(uid) || (keepFlagged && flags.contains(.flagged)) || (keepUnread && !flags.contains(.seen))
    }
}

extension SyncRecord {
    /// In a server-only record's flags: the message is outside the folder's window, not deleted. `W` is no
    /// letter the sync carries (`syncableFlags`), so it is never a flag of a side.
    public static let outsideMark = MaildirFlags(letter: UInt8(ascii: "W"))!

    /// The record of server message `uid`, outside the window, with its server `flags` (syncable letters).
    public static func outside(uid: UInt32, flags: MaildirFlags) -> SyncRecord {
        SyncRecord(uid: uid, unique: "", flags: flags.union(outsideMark))
    }

    /// Whether this is a window record (`outsideMark`): the server's message, outside the window. With a
    /// unique name it is a pair whose local copy is being let go (`SyncAction.expireLocal`).
    public var isOutside: Bool { uid != 0 && flags.contains(Self.outsideMark) }
}
