#if canImport(Glibc)
    import Glibc
#endif
import ClientSettings
import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import MoCore
import OAuth2
import Synchronization
import MoNet
import SyncEngine
import SyncState

/// How a run behaves, from the command line.
public struct SyncOptions: Sendable {
    public var dryRun = false
    public var force = false
    /// Called with progress and per-action lines (`--verbose`; a progress line on a terminal otherwise).
    public var verbose: @Sendable (String) -> Void = { _ in }
    /// Called with each action a `--dry-run` would perform, as `FOLDER: action`.
    public var planned: @Sendable (String) -> Void = { _ in }
    /// The `--debug` protocol trace.
    public var trace: IMAPTrace?
    /// Connections to the account the caller holds meanwhile (`--watch`'s listeners): they count against
    /// the account's `connections`, of which a run keeps at least one.
    public var connectionsHeld = 0
    public init() {}
}

/// Syncs every selected folder of one account over one IMAP connection.
public final class AccountSync {
    public let account: Account
    /// The account's Maildir root and IMAP server.
    public let pair: Account.SyncPair
    public let stateDirectory: String
    public let options: SyncOptions
    /// `general.snooze-folder`.
    let snoozeFolder: String
    /// The account's OAuth2 tokens, for `auth = "oauth2"`.
    let tokens: TokenBroker?
    /// Tags ↔ keywords with the config's `[keywords]` table (Gmail mode turns tags into labels).
    let vocabulary: TagVocabulary

    /// Throws the config error for a send-only account (nothing to sync).
    public init(account: Account, config: Config, options: SyncOptions) throws(ConfigError) {
        self.account = account
        self.pair = try config.syncPair(of: account)
        self.stateDirectory = config.stateDirectory + "/" + account.name
        self.options = options
        self.snoozeFolder = config.snoozeFolder
        self.tokens = AccountSettings.tokenBroker(for: account, stateDirectory: config.stateDirectory)
        self.vocabulary = TagVocabulary(extra: config.keywords.map { ($0.keyword, $0.tag) })
    }

    /// One run of the account, in named steps, each returning what the next one takes:
    ///
    /// 1. `listFolders`: LIST; the SPECIAL-USE roles recorded; the `folders` patterns applied; the names
    ///    mapped to local paths (`ListedFolders`).
    /// 2. `pairFolders`: each mailbox paired with its local folder; a folder synced before and deleted on
    ///    one side is deleted on the other (`FolderRemoval`), a local folder new here creates its mailbox
    ///    (`PairedFolders`: a `FolderSync` per pair, and the summaries of what was removed or left alone).
    /// 3. `prepareFolders`: each pair listed over the first connection (`FolderSync.prepare`), and over a
    ///    second alongside when the listing so far calls for it (`ListingPlan`); a folder
    ///    that stands alone is finished at once, in the same selection; more connections start opening in
    ///    the background as soon as the transfers call for them (`PreparedFolders`).
    /// 4. Moves between the other folders (`MoveDetector`), which needs every listing.
    /// 5. `finishFolders`: the folders with work, over one connection or a few (`ConnectionPlan`,
    ///    `ParallelFolders`), the one still selected first; then the idle ones.
    /// 6. `record`: the summaries in the folders' order; `unsynced-keywords` rewritten.
    ///
    /// Then snoozed messages whose time has come go back to INBOX (`wakeSnoozed`), judged from the snooze
    /// folder as this pass left it, not as this device last saw it (another may have woken, snoozed again
    /// or moved them since); when any did, a second pass carries the moves to the server at once.
    public func run() throws -> [FolderSummary] {
        let lock = try AccountLock(directory: stateDirectory, account: account.name)
        defer { withExtendedLifetime(lock) {} }
        try guardAgainstVanishedRoot()

        if let jmap = pair.jmap { return try runJMAP(jmap) }
        guard let imapConfig = pair.imap else { return [] }
        let settings = AccountSettings.imap(
            imapConfig, account: account.name, memo: SecretMemo(),
            tokens: tokens)
        // Replaced only after a folder's listing met a response the grammar refuses (`prepareFolders`).
        let started = monotonicSeconds()
        var imap = try IMAPConnection.openForSync(settings, trace: options.trace)
        defer { imap.logout() }
        let login = monotonicSeconds() - started

        let gmail = try gmailMode(imap)
        if gmail.on { return try runGmail(on: imap) }
        var summaries = try pass(&imap, settings: settings, login: login, note: gmail.note)
        if !options.dryRun, try wakeSnoozed() > 0 {
            let again = try pass(&imap, settings: settings, login: login, note: nil)
            for s in again {
                if let i = summaries.firstIndex(where: { $0.folder == s.folder }) { summaries[i].add(s) } else { summaries.append(s) }
            }
        }
        return summaries
    }

