#if canImport(Glibc)
    import Glibc
#endif
import Maildir
import MoConfig
import MoCore
import SyncState

/// What one folder's run saw of the keywords that do not travel, and the rule that turns it into the
/// folder's lines of `<state>/<account>/unsynced-keywords` (issue 17). Where the run saw only part of a side
/// (server-only changes; an incremental listing), a previous item stays while its cause does:
///
/// | reason            | found this run                                 | kept from before if that side was seen in part |
/// |-------------------|------------------------------------------------|------------------------------------------------|
/// | `refusedByServer` | a refused letter on a local file the run holds | its letter is still refused                    |
/// | `folderFull`      | a server keyword the listing could not map     | it still has no letter in the table            |
struct KeywordFindings: Equatable {
    var mailbox: String
    var table: MaildirKeywords
    /// The letters the server will not store (`FlagTranslation.unstorableLetters`).
    var unstorable: MaildirFlags
    /// The union of the flags of the local files the run held.
    var localLetters: MaildirFlags
    /// Server keywords that found no letter (`FlagTranslation.unmapped`).
    var unmapped: Set<String>
    var localSeenWhole: Bool
    var remoteSeenWhole: Bool
    /// Keywords of `mo-keywords` the server will not store (`extraStorable`).
    var refusedExtra: Set<String> = []

    func items(previous: [UnsyncedKeyword]) -> [UnsyncedKeyword] {
        var out = Set<UnsyncedKeyword>()
        for b in localLetters.intersection(unstorable).keywords.utf8 {
            if let k = table.keyword(for: b) {
                out.insert(UnsyncedKeyword(mailbox: mailbox, keyword: k, reason: UnsyncedKeyword.refusedByServer))
            }
        }
        for k in unmapped { out.insert(UnsyncedKeyword(mailbox: mailbox, keyword: k, reason: UnsyncedKeyword.folderFull)) }
        for k in refusedExtra { out.insert(UnsyncedKeyword(mailbox: mailbox, keyword: k, reason: UnsyncedKeyword.refusedByServer)) }
        for p in previous where p.mailbox == mailbox {
            let letter = table.letter(for: p.keyword)
            switch p.reason {
            case UnsyncedKeyword.refusedByServer where !localSeenWhole:
                if let letter, unstorable.contains(letter) { out.insert(p) }
            case UnsyncedKeyword.folderFull where !remoteSeenWhole:
                if letter == nil { out.insert(p) }
            default: break
            }
        }
        return out.sorted()
    }
}

extension PreparedFolder {
    /// This folder's items after `finish` (`KeywordFindings`). A folder `prepare` found unchanged has no
    /// listing, and saw nothing: its previous lines stand.
    func unsyncedKeywords(previous: [UnsyncedKeyword]) -> [UnsyncedKeyword] {
        var letters: MaildirFlags = []
        for file in localByUnique.values { letters.formUnion(file.flags) }
        return KeywordFindings(
            mailbox: sync.recordedName, table: translation.keywords, unstorable: run.unstorable,
            localLetters: letters, unmapped: translation.unmapped,
            localSeenWhole: loadedUIDs == nil, remoteSeenWhole: remoteListedWhole,
            refusedExtra: Set(extra.local.byUnique.values.joined()).filter { !extraStorable($0) }
        ).items(previous: previous)
    }
}

extension PreparedFolder {
    /// A file's letters from the `source` folder's table into this folder's, the table saved first when it
    /// gained a keyword (a letter never outlives its meaning, even if the run dies before its commit), and
    /// the keywords that found no letter here.
    func lettersFromFolder(_ flags: MaildirFlags, source: MaildirKeywords) throws -> (MaildirFlags, overflow: Set<String>) {
        let before = translation.keywords
        let t = translation.translate(flags, from: source)
        if translation.keywords != before { try translation.keywords.save(folder: folder.path) }
        return (t.flags, Set(t.overflow))
    }

