#if canImport(Glibc)
    import Glibc
#endif
import ClientSettings
import IMAPClient
import IMAPCodec
import JMAPClient
import Maildir
import MoConfig
import MoCore
import SyncEngine
import SyncState

/// `mo-sync fetch FILE…`: fills placeholders (`max-size`, `Maildir.Placeholder`) on demand. Each file is
/// found in its account's Maildir and its pair in the folder's state (the UID); the message is fetched
/// and put in the placeholder's place under the same name (`Placeholder.fill`), so a mail client's open
/// mailbox stays valid. The account's lock is held, as by a sync (waiting up to 30 s for a running one). A file that is no placeholder (filled
/// already, or a message) is left alone and reported; one bad file does not stop the others.
public enum PlaceholderFetch {
    public struct Outcome: Sendable {
        public var filled = 0
        /// One line per file left alone, naming it and why (escaped for a terminal by the caller).
        public var problems: [String] = []
        /// The kind of the first error, for the exit status (nil: none).
        public var firstError: ErrorKind?
    }

    /// One placeholder to fill: its account, folder and pair.
    struct Wanted {
        let account: Account
        /// `<state>/<account>`, and whether the account is in Gmail mode there.
        let accountDirectory: String
        let gmail: Bool
        /// A JMAP account: its views' ids are numbers of `jmap-ids` (docs/jmap.md), its epoch the "UIDVALIDITY".
        let jmap: JMAPConfig?
        let folderPath: String
        let relative: String
        let uid: UInt32
        let path: String
        let mailbox: MailboxName
        /// The folder's UIDVALIDITY as its state records it: the UID names the message only under it.
        let uidValidity: UInt32
    }

    public static func run(paths: [String], config: Config) -> Outcome {
        var outcome = Outcome()
        var groups: [String: [Wanted]] = [:]
        var states: [String: Replay] = [:]  // by state file: one load per folder
        for path in paths {
            do {
                guard let w = try locate(path, config: config, states: &states) else {
                    outcome.problems.append("\(path): not a placeholder (its message is here already); left alone")
                    continue
                }
                groups[w.account.name + "\u{0}" + w.relative, default: []].append(w)
            } catch {
                outcome.note(error, "\(path)")
            }
        }
        for (_, wanted) in groups.sorted(by: { $0.key < $1.key }) {
            do {
                let filled = try fill(wanted, config: config)
                outcome.filled += filled.count
                for w in wanted where !filled.contains(w.uid) {
                    outcome.note(
                        GenericError(
                            .data,
                            "not filled: its message is gone from the server, or the file was renamed meanwhile; run mo-sync, then try again"
                        ),
                        w.path)
                }
            } catch {
                outcome.note(error, wanted.map(\.path).joined(separator: ", "))
            }
        }
        return outcome
    }

    /// The pair of the placeholder at `path`; nil when the file is no placeholder.
    static func locate(_ path: String, config: Config, states: inout [String: Replay]) throws -> Wanted? {
        guard let real = realPath(path) else { throw GenericError(.usage, "no such file") }
        guard Placeholder.size(ofFile: real) != nil else { return nil }
        let file = String(real[real.index(after: real.lastIndex(of: "/")!)...])
        let subdir = String(real[..<real.lastIndex(of: "/")!])
        guard subdir.hasSuffix("/cur") || subdir.hasSuffix("/new") else {
            throw GenericError(.usage, "not in a Maildir folder's cur/ or new/")
        }
        let folderPath = String(subdir.dropLast(4))
        for account in config.accounts {
            guard let pair = account.syncPair, let root = realPath(pair.maildir) else { continue }
            guard folderPath == root || folderPath.hasPrefix(root + "/") else { continue }
            let relative = folderPath == root ? "" : String(folderPath.dropFirst(root.count + 1))
            let directory = config.stateDirectory + "/" + account.name
            let gmail = AccountFiles.isGmailMode(directory)
            let key =
                account.jmap != nil
                ? FolderStateStore.key(forJMAPView: relative)
                : gmail ? FolderStateStore.key(forGmailView: relative) : FolderStateStore.key(forLocalPath: relative)
            let store = FolderStateStore(accountDirectory: directory, key: key)
            guard store.exists else { throw GenericError(.data, "its folder has not been synced (no state in \(directory))") }
            let replay = try states[store.statePath] ?? store.load(mailbox: "")
            states[store.statePath] = replay
            guard let unique = MaildirFilename.likelyUnique(of: file), let record = replay.table.record(unique: unique), record.uid != 0
            else { throw GenericError(.data, "no synced message has this file's unique name (run mo-sync first)") }
            let mailbox = MailboxName(wire: Array(replay.state.mailbox.utf8))
            return Wanted(
                account: account, accountDirectory: directory, gmail: gmail, jmap: account.jmap, folderPath: folderPath, relative: relative,
                uid: record.uid, path: real, mailbox: mailbox, uidValidity: replay.state.uidValidity)
        }
        throw GenericError(.usage, "not in the Maildir of any account of the configuration")
    }

