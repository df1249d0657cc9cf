import ClientSettings
import IMAPClient
import IMAPCodec
import JMAPClient
import Maildir
import MoConfig
import MoCore
import MoHTTP
import MoNet
import SyncEngine
import SyncState

/// `AccountSync` for a JMAP account (docs/jmap.md): the folders are the views of the account's Emails
/// (`JMAPStore`), each message downloaded and stored once, its other mailboxes as tags. The same core as
/// every account and as Gmail mode: each view a `FolderSync` with its state file, all cut from one look,
/// prepared, then moves between views (`MoveDetector`: a mailbox change keeps the id), then finished.
extension AccountSync {
    /// One run of a JMAP account, in named steps: the session, the views, the look, each view prepared,
    /// moves, each finished; then the mark and the run's record.
    func runJMAP(_ config: JMAPConfig) throws -> [FolderSummary] {
        let (client, cached) = try jmapClient(config)
        defer { client.close() }
        if let trace = options.trace { client.trace = { trace.sink($0) } }
        let store = JMAPStore(client: client, directory: stateDirectory, vocabulary: vocabulary, deletion: account.sync.jmapDelete)
        let folders = jmapFolders()
        for sync in folders { if let view = Placement.Folder.view(named: sync.mailbox) { store.viewStates[view] = sync.store } }
        let mailboxFolders = labelFolders(account.sync.jmapMailboxFolders, under: "Mailboxes/", sources: folders)
        // What was done in the mailbox folders since the last run goes to the messages' own files first,
        // so this run carries it to the server.
        let carried = options.dryRun ? nil : try mailboxFolders?.carryBack()
        let allowance = DownloadAllowance.make(configured: account.sync.dailyDownload, gmail: false, directory: stateDirectory)
        for sync in folders { sync.allowance = allowance }
        let (prepared, finished, held) = try syncViews(folders, on: store, kind: "a JMAP account") { marks in
            // A view whose date window moved, or whose keywords are listed whole, needs every message: the
            // look lists them all, once, for every view.
            let whole = folders.contains { $0.listKeywordsWhole || $0.window?.moved == true }
            do {
                try store.begin(views: marks, whole: whole)
            } catch let error as GenericError where cached && (error.kind == .authentication || error.message.contains("HTTP 404")) {
                // The kept session may be out of date (an API address moved): fetched again, then once more.
                try refreshSession(client, config)
                try store.begin(views: marks, whole: whole)
            }
        }
        if held { return heldBack(folders, prepared, kind: "A JMAP account") }
        if !options.dryRun && finished.values.allSatisfy({ $0.error == nil && $0.stopped == nil }) {
            try store.saveMark()
        }
        if client.sessionChanged { try? refreshSession(client, config) }
        options.verbose("\(account.name): \(client.requests) HTTP request(s)")
        var general = FolderSummary(folder: "(account \(account.name))")
        general.notes = store.notes + (carried?.notes ?? [])
        if let mailboxFolders, !options.dryRun,
            carried?.changed == true || finished.values.contains(where: \.changed) || mailboxFolders.needsRefresh
        {
            do { try mailboxFolders.refresh() } catch { general.notes.append("the mailbox folders were not remade: \(error)") }
        }
        return record(PairedFolders(folders: folders, summaries: general.notes.isEmpty ? [] : [general]), prepared, finished: finished)
    }

    /// The client, with the account's credentials (the password-command runs here), over the session kept
    /// from the last run (`cached`), else fetched and kept.
    func jmapClient(_ config: JMAPConfig) throws -> (JMAPClient, cached: Bool) {
        let (client, cached) = try AccountSettings.jmapClient(config, account: account.name, tokens: tokens, keptIn: stateDirectory)
        if !cached && !options.dryRun { keepSession(client, config) }
        return (client, cached)
    }

    func refreshSession(_ client: JMAPClient, _ config: JMAPConfig) throws {
        guard let url = WebAddress(config.url) else { return }
        try client.refreshSession(from: url)
        if !options.dryRun { keepSession(client, config) }
    }

    private func keepSession(_ client: JMAPClient, _ config: JMAPConfig) {
        AccountFiles.saveJMAPSession(client.sessionBytes, in: stateDirectory, configured: config.url, address: client.sessionURL.text)
    }

    /// A `FolderSync` per view, at the path its name maps to.
    func jmapFolders() -> [FolderSync] {
        viewFolders(
            JMAPStore.views.map { ($0.rawValue, $0 == .inbox ? MailboxName.inbox : MailboxName($0.rawValue)) },
            stateKey: FolderStateStore.key(forJMAPView:))
    }
}

extension JMAPStore {
    /// The mark the run leaves (`JMAPMark`): the mailboxes it placed by, and, when it changed nothing on
    /// the server, each view's count at the look's mark; when it changed only keywords, in a chain of its
    /// own from the look's state, the counts at the state that chain ended at (recorded as the next mark),
    /// and that the views' mark equals it (`ownFrom`), so the next run's look is the one-request no-op.
    func saveMark() throws {
        guard let look else { return }
        var mark = JMAPMark(mailboxState: mailboxes.digest)
        if !madeChanges, let counts = look.counts {
            var at = look.mark
            if let end = ownKeywords.end(from: stateOfMark(look.mark)) {
                var ids = try loadedIDs()
                at = try ids.record(newIDs: [], state: end) ?? look.mark
                self.ids = ids
                if at != look.mark { mark.ownFrom = look.mark }
            }
            mark.counts = JMAPMark.Counts(
                epoch: look.epoch, mark: at, uidNext: look.uidNext,
                views: Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) }))
        }
        try mark.save(in: directory)
    }

    private func stateOfMark(_ mark: UInt64) -> String? {
        if let s = ids?.state(of: mark) { return s }
        if let last = JMAPIDs.lastState(in: directory), last.mark == mark { return last.state }
        return (try? loadedIDs())?.state(of: mark)
    }
}

/// The states a run's own keyword changes led through (`Email/set` answers' old and new states): a chain
/// from the look's state to the last answer's when each change started where the one before ended, so
/// nobody else changed the account meanwhile. Pure.
struct OwnKeywords: Sendable, Equatable {
    private(set) var first: String?
    private(set) var last: String?
    private(set) var broken = false

    mutating func note(_ result: JMAPSetResult, refused: Bool) {
        guard !broken else { return }
        guard !refused, let old = result.oldState else {
            broken = true
            return
        }
        if let last, last != old { broken = true }
        if first == nil { first = old }
        last = result.newState
    }

    /// The chain's end when it starts at `state`; nil when there is none, it is broken, or starts elsewhere.
    func end(from state: String?) -> String? {
        guard !broken, let first, let last, let state, first == state else { return nil }
        return last
    }
}
