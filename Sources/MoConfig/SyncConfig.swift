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

/// A mailbox of Gmail's outside All Mail that Gmail mode can sync as a folder (`gmail-folders`), named as
/// the folder is.
public enum GmailFolder: String, Sendable, Equatable, CaseIterable {
    case trash = "Trash"
    case spam = "Spam"
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
    /// Gmail's own mailboxes Gmail mode also syncs, each a folder of its own (`gmail-folders`): none, or
    /// Trash and Spam.
    public var gmailFolders: [GmailFolder] = []
    /// Labels Gmail mode also shows as folders of their own, `Labels/<label>`, of links to the messages'
    /// files (`gmail-label-folders`).
    public var gmailLabelFolders: [String] = []

    public init() {}
}
