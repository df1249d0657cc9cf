#if canImport(Glibc)
    import Glibc
#endif
import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import MoCore
import SyncEngine
import SyncState

/// `AccountSync`'s first steps: the server's mailboxes listed and mapped to local paths, then paired with
/// the local folders (a folder deleted on one side removed on the other, a new local one created there).
extension AccountSync {
    /// The server's selectable mailboxes this account syncs, with their local paths.
    struct ListedFolders {
        var included: [ListResponse]
        /// Mailbox (wire bytes as a string) → path relative to the Maildir root; a mailbox whose name
        /// cannot be mapped is missing (with a warning in `notes`).
        var mapping: [String: String]
        var mapper: FolderNameMapper
        /// INBOX's hierarchy delimiter (else the first mailbox's), for local names that become mailboxes.
        var delimiter: Character?
        var notes: [String]
    }

    func listFolders(on imap: IMAPConnection) throws -> ListedFolders {
        let mapper = FolderNameMapper(layout: account.layout, pathBudget: FolderNameMapper.pathBudget(root: pair.maildir))
        var notes: [String] = []
        let listed = try imap.list()
        let selectable = listed.filter(\.isSelectable)
        let delimiter: Character? =
            selectable.first(where: { $0.mailbox.isInbox })?.delimiter
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
            notes.append("skipped by the folders patterns: " + boundedList(skipped))
        }

