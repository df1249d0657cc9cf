import Maildir

/// Which way a kind of change may travel. `pull` = server → Maildir, `push` = Maildir → server.
public struct SyncDirections: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let pull = SyncDirections(rawValue: 1)
    public static let push = SyncDirections(rawValue: 2)
    public static let both: SyncDirections = [.pull, .push]
    public static let none: SyncDirections = []
}

/// What a sync may do in one folder. Mirrors the account's `[sync]` table.
public struct SyncPolicy: Sendable, Hashable {
    public var new: SyncDirections = .both
    public var flags: SyncDirections = .both
    public var delete: SyncDirections = .both
    /// Where messages marked deleted (`T` / `\Deleted`) are removed for good.
    public var expungeLocal = true
    public var expungeRemote = true
    /// The mass-deletion guard: a side that would lose more than this share of its messages is not touched.
    public var maxDeletePercent = 20
    /// Deletions up to this many never trip the guard, so small folders can be tidied normally.
    public var deleteGuardFloor = 5
    /// Go on even where the guard would stop (`--force`).
    public var force = false

    public init() {}
}

/// The flags the sync carries between the sides: the six standard letters and the keyword letters
/// `a`–`z` (mapped to IMAP keywords per folder). Other uppercase letters are local-only: kept on rename,
/// never sent.
public let syncableFlags: MaildirFlags = {
    var f: MaildirFlags = [.draft, .flagged, .passed, .replied, .seen, .trashed]
    for b in UInt8(ascii: "a")...UInt8(ascii: "z") { f.insert(MaildirFlags(letter: b)!) }
    return f
}()

/// One pair remembered from the last run: server UID ↔ local unique name, and the flags both sides had.
///
/// `uid == 0` marks a local-only message the policy keeps off the server (a remote deletion that was not
/// pulled); `unique == ""` marks a server message the policy keeps out of the Maildir. Such tombstones stop
/// a message from being resurrected on the side that deleted it.
public struct SyncRecord: Sendable, Hashable {
    public var uid: UInt32
    public var unique: String
    public var flags: MaildirFlags

    public init(uid: UInt32, unique: String, flags: MaildirFlags) {
        self.uid = uid
        self.unique = unique
        self.flags = flags
    }
}

/// A message file present in the Maildir folder now.
public struct LocalMessage: Sendable, Hashable {
    public var unique: String
    public var flags: MaildirFlags
    public init(unique: String, flags: MaildirFlags) {
        self.unique = unique
        self.flags = flags
    }
}

/// A message present on the server now (flags already translated to Maildir letters).
public struct RemoteMessage: Sendable, Hashable {
    public var uid: UInt32
    public var flags: MaildirFlags
    public init(uid: UInt32, flags: MaildirFlags) {
        self.uid = uid
        self.flags = flags
    }
}

/// What identifies the same message on both sides when no saved pair says so: the normalised Message-ID
/// and the size in wire form (CRLF line ends). Used to adopt an existing Maildir, recover lost state and
/// survive a UIDVALIDITY change without transferring anything.
public struct MessageKey: Sendable, Hashable {
    public var messageID: String
    public var wireSize: Int
    public init(messageID: String, wireSize: Int) {
        self.messageID = messageID
        self.wireSize = wireSize
    }
}
