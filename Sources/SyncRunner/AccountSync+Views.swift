import IMAPClient
import IMAPCodec
import Maildir
import MoCore
import SyncEngine
import SyncState

extension Placement.Folder {
    /// The view a folder's mailbox name stands for (Gmail mode, JMAP): `INBOX` in any case, `Sent`,
    /// `Drafts`, `Archive`, `Trash`, `Junk` exactly.
    static func view(named mailbox: MailboxName) -> Placement.Folder? {
        if mailbox.isInbox { return .inbox }
        return Placement.Folder(rawValue: String(decoding: mailbox.wire, as: UTF8.self))
    }
}

/// The steps Gmail mode and a JMAP account share: their folders are views of one list of messages, so they
/// are synced together, from one look, or not at all.
extension AccountSync {
    /// The label folders asked for (`names`: Gmail labels or JMAP mailboxes, as tags), `PREFIX<name>`, over
    /// the synced folders' files; nil when none is asked for.
    func labelFolders(_ names: [String], under prefix: String, sources: [FolderSync]) -> LabelFolders? {
        guard !names.isEmpty else { return nil }
        let mapper = FolderNameMapper(layout: account.layout, pathBudget: FolderNameMapper.pathBudget(root: pair.maildir))
        let mapped = mapper.mapAll(names.map { (name: prefix + $0, delimiter: Character("/")) }).mapping
        let labels = names.compactMap { name -> LabelFolders.Label? in
            guard let path = mapped[prefix + name], let absolute = FolderNameMapper.absolutePath(root: pair.maildir, relative: path)
            else { return nil }
            return LabelFolders.Label(tag: name, path: absolute, display: displayName(path))
        }
        return LabelFolders(labels: labels, sources: sources.map(\.folder), vocabulary: vocabulary)
    }

    /// The views' run, in named steps: a view's folder removed by hand stops the run (it is not a deletion
    /// of the view's messages); `begin` takes the look, given each view's committed mark; each view
    /// prepared; moves between views (`MoveDetector`: a label or mailbox change keeps the id); each view
    /// finished. Returns nil when a view failed before any was finished (the run is then `heldBack`).
    func syncViews(
        _ folders: [FolderSync], on store: any ServerStore, kind: String, begin: ([ListingMark?]) throws -> Void
    ) throws -> (prepared: PreparedFolders, finished: [ObjectIdentifier: FolderSummary], heldBack: Bool) {
        var prepared = PreparedFolders()
        for sync in folders where !sync.folder.exists && sync.store.exists {
            prepared.failed.append(
                FolderSummary(folder: sync.displayName).failed(
                    GenericError(
                        .data,
                        "\(sync.folder.path) is missing although it was synced; \(kind) does not delete its messages for that "
                            + "(restore it, or remove its state, \(sync.store.statePath.dropLast(".state".count)).*, to download them again)"
                    )))
        }
        if !prepared.failed.isEmpty { return (prepared, [:], true) }
        try begin(
            folders.map { sync in
                (try? sync.store.loadCommittedHeader()).flatMap { h in
                    ModSequence(h.highestModSeq).map { ListingMark(uidValidity: h.uidValidity, modSeq: $0) }
                }
            })
        for sync in folders {
            let listing = PreparedFolder(sync)
            options.verbose("\(listing.summary.folder): listing")
            var preparation = PreparedFolder.Preparation.unchanged
            if let failed = try attempt(listing, { preparation = try listing.prepare(on: store) }) {
                prepared.failed.append(failed)
                continue
            }
            prepared.order.append(sync)
            guard case .listed = preparation else {
                prepared.finishedEarly[ObjectIdentifier(sync)] = listing.summary
                continue
            }
            prepared.listings[ObjectIdentifier(sync)] = listing
            prepared.pending.append(listing)
        }
        if !prepared.failed.isEmpty { return (prepared, [:], true) }
        var finished = prepared.finishedEarly
        if !options.dryRun && !prepared.pending.isEmpty {
            try MoveDetector(server: store, folders: prepared.pending).run()
        }
        for listing in prepared.pending {
            if let summary = try finishFolder(listing, on: store) { finished[ObjectIdentifier(listing.sync)] = summary }
        }
        return (prepared, finished, false)
    }

    /// A `FolderSync` per view (`entries`: its folder name and mailbox), at the path its name maps to, its
    /// state under `stateKey` of that path (`~gmail`, `~jmap`: never a folder-by-folder state's key).
    func viewFolders(_ entries: [(name: String, mailbox: MailboxName)], stateKey: (String) -> String) -> [FolderSync] {
        let mapper = FolderNameMapper(layout: account.layout, pathBudget: FolderNameMapper.pathBudget(root: pair.maildir))
        let mapped = mapper.mapAll(entries.map { (name: $0.name, delimiter: Character("/")) }).mapping
        let policy = Self.policy(account.sync, force: options.force)
        let wholeLoads = WholeLoads()
        let folders = entries.compactMap { name, mailbox -> FolderSync? in
            guard let path = mapped[name], let absolute = FolderNameMapper.absolutePath(root: pair.maildir, relative: path) else {
                return nil
            }
            return FolderSync(
                mailbox: mailbox, folder: MaildirFolder(path: absolute),
                store: FolderStateStore(accountDirectory: stateDirectory, key: stateKey(path)),
                policy: policy, dryRun: options.dryRun, displayName: displayName(path), verbose: options.verbose,
                planned: options.planned, wholeLoads: wholeLoads)
        }
        setWindows(folders)
        return folders
    }

    /// The run's record when a view failed before any was finished: the views are one list of messages (a
    /// message that left a failed view may be new in another, and a move is found only with both), so none
    /// is finished this run; the next one tries again.
    func heldBack(_ folders: [FolderSync], _ prepared: PreparedFolders, kind: String) -> [FolderSummary] {
        var prepared = prepared
        prepared.failed[0].notes.append("\(kind) syncs its folders together: none was finished this run")
        return record(PairedFolders(folders: folders, summaries: []), prepared, finished: prepared.finishedEarly)
    }
}
