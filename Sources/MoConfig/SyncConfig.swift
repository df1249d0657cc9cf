/// Which way a kind of change propagates between server and Maildir.
public enum SyncDirection: String, Sendable, Equatable, CaseIterable {
    /// Both ways.
    case both
    /// Server to Maildir only.
    case pull
    /// Maildir to server only.
    case push
    case none
}

/// On which side an action (creating folders, expunging) may happen.
public enum SyncSide: String, Sendable, Equatable, CaseIterable {
    case both, local, remote, none
}

/// Whether a Gmail account is synced as Gmail (docs/gmail.md): All Mail once, labels as tags.
public enum GmailMode: String, Sendable, Equatable, CaseIterable {
    /// On where the server announces X-GM-EXT-1, unless the account was synced folder by folder before.
    case auto
    case on, off
}

/// What a local deletion does in Gmail mode (`gmail-delete`).
public enum GmailDeletion: String, Sendable, Equatable, CaseIterable {
    /// The message goes to Gmail's Trash (as the web interface's delete).
    case trash
    /// Only the folder's label goes (INBOX: archived); in Archive, to Trash.
    case archive
}

/// What a local deletion does on a JMAP account (`jmap-delete`).
public enum JMAPDeletion: String, Sendable, Equatable, CaseIterable {
    /// The Email goes to the mailbox of role `trash` (deleted in Trash: destroyed).
    case trash
    /// The Email is destroyed at once (`Email/set` destroy).
    case destroy
}

/// A mailbox of Gmail's outside All Mail that Gmail mode can sync as a folder (`gmail-folders`), named as
/// the folder is.
public enum GmailFolder: String, Sendable, Equatable, CaseIterable {
    case trash = "Trash"
    case spam = "Spam"
}

/// A folder's date window (`max-age`): only messages that arrived in the last so many days, or since a
/// date, are downloaded (docs/sync-design.md, "Date windows").
public enum MaxAge: Sendable, Equatable, CustomStringConvertible {
    /// The last `n` days: `"365d"`, or weeks `"12w"`, or years of 365 days `"2y"`.
    case days(Int)
    /// Since a day: `"2024-01-01"`.
    case since(year: Int, month: Int, day: Int)

    /// `"365d"`, `"12w"`, `"2y"`, `"2024-01-01"`; nil for anything else (a day that does not exist too).
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]), (1...12).contains(m), y >= 1970
        {
            let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
            let length = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
            guard (1...length).contains(d) else { return nil }
            self = .since(year: y, month: m, day: d)
            return
        }
        guard let unit = text.last, let n = Int(text.dropLast()), n > 0, n <= 100_000 else { return nil }
        switch unit {
        case "d": self = .days(n)
        case "w": self = .days(n * 7)
        case "y": self = .days(n * 365)
        default: return nil
        }
    }

    /// `2024-01-05`: the form `max-age` takes a day in, and the state directory records a window's first day in.
    public static func day(year: Int, month: Int, day: Int) -> String {
        func pad(_ n: Int, _ width: Int) -> String { String(repeating: "0", count: max(0, width - String(n).count)) + String(n) }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))"
    }

    public var description: String {
        switch self {
        case .days(let n): "\(n)d"
        case .since(let y, let m, let d): Self.day(year: y, month: m, day: d)
        }
    }
}

/// `[account.NAME.sync]`; `init()` gives the documented defaults.
public struct SyncConfig: Sendable, Equatable {
    public var new: SyncDirection = .both
    public var flags: SyncDirection = .both
    public var delete: SyncDirection = .both
    public var create: SyncSide = .both
    public var expunge: SyncSide = .both
    /// Refuse a run that would delete more than this share (0...100) of a folder's messages.
    public var maxDeletePercent: Int = 20
    /// Parallel IMAP connections, 1...16.
    public var connections: Int = 2
    /// Map IMAP keywords to Maildir lowercase flag letters.
    public var keywords: Bool = true
    /// Folders `mo-sync --watch` IDLEs on (besides INBOX) when the server lacks NOTIFY.
    public var watch: [String] = ["INBOX"]
    /// Seconds between syncs of the folders `--watch` cannot IDLE on (no NOTIFY), 10...86400.
    public var pollInterval: Int = 300
    /// The most bytes of message bodies a rolling 24 hours may download (`daily-download`); 0: no bound.
    /// Unset: no bound, except on Gmail (X-GM-EXT-1), whose IMAP allowance is 2,500 MB a day.
    public var dailyDownload: Int?
    /// Gmail mode (`gmail-mode`).
    public var gmailMode: GmailMode = .auto
    /// Gmail mode's deletion (`gmail-delete`).
    public var gmailDelete: GmailDeletion = .trash
    /// A JMAP account's deletion (`jmap-delete`).
    public var jmapDelete: JMAPDeletion = .trash
    /// Gmail's own mailboxes Gmail mode also syncs, each a folder of its own (`gmail-folders`): none, or
    /// Trash and Spam.
    public var gmailFolders: [GmailFolder] = []
    /// Labels Gmail mode also shows as folders of their own, `Labels/<label>`, of links to the messages'
    /// files (`gmail-label-folders`).
    public var gmailLabelFolders: [String] = []
    /// A JMAP account's mailboxes (as tags: paths along `parentId`) also shown as folders of their own,
    /// `Mailboxes/<path>`, of links to the messages' files (`jmap-mailbox-folders`).
    public var jmapMailboxFolders: [String] = []
    /// The account's date window (`max-age`); nil: every message.
    public var maxAge: MaxAge?
    /// Windows of single folders (`[…sync.max-age-folders]`, by the folder's name, as the summary line
    /// names it), over `maxAge`; a nil value: that folder has none.
    public var maxAgeFolders: [String: MaxAge?] = [:]
    /// Messages a window keeps whatever their age (`max-age-keeps`): flagged, unread.
    public var maxAgeKeepsFlagged = true
    public var maxAgeKeepsUnread = true
    /// Lets the local copy of a message that leaves the window go (`expire-local`); the server keeps it.
    public var expireLocal = false
    /// Messages larger than this many wire bytes arrive as placeholders (`max-size`); nil: none.
    public var maxSize: Int?

    /// The window of the folder named `folder` ("INBOX", or its path under the Maildir root).
    public func maxAge(forFolder folder: String) -> MaxAge? {
        if let own = maxAgeFolders[folder] { return own }
        return maxAge
    }

    public init() {}
}
