import MoCore

/// The loaded, validated configuration. Paths are absolute; defaults are filled in.
public struct Config: Sendable, Equatable {
    /// The file it was loaded from, as given (used in messages).
    public var path: String
    /// `general.state-dir`: per-account sync state lives here.
    public var stateDirectory: String
    /// `general.index-dir`: the Xapian database.
    public var indexDirectory: String
    /// `general.queue-lifetime` in seconds: how long mail that cannot be sent stays queued.
    public var queueLifetime: Int
    /// The `[account.NAME]` tables in file order; never empty.
    public var accounts: [Account]
    /// `[keywords]`: keyword → tag names over the defaults (Maildir.TagVocabulary), in file order.
    public var keywords: [KeywordTag]
    /// `[[tag-rule]]`s in file order: tag changes for new mail (`mo-index update`).
    public var tagRules: [TagRule]

    /// `general.send-delay` in seconds (default 0): every message waits this long before it is sent, the
    /// window in which `mo-sendmail --cancel last` takes it back.
    public var sendDelay = 0
    /// `general.snooze-folder` (default `Snoozed`): the mailbox `mo-index snooze` moves messages to.
    public var snoozeFolder = Config.defaultSnoozeFolder
    public static let defaultSnoozeFolder = "Snoozed"

    /// Postfix's `maximal_queue_lifetime` default.
    public static let defaultQueueLifetime = 5 * 86_400

    public init(
        path: String, stateDirectory: String, indexDirectory: String,
        queueLifetime: Int = Config.defaultQueueLifetime, accounts: [Account],
        keywords: [KeywordTag] = [], tagRules: [TagRule] = []
    ) {
        self.path = path
        self.stateDirectory = stateDirectory
        self.indexDirectory = indexDirectory
        self.queueLifetime = queueLifetime
        self.accounts = accounts
        self.keywords = keywords
        self.tagRules = tagRules
    }

    /// The account called `name` (exact match).
    public func account(named name: String) -> Account? {
        accounts.first { $0.name == name }
    }

    /// The account whose `address` or one of whose `aliases` is `address`, ignoring case.
    /// `address` may be a bare address or a mailbox such as `Me <me@example.com>`.
    public func account(forAddress address: String) -> Account? {
        accounts.first { $0.owns(address: address) }
    }
}