    /// Steps 1 to 6 over `imap`.
    private func pass(_ imap: inout IMAPConnection, settings: IMAPSettings, login: Double, note: String?) throws -> [FolderSummary] {
        var listed = try listFolders(on: imap)
        if let note { listed.notes.append(note) }
        let paired = try pairFolders(listed, on: imap)
        let allowance = DownloadAllowance.make(
            configured: account.sync.dailyDownload, gmail: imap.capabilities.contains("X-GM-EXT-1"), directory: stateDirectory)
        for sync in paired.folders { sync.allowance = allowance }
        let prepared = try prepareFolders(paired.folders, imap: &imap, settings: settings, login: login)
        if !options.dryRun && !prepared.pending.isEmpty {
            try MoveDetector(server: imap, folders: prepared.pending).run()
        }
        let finished = try finishFolders(prepared, on: imap)
        return record(paired, prepared, finished: prepared.finishedEarly.merging(finished) { early, _ in early })
    }

    /// Snoozed messages whose time has come back to INBOX, unread (`SnoozedFiles`); returns how many.
    func wakeSnoozed() throws -> Int {
        let root = pair.maildir
        let folder = try FolderNameMapper.folderPath(root: root, mailbox: snoozeFolder, layout: account.layout)
        guard MaildirFolder(path: folder).exists else { return 0 }
        let inbox = try FolderNameMapper.folderPath(root: root, mailbox: "INBOX", layout: account.layout)
        let woken = try SnoozedFiles.wakeDue(folder, inbox: inbox, now: WallClock.now())
        CrashPoint.step("snooze-woken")
        if woken > 0 { options.verbose("\(account.name): \(woken) snoozed message(s) back in INBOX") }
        return woken
    }

    func displayName(_ path: String) -> String { path.isEmpty ? "INBOX" : path }

    /// New connections a run may open after malformed responses before the next one ends it: a server that
    /// garbles every folder costs a few logins, not one per folder.
    static let maxReconnections = 3

    /// SPECIAL-USE roles (RFC 6154) as the server announced them (`MailboxRole`), in
    /// `<state>/<account>/roles` (`AccountFiles.writeRoles`), for scripts, the triage shorthands (archive,
    /// trash) and the action journal's Sent copies. Best effort: a failure to write it never fails a sync.
    func recordRoles(_ boxes: [ListResponse]) {
        let roles = MailboxRole.roles(in: boxes).map {
            ($0.role.rawValue, $0.mailbox.decoded ?? String(decoding: $0.mailbox.wire, as: UTF8.self))
        }
        AccountFiles.writeRoles(roles, in: stateDirectory)
    }

    /// Runs one step of a folder's sync. A failure confined to the folder (a refusal, a local file
    /// problem) becomes its summary and the run goes on; a dead connection ends the account's run.
    func attempt(_ listing: PreparedFolder, _ body: () throws -> Void) throws -> FolderSummary? {
        do {
            try body()
            return nil
        } catch let error as IMAPError {
            switch error.reason {
            case .network, .bye, .parse: throw error
            default: return listing.summary.failed(error)
            }
        } catch {
            guard let confined = FolderSummary.confined(error) else { throw error }
            return listing.summary.failed(confined)
        }
    }

    /// A Maildir root that disappeared after syncs must not read as "the user deleted everything".
    func guardAgainstVanishedRoot() throws {
        guard !MaildirRoot.exists(pair.maildir) else { return }
        if AccountFiles.recordsSyncs(stateDirectory) && !options.force {
            throw accountError(
                "the Maildir root \(pair.maildir) is missing although \(stateDirectory) records earlier syncs; "
                    + "refusing to delete the server's mail (mount or restore it, or run with --force)")
        }
        if !options.dryRun {
            do { try MaildirRoot.create(pair.maildir) } catch {
                throw accountError("cannot create \(pair.maildir): \(errnoDescription(error.code ?? EIO))")
            }
        }
    }

    /// A local failure that stops the whole account (not one folder).
    func accountError(_ problem: String) -> GenericError {
        GenericError(.localIO, "account \(account.name): \(problem)")
    }

    static func policy(_ c: SyncConfig, force: Bool) -> SyncPolicy {
        func dirs(_ d: SyncDirection) -> SyncDirections {
            switch d {
            case .both: .both;
            case .pull: .pull;
            case .push: .push;
            case .none: .none
            }
        }
        var p = SyncPolicy()
        p.new = dirs(c.new)
        p.flags = dirs(c.flags)
        p.delete = dirs(c.delete)
        p.expungeLocal = c.expunge == .both || c.expunge == .local
        p.expungeRemote = c.expunge == .both || c.expunge == .remote
        p.maxDeletePercent = c.maxDeletePercent
        p.force = force
        return p
    }
}
