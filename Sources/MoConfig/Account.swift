import MoCore

/// One `[account.NAME]` table.
///
/// A synced account has `maildir` and one server to sync it with, `[imap]` or `[jmap]`; a send-only account
/// (msmtp-style, for mo-sendmail) has neither, only `[smtp]`. Commands that need the synced side get it from `Config.syncPair(of:)`,
/// which names the account and what is missing when there is none.
public struct Account: Sendable, Equatable {
    /// The table name; only `[A-Za-z0-9_-]`, so it can name state files.
    public var name: String
    public var address: String
    /// More From addresses that select this account.
    public var aliases: [String]
    /// Absolute path of this account's Maildir root; nil for a send-only account.
    public var maildir: String?
    public var layout: MaildirLayout
    /// Which IMAP folders to sync (`folders`, default `["*"]`).
    public var folders: FolderFilter
    /// Nil for a send-only account and a JMAP account.
    public var imap: IMAPConfig?
    /// `[account.NAME.jmap]`: a JMAP account (docs/jmap.md); nil for the others.
    public var jmap: JMAPConfig?
    /// Absent when the account has no `[account.NAME.smtp]` table.
    public var smtp: SMTPConfig?
    /// `[account.NAME.oauth2]`, for `auth = "oauth2"`.
    public var oauth2: OAuth2Config?
    public var sync: SyncConfig
    /// The line of the account's table in the config file, for messages; nil when not read from a file.
    public var line: Int?

    public init(
        name: String, address: String, aliases: [String] = [], maildir: String?,
        layout: MaildirLayout = .verbatim, folders: FolderFilter = FolderFilter(patterns: ["*"]),
        imap: IMAPConfig?, smtp: SMTPConfig? = nil, oauth2: OAuth2Config? = nil, sync: SyncConfig = SyncConfig(),
        line: Int? = nil, jmap: JMAPConfig? = nil
    ) {
        self.jmap = jmap
        self.name = name
        self.address = address
        self.aliases = aliases
        self.maildir = maildir
        self.layout = layout
        self.folders = folders
        self.imap = imap
        self.smtp = smtp
        self.oauth2 = oauth2
        self.sync = sync
        self.line = line
    }

    /// The Maildir root and the server mo-sync keeps equal.
    public struct SyncPair: Sendable, Equatable {
        public enum Server: Sendable, Equatable {
            case imap(IMAPConfig)
            case jmap(JMAPConfig)
        }
        public var maildir: String
        public var server: Server

        public init(maildir: String, server: Server) {
            self.maildir = maildir
            self.server = server
        }

        /// The IMAP server; nil for a JMAP account.
        public var imap: IMAPConfig? { if case .imap(let c) = server { c } else { nil } }
        /// The JMAP server; nil for an IMAP account.
        public var jmap: JMAPConfig? { if case .jmap(let c) = server { c } else { nil } }
    }

    /// Both halves, or nil for a send-only account (the loader allows only both or neither).
    public var syncPair: SyncPair? {
        guard let maildir else { return nil }
        if let imap { return SyncPair(maildir: maildir, server: .imap(imap)) }
        if let jmap { return SyncPair(maildir: maildir, server: .jmap(jmap)) }
        return nil
    }

    /// Whether mo-sendmail stores a copy of sent mail by an IMAP APPEND: `save-sent` (default true), and an IMAP
    /// server to store it on. (An account that sends through its JMAP server gets its Sent copy from the
    /// server: `JMAPConfig.saveSent`.)
    public var savesSent: Bool { imap != nil && smtp?.saveSent == true }

    /// Whether mo-sendmail sends through the account's JMAP server (`EmailSubmission`): a JMAP account
    /// without an `[smtp]` table. An `[smtp]` table, when given, is used instead.
    public var sendsByJMAP: Bool { jmap != nil && smtp == nil }

    /// Whether a Sent copy of what mo-sendmail sends is kept: appended over IMAP (`savesSent`), or the
    /// submitted Email itself on a JMAP server (`save-sent` of `[jmap]`).
    public var keepsSent: Bool { savesSent || (sendsByJMAP && jmap?.saveSent == true) }

    /// Whether `address` (bare, or `Name <addr>`) is this account's address or an alias, ignoring case.
    public func owns(address: String) -> Bool {
        let wanted = Account.bareAddress(address).lowercased()
        return ([self.address] + aliases).contains { $0.lowercased() == wanted }
    }

    /// `Name <a@b>` → `a@b`; anything else trimmed of spaces.
    static func bareAddress(_ s: String) -> String {
        if let open = s.lastIndex(of: "<"), let close = s[open...].firstIndex(of: ">") {
            return String(s[s.index(after: open)..<close]).trimmingSpaces()
        }
        return s.trimmingSpaces()
    }
}

extension String {
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