    /// A file that arrived here by a local move from a folder with the table `source`: renamed to this
    /// folder's letters unless it carries them already (`MoveDetector.lettersAlreadyTheTarget`).
    /// Returns the keywords of its letters this folder's table had no room for (the caller carries them to
    /// `mo-keywords` with the file's other keywords beyond the letters).
    @discardableResult
    func relabelMovedFile(unique: String, base: MaildirFlags, from source: MaildirKeywords) throws -> Set<String> {
        if remappedByIndex.contains(unique) {  // `mo-index move` re-mapped it as it moved it
            run.metRemapped.insert(unique)
            return []
        }
        guard let file = localByUnique[unique], !file.flags.keywords.isEmpty,
            !MoveDetector.lettersAlreadyTheTarget(file.flags, base: base, source: source, target: translation.keywords)
        else { return [] }
        let (letters, overflow) = try lettersFromFolder(file.flags, source: source)
        guard letters != file.flags else { return overflow }
        try setLocalFlags(unique: unique, flags: letters)
        // Durable before the pair is journaled with these letters as its base: a rename lost in a crash
        // would leave the source's letters to read as local changes.
        try folder.syncDirectory(.cur)
        try folder.syncDirectory(.new)
        return overflow
    }
}

extension AccountSync {
    /// Rewrites `unsynced-keywords` from the folders of this run: a folder finished without error gives
    /// its own items; one unchanged (no listing), failed or stopped before its finish keeps its previous
    /// lines; a mailbox no longer synced loses them. Best effort (`AccountFiles.writeUnsyncedKeywords`).
    /// `listed`: the folders `prepare` listed, by their `FolderSync`.
    func recordUnsyncedKeywords(
        _ folders: [FolderSync], listed: [ObjectIdentifier: PreparedFolder],
        finished: [ObjectIdentifier: FolderSummary]
    ) {
        let previous = AccountFiles.unsyncedKeywords(in: stateDirectory)
        var items: [UnsyncedKeyword] = []
        for sync in folders {
            let done = finished[ObjectIdentifier(sync)].map { $0.error == nil } ?? false
            if done, let own = listed[ObjectIdentifier(sync)]?.unsyncedKeywords(previous: previous) {
                items += own
            } else {
                items += previous.filter { $0.mailbox == sync.recordedName }
            }
        }
        AccountFiles.writeUnsyncedKeywords(items, in: stateDirectory)
    }
}

extension AccountSync {
    /// `mo-sync status`'s lines for the keywords that do not travel, one per recorded item of every synced
    /// account: `ACCOUNT: MAILBOX: keyword KEYWORD not synced: REASON`, escaped for a terminal (mailbox
    /// names and keywords come from the server).
    public static func unsyncedKeywordLines(config: Config) -> [String] {
        config.accounts.filter { $0.maildir != nil }.flatMap { account in
            AccountFiles.unsyncedKeywords(in: config.stateDirectory + "/" + account.name).map {
                escapedForMessage("\(account.name): \($0.mailbox): keyword \($0.keyword) not synced: \($0.reason)")
            }
        }
    }
}

extension PreparedFolder {
    /// The folder's keyword table, read under its lock (taken once, held until `finish` ends; a dry run
    /// changes nothing and takes none). `mo-index tag` holds the lock only while it adds letters.
    func loadKeywords() throws -> FlagTranslation {
        if keywordsLock == nil && !dryRun && folder.exists {
            do {
                keywordsLock = try MaildirKeywords.lock(folder: folder.path, wait: 10)
            } catch {
                // A folder this user cannot write (a read-only mount): nobody can change its table, so there
                // is nothing to lock; a table change of this run fails at `saveKeywords` as before.
                guard error.code == EACCES || error.code == EROFS else { throw error }
            }
        }
        remappedByIndex = RemappedFiles.load(folder: folder.path)
        let table = FlagTranslation(keywords: try MaildirKeywords.load(folder: folder.path))
        try loadExtraKeywords()
        return table
    }

    /// Writes the table if letters were assigned since it was last written.
    func saveKeywords() throws {
        guard translation.changed else { return }
        try translation.keywords.save(folder: folder.path)
        translation.markSaved()
    }
}
