import Maildir
import Synchronization

/// The tags the index stores for a message (its `K` terms, IndexSchema): the union over its files of
/// `MaildirTags.tags` (keyword letters read through that file's folder table), `unread` only when no file
/// has `S` (the `XFLAG:unread` rule), and the message's entries in the `LocalTagStore`.
///
/// Computed from the file names alone (plus one `dovecot-keywords` read per folder per update, cached
/// here), so a rename updates the tags without reparsing the message. Shared by the writer threads of a
/// sharded build: the cache is guarded by a lock.
public final class TagTerms: @unchecked Sendable {
    let roots: [IndexRoot]
    public let vocabulary: TagVocabulary
    public let local: LocalTagStore
    private let tables = Mutex<[String: MaildirKeywords]>([:])  // by absolute folder path

    public init(roots: [IndexRoot], vocabulary: TagVocabulary = TagVocabulary(), local: LocalTagStore = LocalTagStore()) {
        self.roots = roots
        self.vocabulary = vocabulary
        self.local = local
    }

    /// The tags of message `id` whose files (index paths) are `files`.
    public func tags(id: String, files: [String]) -> Set<String> {
        var out = local.tags(of: id)
        var anySeen = false
        for path in files {
            let file = IndexedFile(path)
            let flags = file.flags
            if flags.isSeen { anySeen = true }
            let keywords = flags.keywords.isEmpty ? MaildirKeywords() : table(folder: String(file.folder))
            out.formUnion(MaildirTags.tags(of: flags, keywords: keywords, vocabulary: vocabulary))
        }
        if anySeen { out.remove("unread") } else { out.insert("unread") }
        return out
    }

    /// The keyword table of a folder (index path), read once and leniently (the index only reads it; the
    /// commands that write it, and mo-sync, refuse a damaged one). An unreadable table reads as empty: the
    /// letters then carry no tag, as for a client that does not know the file.
    func table(folder: String) -> MaildirKeywords {
        let directory = IndexRoot.absolutePath(folder, roots: roots)
        return tables.withLock { tables in
            if let cached = tables[directory] { return cached }
            let loaded = (try? MaildirKeywords.load(folder: directory, lenient: true)) ?? MaildirKeywords()
            tables[directory] = loaded
            return loaded
        }
    }
}
