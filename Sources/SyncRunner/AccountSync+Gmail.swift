import IMAPClient
import IMAPCodec
import Maildir
import MoConfig
import MoCore
import SyncEngine
import SyncState

/// `AccountSync` in Gmail mode (docs/gmail.md): the folders are the views of All Mail (`GmailStore`), each
/// message downloaded and stored once, its labels as tags. The same core as every account: each view is a
/// `FolderSync` with its state file, prepared, then moves between views (`MoveDetector`: a label change
/// keeps the message's id, so it moves and is never downloaded again), then finished; over one connection.
extension AccountSync {
    /// The views, in the order they are synced: INBOX first, the newest mail a user reads.
    static let gmailViews: [Placement.Folder] = [.inbox, .sent, .drafts, .archive]

    /// Whether this run syncs in Gmail mode: `gmail-mode = "on"`, or `"auto"` on a server that announces
    /// X-GM-EXT-1 for an account synced in Gmail mode before or never synced (one synced folder by folder
    /// keeps that, with a note: switching is the user's choice). A note is returned when auto declined.
    func gmailMode(_ imap: IMAPConnection) throws -> (on: Bool, note: String?) {
        let gmail = imap.capabilities.contains("X-GM-EXT-1")
        switch account.sync.gmailMode {
        case .off: return (false, nil)
        case .on:
            guard gmail else {
                throw GenericError(
                    .config, "account \(account.name): gmail-mode = \"on\" but \(imap.endpoint) is not Gmail (no X-GM-EXT-1)")
            }
            return (true, nil)
        case .auto:
            guard gmail else { return (false, nil) }
            if AccountFiles.isGmailMode(stateDirectory) || !AccountFiles.recordsSyncs(stateDirectory) { return (true, nil) }
            return (
                false,
                "Gmail mode is off: this account was synced folder by folder before; set gmail-mode = \"on\" to switch (docs/gmail.md)"
            )
        }
    }

    /// One run in Gmail mode, in named steps: the views paired with their folders, each prepared over the
    /// store, moves between views, each finished; then the run's record.
    func runGmail(on imap: IMAPConnection) throws -> [FolderSummary] {
        let (store, missing) = try gmailStore(on: imap)
        if !options.dryRun && !AccountFiles.isGmailMode(stateDirectory) { try AccountFiles.markGmailMode(stateDirectory) }
        let folders = gmailFolders(own: store.ownFolders)
        let labelFolders = labelFolders(account.sync.gmailLabelFolders, under: "Labels/", sources: folders)
        // What was done in the label folders since the last run goes to the messages' own files first, so
        // this run carries it to Gmail.
        let carried = options.dryRun ? nil : try labelFolders?.carryBack()
        let allowance = DownloadAllowance.make(configured: account.sync.dailyDownload, gmail: true, directory: stateDirectory)
        for sync in folders { sync.allowance = allowance }
        // Every view is cut from one look at All Mail, taken knowing each view's committed mark (Trash and
        // Spam, outside All Mail, have their own).
        let (prepared, finished, held) = try syncViews(folders, on: store, kind: "Gmail mode") { marks in
            try store.begin(views: zip(folders, marks).filter { store.sharesIDs($0.0.mailbox) }.map(\.1))
        }
        if held { return heldBack(folders, prepared, kind: "Gmail mode") }
        if !options.dryRun {
            // The mark lets the next run skip the searches when All Mail is unchanged: only after a run in
            // which every view committed and nothing was changed on the server.
            let clean = finished.values.allSatisfy { $0.error == nil && $0.stopped == nil }
            try AccountFiles.markGmailMode(stateDirectory, mark: clean ? store.mark() : nil)
        }
        var general = FolderSummary(folder: "(account \(account.name))")
        general.notes = missing + localFoldersLeftAlone(besides: folders, labels: labelFolders) + store.notes + (carried?.notes ?? [])
        if let labelFolders, !options.dryRun,
            carried?.changed == true || finished.values.contains(where: \.changed) || labelFolders.needsRefresh
        {
            do { try labelFolders.refresh() } catch { general.notes.append("the label folders were not remade: \(error)") }
        }
        return record(PairedFolders(folders: folders, summaries: general.notes.isEmpty ? [] : [general]), prepared, finished: finished)
    }

    /// The note naming the local folders Gmail mode does not sync (a user's own, or the label folders of an
    /// account synced folder by folder before), so mail saved there is not silently kept local.
    func localFoldersLeftAlone(besides views: [FolderSync], labels: LabelFolders? = nil) -> [String] {
        guard MaildirRoot.exists(pair.maildir), let local = try? MaildirScanner.listFolders(root: pair.maildir, layout: account.layout)
        else { return [] }
        let synced = Set(views.map(\.folder.path) + (labels?.labels.map(\.path) ?? []))
        let others = local.folders.filter { path in
            guard let absolute = FolderNameMapper.absolutePath(root: pair.maildir, relative: path) else { return false }
            return !synced.contains(absolute) && !(path.isEmpty && synced.contains(pair.maildir))
        }
        guard !others.isEmpty else { return [] }
        let names = views.map(\.displayName).joined(separator: ", ")
        return ["Gmail mode syncs \(names); left alone in the Maildir: " + boundedList(others.map(displayName))]
    }

    /// The store over All Mail, with the mailboxes new local messages of each view are uploaded to, and
    /// Trash and Spam when `gmail-folders` asks for them; a note for each asked that Gmail does not list.
    func gmailStore(on imap: IMAPConnection) throws -> (GmailStore, notes: [String]) {
        let boxes = try imap.list().filter(\.isSelectable)
        if !options.dryRun { recordRoles(boxes) }
        guard let allMail = MailboxRole.all.mailbox(in: boxes) else {
            throw IMAPError(server: imap.endpoint, .unexpected("Gmail lists no \\All mailbox (All Mail); Gmail mode needs it"))
        }
        var targets: [Placement.Folder: MailboxName] = [.inbox: .inbox, .archive: allMail]
        targets[.sent] = MailboxRole.sent.mailbox(in: boxes) ?? allMail
        targets[.drafts] = MailboxRole.drafts.mailbox(in: boxes) ?? allMail
        var own: [(name: String, mailbox: MailboxName)] = [], notes: [String] = []
        for folder in account.sync.gmailFolders {
            if let mailbox = (folder == .trash ? MailboxRole.trash : .junk).mailbox(in: boxes) {
                own.append((folder.rawValue, mailbox))
            } else {
                notes.append("Gmail lists no \(folder.rawValue) mailbox (special-use); gmail-folders' \"\(folder.rawValue)\" is not synced")
            }
        }
        let store = GmailStore(
            imap: imap, allMail: allMail, uploadTargets: targets, vocabulary: vocabulary,
            trash: MailboxRole.trash.mailbox(in: boxes), deletion: account.sync.gmailDelete,
            lastMark: AccountFiles.gmailMark(stateDirectory), ownFolders: own)
        return (store, notes)
    }

    /// A `FolderSync` per view, at the path its name maps to (INBOX as every account's), then one for each
    /// own mailbox (Trash, Spam: `own`, by folder name).
    func gmailFolders(own: [(name: String, mailbox: MailboxName)] = []) -> [FolderSync] {
        viewFolders(
            Self.gmailViews.map { ($0.rawValue, $0 == .inbox ? MailboxName.inbox : MailboxName($0.rawValue)) } + own,
            stateKey: FolderStateStore.key(forGmailView:))
    }
}
