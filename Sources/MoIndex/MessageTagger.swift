#if canImport(Glibc)
    import Glibc
#endif
import Maildir
import MoCore

/// Writes tag changes into message files: the one copy of "apply +a -b to these files", used by
/// `mo-index tag`, the `[[tag-rule]]`s of `mo-index update`, and restores.
///
/// Each file gets `MaildirTags.apply` through its folder's `dovecot-keywords` table (read once, saved before
/// the first file that uses a new letter is renamed, so a letter never outlives its meaning), then one
/// rename (`MaildirFolder.setFlags`): the rename is the durable record, mo-sync carries it to the server as
/// a keyword STORE. A tag with no free letter (the folder already holds 26 keywords) goes to the folder's
/// `mo-keywords` instead (`ExtraKeywords`), which mo-sync carries the same way; removing a tag removes it
/// there too, and from the `LocalTagStore` (tags an older version kept there). The index is not touched:
/// the caller runs the (rename-only, cheap) update afterwards, and calls `save()` before it.
///
/// A tagger holds `local-tags.lock` for its life, so two taggers (two `mo-index tag` runs) never lose
/// each other's local-store changes (each reads the store after taking the lock).
public final class MessageTagger {
    public let vocabulary: TagVocabulary
    public let localTagsPath: String
    public private(set) var local: LocalTagStore
    private var localChanged = false
    private var tables: [String: MaildirKeywords] = [:]  // by folder path
    private var renamedIn = Set<String>()  // folders with renames not yet made durable
    private let lock: FileLock

    /// What `apply` did to one message.
    public struct Outcome: Sendable, Equatable {
        /// Files renamed.
        public var changedFiles = 0
        /// Files whose line in their folder's `mo-keywords` changed (tags beyond the letters).
        public var changedExtra = 0
        /// Files that were gone when renamed (another program renamed or removed them since the last
        /// update): passed over, the rest of the batch goes on; the next update sees where they went.
        public var vanishedFiles = 0
    }

    /// False for notmuch's mail root (`IndexRoot.allFiles`): only the flag tags go into file names, as
    /// notmuch's `synchronize_flags` puts them there; every other tag is the local store's.
    public let keywordsInNames: Bool

    public init(vocabulary: TagVocabulary, localTagsPath: String, keywordsInNames: Bool = true) throws {
        self.vocabulary = vocabulary
        self.localTagsPath = localTagsPath
        self.keywordsInNames = keywordsInNames
        let lockPath = localTagsPath + ".lock"
        // The store lives in the state directory, which a first mo-index may find absent (no mo-sync yet).
        if let slash = localTagsPath.lastIndex(of: "/"), let e = makeDirectories(String(localTagsPath[..<slash])) {
            throw GenericError(.localIO, "cannot create the directory of \(quotedForMessage(localTagsPath)): \(errnoDescription(e))")
        }
        let taken: FileLock?
        do {
            taken = try FileLock(path: lockPath, wait: 30)
        } catch {
            throw GenericError(.localIO, "cannot lock \(quotedForMessage(lockPath)): \(error)")
        }
        guard let taken else {
            throw GenericError(
                .busy,
                "\(quotedForMessage(localTagsPath)) is being changed by another process "
                    + "(pid \(FileLock.holder(lockPath))); try again when it finishes")
        }
        self.lock = taken
        self.local = try LocalTagStore.load(localTagsPath)
    }

    /// Adds `add` and removes `remove` on every file (absolute paths) of message `messageID`. A file that
    /// is not a Maildir message name is left alone.
    ///
    /// A message none of whose files is in a Maildir (`cur/` or `new/`: an all-files root, as notmuch
    /// indexes) has no names to carry tags: its tags, the flag tags too, are the local store's. Without
    /// `keywordsInNames`, only the flag tags go into names.
    public func apply(add: [String], remove: [String], messageID: String, files: [String]) throws -> Outcome {
        let outcome = Outcome()
        let inMaildir = files.contains { IndexedFile($0).isInMaildir }
        if !files.isEmpty && (!inMaildir || !keywordsInNames) {
            // Outside a Maildir every tag is the store's; in notmuch's root all but the flag tags.
            let isFlag = { (tag: String) in inMaildir && TagVocabulary.flagTags.contains { $0.tag == tag } }
            let before = local.tags(of: messageID)
            local.add(add.filter { !isFlag($0) }, to: messageID)
            local.remove(remove.filter { !isFlag($0) }, from: messageID)
            // No rename to keep in step with: the store is written at `save()`, once for the batch.
            if local.tags(of: messageID) != before { localChanged = true }
            let flagAdd = add.filter(isFlag), flagRemove = remove.filter(isFlag)
            if flagAdd.isEmpty && flagRemove.isEmpty { return outcome }
            return try applyToNames(add: flagAdd, remove: flagRemove, files: files, outcome: outcome)
        }
        return try applyToNames(add: add, remove: remove, files: files, outcome: outcome, messageID: messageID)
    }

