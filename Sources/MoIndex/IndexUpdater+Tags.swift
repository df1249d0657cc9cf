import Foundation
import Maildir
import XapianKit

/// Tags that change without a rename (IndexSchema's `K` terms): the update rewrites the file terms of the
/// documents concerned from their stored file lists; no mail is read.
extension IndexUpdater {
    struct TagChanges {
        let tags: TagTerms
        /// Every document: an upgrade from format 6 (no K terms), or another `[keywords]` table.
        let all: Bool
        /// The messages whose local-store entries changed.
        let ids: Set<String>
        /// What to record, so the next update compares against it.
        let metadata: [(String, String)]

        var isEmpty: Bool { !all && ids.isEmpty }
    }

    /// `keywordTable` as the `mo-index-keywords` metadata records it.
    var renderedKeywordTable: String { keywordTable.map { "\($0.keyword)\t\($0.tag)\n" }.joined() }

    /// The tags of this update, and which documents need retagging. Documents this run writes get the
    /// current tags anyway: an empty index has nothing to retag.
    func tagChanges(_ reader: XapianDatabase) throws -> TagChanges {
        // Lenient: the update never writes the store, and one damaged line must not stop the indexing.
        let bytes = try LocalTagStore.fileBytes(localTagsPath)
        let stored = try reader.metadata(IndexSchema.Metadata.localTags)
        // The store as last applied, byte for byte (it is written rendered): nothing to compare, and
        // nothing to parse unless a document is written.
        let unchanged = bytes == stored
        let tags = TagTerms(roots: roots, vocabulary: TagVocabulary(extra: keywordTable), loadingLocal: { LocalTagStore(parsing: bytes) })
        tags.revision = (Int64(String(decoding: try reader.metadata(IndexSchema.Metadata.revision), as: UTF8.self)) ?? 0) + 1
        let uuid = String(decoding: try reader.metadata(IndexSchema.Metadata.uuid), as: UTF8.self)
        let metadata = [
            (IndexSchema.Metadata.uuid, uuid.isEmpty ? UUID().uuidString.lowercased() : uuid),
            (IndexSchema.Metadata.keywords, renderedKeywordTable),
            (IndexSchema.Metadata.localTags, String(decoding: unchanged ? bytes : tags.local.rendered, as: UTF8.self)),
            (IndexSchema.Metadata.revision, String(tags.revision))
        ]
        guard try reader.documentCount > 0 else { return TagChanges(tags: tags, all: false, ids: [], metadata: metadata) }
        let keywords = String(decoding: try reader.metadata(IndexSchema.Metadata.keywords), as: UTF8.self)
        let all = keywords != renderedKeywordTable
        if unchanged { return TagChanges(tags: tags, all: all, ids: [], metadata: metadata) }
        let before = LocalTagStore(parsing: stored), local = tags.local
        return TagChanges(
            tags: tags, all: all,
            ids: Set(before.tagsByID.keys).union(local.tagsByID.keys).filter { before.tags(of: $0) != local.tags(of: $0) },
            metadata: metadata)
    }

    /// Rewrites the file terms of the documents `changes` names; returns how many.
    func retag(_ db: WritableXapianDatabase, _ reader: XapianDatabase, _ changes: TagChanges) throws -> Int {
        var count = 0
        if changes.all {
            let lastID = try reader.lastDocumentID
            if lastID > 0 {
                for docID in 1...lastID {
                    guard let doc = try? reader.document(docID) else { continue }  // a deleted document's id
                    if try retag(db, doc, tags: changes.tags) { count += 1 }
                }
            }
        } else {
            for id in changes.ids.sorted() {
                guard let doc = try reader.document(uniqueTerm: IndexSchema.Prefix.id + id) else { continue }
                if try retag(db, doc, tags: changes.tags) { count += 1 }
            }
        }
        return count
    }

    /// Recomputes one document's file terms (tags included) from its stored file list. False if it holds
    /// no message record.
    func retag(_ db: WritableXapianDatabase, _ doc: XapianDocument, tags: TagTerms) throws -> Bool {
        guard let record = MessageRecord(decoding: try doc.data()) else { return false }
        try DocumentTerms.setFileTerms(doc, id: record.id, files: record.files, tags: tags, fresh: false)
        try db.replaceDocument(uniqueTerm: IndexSchema.Prefix.id + record.id, with: doc)
        return true
    }
}

/// Messages waiting for the tag rules (`[[tag-rule]]`, applied by mo-index, not here): with
/// `recordsNewMessages`, every update of an existing index adds its new messages' ids to the
/// `mo-index-rules-pending` metadata in the commits that add the documents, and a later run drops the ids
/// named in `rulesApplied`. So a crash between indexing and tagging leaves the ids pending, and the next
/// update applies the rules again (a rule is idempotent). A new or rebuilt index records none: its mail
/// is not new, only not indexed yet.
extension IndexUpdater {
    static let rulesPendingKey = "mo-index-rules-pending"

    struct RulesPending {
        let recording: Bool
        /// Stored ids not in `rulesApplied`.
        let before: [String]
        /// The stored value.
        let stored: String

        func value(adding new: [String]) -> String { recording ? (before + new).joined(separator: "\n") : "" }
        func ids(adding new: [String]) -> [String] { recording ? before + new : [] }
    }

    func rulesPending(_ reader: XapianDatabase) throws -> RulesPending {
        let stored = String(decoding: try reader.metadata(Self.rulesPendingKey), as: UTF8.self)
        let existing = !(try reader.metadata(IndexSchema.Metadata.format)).isEmpty
        let before = stored.split(separator: "\n").map(String.init).filter { !rulesApplied.contains($0) }
        return RulesPending(recording: recordsNewMessages && existing, before: before, stored: stored)
    }
}
