import Maildir
import Synchronization

/// The tags the index stores for a message (its `K` terms, IndexSchema): the union over its files of
/// `MaildirTags.tags` (keyword letters read through that file's folder table), `unread` only when no file
/// has `S` (the `XFLAG:unread` rule; for a message with no file in a Maildir, the local store says), the keywords beyond the letters its folder's `mo-keywords` holds for
/// the file's unique name (`ExtraKeywords`), and the message's entries in the `LocalTagStore`.
///
/// Computed from the file names alone (plus one `dovecot-keywords` read per folder per update, cached
/// here), so a rename updates the tags without reparsing the message. Shared by the writer threads of a
/// sharded build: the cache is guarded by a lock.
public final class TagTerms: @unchecked Sendable {
    let roots: [IndexRoot]
    public let vocabulary: TagVocabulary
    /// The local tag store, read when first asked for: an update that writes no document (a no-op, on
    /// 100,000 messages whose tags are all local under notmuch's mail root) never parses it.
    public var local: LocalTagStore {
        localStore.withLock { store in
            if store == nil { store = loadLocal() }
            return store!
        }
    }
    private let localStore = Mutex<LocalTagStore?>(nil)
    private let loadLocal: @Sendable () -> LocalTagStore
    /// The index revision this update stamps on every document whose file terms it writes (slot 8,
    /// notmuch's lastmod): file terms are what a tag change rewrites.
    public var revision: Int64 = 1
    private let tables = Mutex<[String: MaildirKeywords]>([:])  // by absolute folder path
    private let extras = Mutex<[String: ExtraKeywords]>([:])  // by absolute folder path

    public convenience init(roots: [IndexRoot], vocabulary: TagVocabulary = TagVocabulary(), local: LocalTagStore = LocalTagStore()) {
        self.init(roots: roots, vocabulary: vocabulary, loadingLocal: { local })
    }

    public init(roots: [IndexRoot], vocabulary: TagVocabulary, loadingLocal: @escaping @Sendable () -> LocalTagStore) {
        self.roots = roots
        self.vocabulary = vocabulary
        self.loadLocal = loadingLocal
    }

    /// The tags of message `id` whose files (index paths) are `files`.
    public func tags(id: String, files: [String]) -> Set<String> {
        var out = local.tags(of: id)
        var anySeen = false, anyInMaildir = false
        for path in files {
            let file = IndexedFile(path)
            // Outside a Maildir a file has no flags or letters: its tags, `unread` too, are the local store's.
            guard file.isInMaildir else { continue }
            anyInMaildir = true
            let flags = file.flags
            if flags.isSeen { anySeen = true }
            let keywords = flags.keywords.isEmpty ? MaildirKeywords() : table(folder: String(file.folder))
            out.formUnion(MaildirTags.tags(of: flags, keywords: keywords, vocabulary: vocabulary))
            let extra = self.extra(folder: String(file.folder))
            if !extra.isEmpty { for k in extra.keywords(of: file.unique) { out.insert(vocabulary.tag(forKeyword: k)) } }
        }
        if anyInMaildir { if anySeen { out.remove("unread") } else { out.insert("unread") } }
        return out
    }

    /// The keyword table of a folder (index path), read once and leniently (the index only reads it; the
    /// commands that write it, and mo-sync, refuse a damaged one). An unreadable table reads as empty: the
    /// letters then carry no tag, as for a client that does not know the file.
    func table(folder: String) -> MaildirKeywords {
        Self.once(folder, roots, tables) { (try? MaildirKeywords.load(folder: $0, lenient: true)) ?? MaildirKeywords() }
    }

    /// A folder's `mo-keywords` (index path), read once and leniently, as the table.
    func extra(folder: String) -> ExtraKeywords {
        Self.once(folder, roots, extras) { (try? ExtraKeywords.load(folder: $0, lenient: true)) ?? ExtraKeywords() }
    }

    /// A folder's file, loaded by `load` (from its absolute path) at the first ask and cached.
    private static func once<T>(
        _ folder: String, _ roots: [IndexRoot], _ cache: borrowing Mutex<[String: T]>, _ load: (String) -> T
    ) -> T {
        let directory = IndexRoot.absolutePath(folder, roots: roots)
        return cache.withLock { cached in
            if let hit = cached[directory] { return hit }
            let loaded = load(directory)
            cached[directory] = loaded
            return loaded
        }
    }
}