    /// The tags into the names (letters, flags) of the Maildir files of a message; `messageID`: drop them
    /// from the local store, where an older version kept tags.
    private func applyToNames(
        add: [String], remove: [String], files: [String], outcome: Outcome, messageID: String? = nil
    ) throws -> Outcome {
        var outcome = outcome
        for path in files where IndexedFile(path).isInMaildir {
            guard let slash = path.lastIndex(of: "/"),
                let name = try? MaildirFilename(parsing: String(path[path.index(after: slash)...]))
            else { continue }
            let folder = String(IndexedFile(path).folder)
            let before = try table(folder)
            var keywords = before
            var change = MaildirTags.apply(add: add, remove: remove, to: name.flags, keywords: &keywords, vocabulary: vocabulary)
            if keywords != before {
                // New letters: under the folder's keyword lock, from the table as it is now (mo-sync may
                // have added letters since it was read), saved before any file carries them.
                let lock = try MaildirKeywords.lock(folder: folder, wait: 60)
                keywords = try MaildirKeywords.load(folder: folder)
                let current = keywords
                change = MaildirTags.apply(add: add, remove: remove, to: name.flags, keywords: &keywords, vocabulary: vocabulary)
                if keywords != current { try keywords.save(folder: folder) }
                tables[folder] = keywords
                withExtendedLifetime(lock) {}
            }
            if try applyExtra(add: change.overflow, remove: remove, unique: name.unique, folder: folder) { outcome.changedExtra += 1 }
            if change.flags != name.flags {
                do {
                    // Durable at `save()`: one fsync of cur/ and new/ per folder for the batch, not one per file
                    // (a crash before it leaves some files with their old names: nothing lost, run it again).
                    _ = try MaildirFolder(path: folder).setFlags(path: path, flags: change.flags, moveToCur: true, sync: false)
                    renamedIn.insert(folder)
                    outcome.changedFiles += 1
                } catch let error as MaildirError where error.code == ENOENT {
                    outcome.vanishedFiles += 1
                }
            }
        }
        guard let messageID else { return outcome }
        let keptBefore = local.tags(of: messageID)
        // A tag now travels with the files (a letter or `mo-keywords`): a copy an older version kept in
        // the local store is no longer needed.
        local.remove(remove + add, from: messageID)
        if local.tags(of: messageID) != keptBefore {
            localChanged = true
            // At once, not at the end of the batch: the renames before a crash are durable, so must be
            // the store beside them.
            try save()
        }
        return outcome
    }

    /// Makes the renames so far durable (the folders' cur/ and new/), then writes the local store if
    /// `apply` changed it.
    public func save() throws {
        for folder in renamedIn.sorted() {
            let maildir = MaildirFolder(path: folder)
            for subdir in [MaildirSubdir.cur, .new] {
                do { try maildir.syncDirectory(subdir) } catch { if error.code != ENOENT { throw error } }  // no new/: fine
            }
        }
        renamedIn = []
        guard localChanged else { return }
        try local.save(localTagsPath)
        localChanged = false
    }

    /// Tags that found no letter go to the folder's `mo-keywords` (`ExtraKeywords`), and removed tags
    /// leave it (`MaildirTags.retagExtra`: under the folder's keyword lock, from the file as it is now,
    /// written at once, announcing the change to mo-sync and the index by cur/'s time).
    private func applyExtra(add: [String], remove: [String], unique: String, folder: String) throws -> Bool {
        try MaildirTags.retagExtra(folder: folder, unique: unique, add: add, remove: remove, vocabulary: vocabulary)
    }

    private func table(_ folder: String) throws -> MaildirKeywords {
        if let cached = tables[folder] { return cached }
        let loaded = try MaildirKeywords.load(folder: folder)
        tables[folder] = loaded
        return loaded
    }
}