        let mapped = mapper.mapAll(
            included.map {
                (name: String(decoding: $0.mailbox.wire, as: UTF8.self), delimiter: $0.delimiter.map { Character(Unicode.Scalar($0)) })
            })
        notes += mapped.warnings
        return ListedFolders(included: included, mapping: mapped.mapping, mapper: mapper, delimiter: delimiter, notes: notes)
    }

    /// The pairs to sync, and the summaries of the folders removed or left alone on the way (in the order
    /// they are reported: deletions on the server, the account's notes, then local deletions and folders
    /// kept on the server only).
    struct PairedFolders {
        var folders: [FolderSync]
        var summaries: [FolderSummary]
    }

    func pairFolders(_ listed: ListedFolders, on imap: IMAPConnection) throws -> PairedFolders {
        var notes = listed.notes
        // Pairs (mailbox, local path), from the server's side first.
        // `onServer` false: a mailbox a dry run would create, planned as a new one (nothing to select).
        var pairs: [(mailbox: MailboxName, path: String, onServer: Bool)] = []
        var pathsTaken = Set<String>()
        // A shortened folder name is read back through the mailbox the server lists for it, else the
        // one its state file records (see `FolderNameMapper.mailboxName`).
        let mailboxByPath = Dictionary(listed.mapping.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        let fullName = { [stateDirectory] (path: String) -> String? in
            mailboxByPath[path]
                ?? (try? FolderStateStore(
                    accountDirectory: stateDirectory,
                    key: FolderStateStore.key(forLocalPath: path)
                ).loadHeader())?.mailbox
        }
        for box in listed.included {
            let wire = String(decoding: box.mailbox.wire, as: UTF8.self)
            guard let path = listed.mapping[wire] else { continue }
            pairs.append((box.mailbox, path, true))
            pathsTaken.insert(path)
        }

        var summaries: [FolderSummary] = []
        // Local folders the server lacks: new here (create there), or deleted there (delete here).
        let policy = Self.policy(account.sync, force: options.force)
        let create = account.sync.create
        let delimiter = listed.delimiter
        if MaildirRoot.exists(pair.maildir) {
            let local = try MaildirScanner.listFolders(root: pair.maildir, layout: account.layout)
            notes += local.warnings
            for path in local.folders where !pathsTaken.contains(path) {
                let name: String
                do { name = try listed.mapper.mailboxName(forLocalPath: path, delimiter: delimiter, fullName: fullName) } catch {
                    notes.append(error.description)
                    continue
                }
                let decoded = (try? ModifiedUTF7.decode(name)) ?? name
                guard account.folders.includes(decoded, delimiter: delimiter) else { continue }
                let store = FolderStateStore(accountDirectory: stateDirectory, key: FolderStateStore.key(forLocalPath: path))
                if store.exists {
                    // Synced before and now gone from the server: deleted there.
                    let outcome = try removeFolder(path, on: imap, policy: policy, into: &summaries) {
                        try $0.serverDeleted(path: path, mailboxName: name, store: store)
                    }
                    if outcome?.recreated == true { pairs.append((MailboxName(wire: Array(name.utf8)), path, true)) }
                    continue
                }
                guard create == .both || create == .remote else {
                    notes.append("\(displayName(path)): not on the server; create = \"\(create.rawValue)\" keeps it local")
                    continue
                }
                let mailbox = MailboxName(wire: Array(name.utf8))
                if options.dryRun {
                    notes.append("\(displayName(path)): would create mailbox \(decoded) on the server")
                } else {
                    try imap.createFolder(mailbox)
                    notes.append("\(displayName(path)): created mailbox \(decoded) on the server")
                }
                pairs.append((mailbox, path, !options.dryRun))
            }
        }

        if !notes.isEmpty {
            var general = FolderSummary(folder: "(account \(account.name))")
            general.notes = notes
            summaries.append(general)
        }
        var folders: [FolderSync] = []
        let wholeLoads = WholeLoads()
        for (mailbox, path, onServer) in pairs.sorted(by: { $0.path < $1.path }) {
            guard let absolute = FolderNameMapper.absolutePath(root: pair.maildir, relative: path) else { continue }
            let folder = MaildirFolder(path: absolute)
            let store = FolderStateStore(accountDirectory: stateDirectory, key: FolderStateStore.key(forLocalPath: path))
            if let damage = folder.damage {
                // Not a deletion (nothing of the server's is touched) and not creatable: this folder fails alone.
                summaries.append(FolderSummary(folder: displayName(path)).failed(GenericError(.data, damage)))
                continue
            }
            if !folder.exists && store.exists {
                // Synced before and now gone from the Maildir: deleted here.
                let outcome = try removeFolder(path, on: imap, policy: policy, into: &summaries) {
                    try $0.localDeleted(path: path, mailbox: mailbox, store: store)
                }
                if outcome?.recreated != true { continue }
            }
            if !folder.exists && !(create == .both || create == .local) && !store.exists {
                var s = FolderSummary(folder: displayName(path))
                s.stopped = "not in the Maildir; create = \"\(create.rawValue)\" keeps it on the server only"
                summaries.append(s)
                continue
            }
            folders.append(
                FolderSync(
                    mailbox: mailbox, onServer: onServer, folder: folder, store: store, policy: policy,
                    dryRun: options.dryRun, displayName: displayName(path), verbose: options.verbose,
                    planned: options.planned, wholeLoads: wholeLoads))
        }
        setWindows(folders)
        let leftOnServer = AccountFiles.unsyncedKeywords(in: stateDirectory).filter { $0.reason == UnsyncedKeyword.folderFull }
        for sync in folders where leftOnServer.contains(where: { $0.mailbox == sync.recordedName }) { sync.listKeywordsWhole = true }
        return PairedFolders(folders: folders, summaries: summaries)
    }

    /// Each folder's date window (`max-age`, by its name as the summary names it), or the one its last run
    /// applied (`FolderWindow`); and `max-size`.
    func setWindows(_ folders: [FolderSync]) {
        let now = Int64(time(nil))
        for sync in folders {
            sync.maxSize = account.sync.maxSize
            let age = account.sync.maxAge(forFolder: sync.displayName), last = sync.store.windowLine()
            guard age != nil || last != nil else { continue }
            sync.window = FolderWindow(age, config: account.sync, last: last, now: now)
        }
    }

    /// A folder deleted on one side, settled by `remove`; its summary joins `summaries`. An error that
    /// fails this folder alone (a damaged state file) becomes its summary instead, and the result is nil.
    private func removeFolder(
        _ path: String, on imap: IMAPConnection, policy: SyncPolicy, into summaries: inout [FolderSummary],
        _ remove: (FolderRemoval) throws -> FolderRemoval.Outcome
    ) throws -> FolderRemoval.Outcome? {
        do {
            let outcome = try remove(FolderRemoval(sync: self, server: imap, policy: policy))
            summaries.append(outcome.summary)
            return outcome
        } catch {
            guard let confined = FolderSummary.confined(error) else { throw error }
            summaries.append(FolderSummary(folder: displayName(path)).failed(confined))
            return nil
        }
    }
}