    /// Fills one folder's placeholders over one connection, under the account's lock.
    static func fill(_ wanted: [Wanted], config: Config) throws -> Set<UInt32> {
        let account = wanted[0].account
        // A sync of the account (a timer's, --watch's) is usually over in a moment: wait for it.
        let lock = try AccountLock(directory: wanted[0].accountDirectory, account: account.name, wait: 30)
        defer { withExtendedLifetime(lock) {} }
        if let jmap = wanted[0].jmap { return try fillJMAP(wanted, jmap, config: config) }
        let pair = try config.imapServer(of: account, for: "mo-sync fetch")
        let settings = AccountSettings.imap(
            pair.imap, account: account.name, tokens: AccountSettings.tokenBroker(for: account, stateDirectory: config.stateDirectory))
        let imap = try IMAPConnection.openForSync(settings, trace: nil)
        defer { imap.logout() }
        var mailbox = wanted[0].mailbox
        if wanted[0].gmail, Placement.Folder.view(named: mailbox) != nil {
            // A view's ids are All Mail's UIDs (docs/gmail.md).
            guard let all = MailboxRole.all.mailbox(in: try imap.list()) else { throw GenericError(.data, "the server lists no All Mail") }
            mailbox = all
        }
        let selected = try imap.open(mailbox, since: nil)
        guard selected.uidValidity == wanted[0].uidValidity else {
            throw GenericError(
                .data, "the mailbox's UIDVALIDITY changed since the last sync (its UIDs name other messages now); run mo-sync first")
        }
        return try PreparedFolder.fill(wanted.map { ($0.uid, $0.path) }, from: imap, folder: MaildirFolder(path: wanted[0].folderPath))
    }

    /// A JMAP account's placeholders: the numbers name Emails through `jmap-ids`, valid under its epoch.
    static func fillJMAP(_ wanted: [Wanted], _ jmap: JMAPConfig, config: Config) throws -> Set<UInt32> {
        let account = wanted[0].account, directory = wanted[0].accountDirectory
        let client = try AccountSettings.jmapClient(
            jmap, account: account.name, tokens: AccountSettings.tokenBroker(for: account, stateDirectory: config.stateDirectory),
            keptIn: directory
        ).client
        defer { client.close() }
        let store = JMAPStore(
            client: client, directory: directory, vocabulary: TagVocabulary(extra: config.keywords.map { ($0.keyword, $0.tag) }))
        guard try store.loadedIDs().epoch == wanted[0].uidValidity else {
            throw GenericError(.data, "the account's ids were numbered anew since the last sync; run mo-sync first")
        }
        return try PreparedFolder.fill(wanted.map { ($0.uid, $0.path) }, from: store, folder: MaildirFolder(path: wanted[0].folderPath))
    }

    static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}

extension PlaceholderFetch.Outcome {
    mutating func note(_ error: any Error, _ what: String) {
        let kind = (error as? any MoError)?.kind ?? .software
        problems.append("\(what): \((error as? any MoError)?.description ?? "\(error)")")
        if firstError == nil { firstError = kind }
    }
}
