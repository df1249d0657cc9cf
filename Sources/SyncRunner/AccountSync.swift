#if canImport(Glibc)
import Glibc
#endif
import ClientSettings
import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import MoCore
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
    public init() {}
}

/// A failure that stops a whole account (not one folder).
public struct SyncError: MoError {
    public let account: String
    public let problem: String
    public let kind: ErrorKind
    public init(account: String, problem: String, kind: ErrorKind) {
        self.account = account
        self.problem = problem
        self.kind = kind
    }
    public var description: String { "account \(account): \(problem)" }
}

/// Syncs every selected folder of one account over one IMAP connection.
public final class AccountSync {
    public let account: Account
    /// The account's Maildir root and IMAP server.
    public let pair: Account.SyncPair
    public let stateDirectory: String
    public let options: SyncOptions

    /// Throws the config error for a send-only account (nothing to sync).
    public init(account: Account, config: Config, options: SyncOptions) throws(ConfigError) {
        self.account = account
        self.pair = try config.syncPair(of: account)
        self.stateDirectory = config.stateDirectory + "/" + account.name
        self.options = options
    }

    public func run() throws -> [FolderSummary] {
        let lock = try AccountLock(directory: stateDirectory, account: account.name)
        defer { withExtendedLifetime(lock) {} }
        try guardAgainstVanishedRoot()

        let memo = SecretMemo()
        let settings = AccountSettings.imap(pair.imap, account: account.name, memo: memo)
        let open = { [options] in try IMAPConnection.openForSync(settings, trace: options.trace) }
        // Replaced only after a folder's listing met a response the grammar refuses (see the listing loop).
        var imap = try open()
        defer { imap.logout() }

        let mapper = FolderNameMapper(layout: account.layout, pathBudget: FolderNameMapper.pathBudget(root: pair.maildir))
        var notes: [String] = []
        let listed = try imap.list()
        let selectable = listed.filter {
            !$0.attributes.contains(.noSelect) && !$0.attributes.contains(.nonExistent)
        }
        let delimiter: Character? = selectable.first(where: { $0.mailbox.isInbox })?.delimiter
            .map { Character(Unicode.Scalar($0)) } ?? selectable.first?.delimiter.map { Character(Unicode.Scalar($0)) }

        if !options.dryRun { recordRoles(selectable) }

        var included: [ListResponse] = []
        var skipped: [String] = []
        for box in selectable {
            let name = box.mailbox.decoded ?? String(decoding: box.mailbox.wire, as: UTF8.self)
            if account.folders.includes(name, delimiter: box.delimiter.map { Character(Unicode.Scalar($0)) }) {
                included.append(box)
            } else {
                skipped.append(name)
            }
        }
        if !skipped.isEmpty {
            // One line whatever the server lists (100,000 mailboxes): the first names, then a count.
            let shown = skipped.sorted().prefix(Self.namesInANote)
            notes.append("skipped by the folders patterns: " + shown.joined(separator: ", ")
                + (skipped.count > shown.count ? " and \(skipped.count - shown.count) more" : ""))
        }

        let mapped = mapper.mapAll(included.map {
            (name: String(decoding: $0.mailbox.wire, as: UTF8.self), delimiter: $0.delimiter.map { Character(Unicode.Scalar($0)) })
        })
        notes += mapped.warnings

        // Pairs (mailbox, local path), from the server's side first.
        var pairs: [(mailbox: MailboxName, path: String)] = []
        var pathsTaken = Set<String>()
        // A shortened folder name is read back through the mailbox the server lists for it, else the
        // one its state file records (see `FolderNameMapper.mailboxName`).
        let mailboxByPath = Dictionary(mapped.mapping.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        let fullName = { [stateDirectory] (path: String) -> String? in
            mailboxByPath[path] ?? (try? FolderStateStore(accountDirectory: stateDirectory,
                                                          key: FolderStateStore.key(forLocalPath: path)).loadHeader())?.mailbox
        }
        for box in included {
            let wire = String(decoding: box.mailbox.wire, as: UTF8.self)
            guard let path = mapped.mapping[wire] else { continue }
            pairs.append((box.mailbox, path))
            pathsTaken.insert(path)
        }

        var summaries: [FolderSummary] = []
        // Local folders the server lacks: new here (create there), or deleted there (delete here).
        let policy = Self.policy(account.sync, force: options.force)
        let create = account.sync.create
        if MaildirRoot.exists(pair.maildir) {
            let local = try MaildirScanner.listFolders(root: pair.maildir, layout: account.layout)
            notes += local.warnings
            for path in local.folders where !pathsTaken.contains(path) {
                let name: String
                do { name = try mapper.mailboxName(forLocalPath: path, delimiter: delimiter, fullName: fullName) } catch {
                    notes.append(error.description)
                    continue
                }
                let decoded = (try? ModifiedUTF7.decode(name)) ?? name
                guard account.folders.includes(decoded, delimiter: delimiter) else { continue }
                let store = FolderStateStore(accountDirectory: stateDirectory, key: FolderStateStore.key(forLocalPath: path))
                if store.exists {
                    // Synced before and now gone from the server: deleted there.
                    let outcome = try FolderRemoval(sync: self, imap: imap, policy: policy)
                        .serverDeleted(path: path, mailboxName: name, store: store)
                    summaries.append(outcome.summary)
                    if outcome.recreated { pairs.append((MailboxName(wire: Array(name.utf8)), path)) }
                    continue
                }
                guard create == .both || create == .remote else {
                    notes.append("\(displayName(path)): not on the server; create = \"\(create.rawValue)\" keeps it local")
                    continue
                }
                let mailbox = MailboxName(wire: Array(name.utf8))
                if !options.dryRun { try imap.create(mailbox) }
                notes.append("\(displayName(path)): created mailbox \(decoded) on the server")
                pairs.append((mailbox, path))
            }
        }

        if !notes.isEmpty {
            var general = FolderSummary(folder: "(account \(account.name))")
            general.notes = notes
            summaries.append(general)
        }
        var candidates: [FolderSync] = []
        for (mailbox, path) in pairs.sorted(by: { $0.path < $1.path }) {
            guard let absolute = FolderNameMapper.absolutePath(root: pair.maildir, relative: path) else { continue }
            let folder = MaildirFolder(path: absolute)
            let store = FolderStateStore(accountDirectory: stateDirectory, key: FolderStateStore.key(forLocalPath: path))
            if !folder.exists && store.exists {
                // Synced before and now gone from the Maildir: deleted here.
                let outcome = try FolderRemoval(sync: self, imap: imap, policy: policy)
                    .localDeleted(path: path, mailbox: mailbox, store: store)
                summaries.append(outcome.summary)
                if !outcome.recreated { continue }
            }
            if !folder.exists && !(create == .both || create == .local) && !store.exists {
                var s = FolderSummary(folder: displayName(path))
                s.stopped = "not in the Maildir; create = \"\(create.rawValue)\" keeps it on the server only"
                summaries.append(s)
                continue
            }
            let sync = FolderSync(mailbox: mailbox, folder: folder, store: store, policy: policy,
                                  dryRun: options.dryRun, displayName: displayName(path), verbose: options.verbose,
                                  planned: options.planned)
            candidates.append(sync)
        }

        // Listing is one cheap exchange per folder (with QRESYNC): done on this connection. A folder that can
        // take no part in a move between folders (`standsAlone`: flag changes only, or nothing) is finished at
        // once, in the same selection. Moves need every other listing; then folders with work are finished, over
        // more connections only when there are enough messages to transfer to repay their logins
        // (`ConnectionPlan`). Those are opened in the background as soon as the listings so far call for them
        // (a login costs about as much as listing several folders).
        var prepared: [FolderSync] = []
        var listings: [ObjectIdentifier: PreparedFolder] = [:]
        var pending: [PreparedFolder] = []
        var opener: ConnectionOpener?
        var work = ConnectionPlan.Work()
        let configured = options.dryRun ? 1 : account.sync.connections
        let finish = { (listing: PreparedFolder, imap: IMAPConnection) throws -> FolderSummary? in
            self.options.verbose("\(listing.summary.folder): syncing")
            var result: FolderSummary?
            if let failed = try self.attempt(listing.sync, { result = try listing.finish(on: imap) }) { return failed }
            return result
        }
        var results: [ObjectIdentifier: FolderSummary] = [:]
        var reconnections = 0
        for sync in candidates {
            options.verbose("\(sync.summary.folder): listing")
            var preparation = FolderPreparation.unchanged
            do {
                if let failed = try attempt(sync, { preparation = try sync.prepare(on: imap) }) { summaries.append(failed); continue }
            } catch let error as IMAPError where error.isParse && reconnections < Self.maxReconnections {
                // Malformed bytes in one folder's listing or bodies: that folder fails alone (its journal makes
                // the interruption safe), the closed connection is replaced, and the other folders go on.
                var s = sync.summary
                s.error = error.description
                s.errorKind = error.kind
                summaries.append(s)
                reconnections += 1
                imap = try open()
                continue
            }
            prepared.append(sync)
            guard case .listed(let listing) = preparation else {
                // Unchanged on both sides: nothing to finish.
                options.verbose("\(sync.summary.folder): syncing")
                results[ObjectIdentifier(sync)] = sync.summary
                continue
            }
            listings[ObjectIdentifier(sync)] = listing
            if listing.standsAlone {
                // Finished while its mailbox is still selected: a second SELECT of a folder changed lately
                // costs the server a re-read of it (see `PreparedFolder.prefetchNewBodies`).
                if let r = try finish(listing, imap) { results[ObjectIdentifier(sync)] = r }
                continue
            }
            pending.append(listing)
            work.add(transfers: listing.pendingTransfers)
            if opener == nil && ConnectionPlan.extra(configured: configured, work: work) > 0 {
                let trace = options.trace
                opener = ConnectionOpener(count: configured - 1) { try IMAPConnection.openForSync(settings, trace: trace) }
            }
        }
        if !options.dryRun && !pending.isEmpty {
            try MoveDetector(imap: imap, folders: pending).run()
        }
        let idle = pending.filter(\.looksIdle)
        let idleIDs = Set(idle.map(ObjectIdentifier.init))
        // The folder still selected goes first: its finish needs no second SELECT.
        let withWork = pending.filter { !idleIDs.contains(ObjectIdentifier($0)) }
        let busy = withWork.filter { $0.mailbox == imap.selectedMailbox } + withWork.filter { $0.mailbox != imap.selectedMailbox }
        var pool = [imap]
        let wanted = 1 + ConnectionPlan.extra(configured: configured, work: work)
        for c in opener?.take() ?? [] {
            if pool.count < wanted { pool.append(c) } else { c.logout() }
        }
        defer { for c in pool.dropFirst() { c.logout() } }
        for (listing, result) in zip(busy, try ParallelFolders(connections: pool).run(busy, finish)) {
            if let r = result ?? nil { results[ObjectIdentifier(listing.sync)] = r }
        }
        for listing in idle {
            if let r = try finish(listing, imap) { results[ObjectIdentifier(listing.sync)] = r }
        }
        summaries += prepared.compactMap { results[ObjectIdentifier($0)] }
        if !options.dryRun { recordUnsyncedKeywords(candidates, listed: listings, finished: results) }
        return summaries
    }

    func displayName(_ path: String) -> String { path.isEmpty ? "INBOX" : path }

    /// New connections a run may open after malformed responses before the next one ends it: a server that
    /// garbles every folder costs a few logins, not one per folder.
    static let maxReconnections = 3

    /// Most mailbox names one note lists.
    static let namesInANote = 10

    /// SPECIAL-USE roles (RFC 6154) as the server announced them, in `<state>/<account>/roles`: one line per
    /// role, `sent Sent`, for scripts and for the triage shorthands (archive, trash). Best effort: a
    /// failure to write it never fails a sync.
    func recordRoles(_ boxes: [ListResponse]) {
        let roles: [(MailboxAttribute, String)] = [(.sent, "sent"), (.drafts, "drafts"), (.trash, "trash"),
                                                   (.archive, "archive"), (.junk, "junk"), (.all, "all"), (.flagged, "flagged")]
        var lines = ""
        for (attribute, role) in roles {
            if let box = boxes.first(where: { $0.attributes.contains(attribute) }) {
                lines += "\(role) \(box.mailbox.decoded ?? String(decoding: box.mailbox.wire, as: UTF8.self))\n"
            }
        }
        AccountFiles.writeRoles(lines, in: stateDirectory)
    }

    /// Runs one step of a folder's sync. A failure confined to the folder (a refusal, a local file
    /// problem) becomes its summary and the run goes on; a dead connection ends the account's run.
    func attempt(_ sync: FolderSync, _ body: () throws -> Void) throws -> FolderSummary? {
        do {
            try body()
            return nil
        } catch let error as IMAPError {
            switch error.reason {
            case .network, .bye, .parse: throw error
            default: break
            }
            var s = sync.summary
            s.error = error.description
            s.errorKind = error.kind
            return s
        } catch let error as MoError where error.kind == .localIO || error.kind == .data || error.kind == .busy {
            var s = sync.summary
            s.error = error.description
            s.errorKind = error.kind
            return s
        }
    }

    /// A Maildir root that disappeared after syncs must not read as "the user deleted everything".
    func guardAgainstVanishedRoot() throws {
        guard !MaildirRoot.exists(pair.maildir) else { return }
        if AccountFiles.recordsSyncs(stateDirectory) && !options.force {
            throw SyncError(account: account.name,
                            problem: "the Maildir root \(pair.maildir) is missing although \(stateDirectory) records earlier syncs; "
                                + "refusing to delete the server's mail (mount or restore it, or run with --force)",
                            kind: .localIO)
        }
        if !options.dryRun {
            do { try MaildirRoot.create(pair.maildir) } catch {
                throw SyncError(account: account.name, problem: "cannot create \(pair.maildir): \(errnoDescription(error.code ?? EIO))",
                                kind: .localIO)
            }
        }
    }

    static func policy(_ c: SyncConfig, force: Bool) -> SyncPolicy {
        func dirs(_ d: SyncDirection) -> SyncDirections {
            switch d { case .both: .both; case .pull: .pull; case .push: .push; case .none: .none }
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

/// Opens connections on a thread of its own; `take()` waits for it and returns those that opened (a
/// failure only means fewer connections: the run is slower, not wrong).
///
/// Invariant: the thread holds only `opened` and the `open` closure, never the opener, so the opener's
/// deinit (a run that threw before taking them) runs on the run's thread and joins the opener thread
/// before the process can exit: exit() tears down OpenSSL, which a handshake still running would crash on.
final class ConnectionOpener: @unchecked Sendable {
    private let opened = OpenedConnections()
    private let thread: ThreadHandle
    private var joined = false

    init(count: Int, open: @escaping @Sendable () throws -> IMAPConnection) {
        let opened = self.opened
        thread = startThread {
            for _ in 0..<count {
                guard let c = try? open() else { break }
                opened.add(c)
            }
        }
    }

    /// Joins the thread and hands over the connections (later calls return none).
    func take() -> [IMAPConnection] {
        if !joined { thread.join(); joined = true }
        return opened.takeAll()
    }

    deinit { for c in take() { c.logout() } }
}

/// Written by the opener thread, read after it is joined; the lock only makes that order explicit.
private final class OpenedConnections: @unchecked Sendable {
    private var list: [IMAPConnection] = []
    private var lock = pthread_mutex_t()
    init() { pthread_mutex_init(&lock, nil) }
    deinit { pthread_mutex_destroy(&lock) }
    func add(_ c: IMAPConnection) { pthread_mutex_lock(&lock); list.append(c); pthread_mutex_unlock(&lock) }
    func takeAll() -> [IMAPConnection] {
        pthread_mutex_lock(&lock)
        defer { list = []; pthread_mutex_unlock(&lock) }
        return list
    }
}
