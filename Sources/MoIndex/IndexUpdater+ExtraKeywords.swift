import Maildir
import MoCore
import XapianKit

/// Tags beyond the 26 letters (`Maildir.ExtraKeywords`, a folder's `mo-keywords`) change without a rename.
/// Their writers move cur/'s time, so the folder is scanned; this step compares each scanned folder's file
/// with the copy the index recorded (`mo-index-extra-keywords`) and names the files whose lines changed,
/// for `retag`. New files read the current file when they are indexed (`TagTerms`).
extension IndexUpdater {
    static let extraKeywordsKey = "mo-index-extra-keywords"

    struct ExtraKeywordChanges {
        /// `XFILE:` terms of indexed files whose extra keywords changed.
        var fileTerms: [[UInt8]] = []
        var metadata: [(String, String)] = []
    }

    func extraKeywordChanges(_ changes: FolderChanges, _ reader: XapianDatabase) throws -> ExtraKeywordChanges {
        let stored = Self.decodeExtra(String(decoding: try reader.metadata(Self.extraKeywordsKey), as: UTF8.self))
        var current = stored
        var out = ExtraKeywordChanges()
        for (root, folder) in changes.foldersToScan {
            let indexFolder = root.indexPath(folder)
            let now = (try? ExtraKeywords.load(folder: DirectoryState.join(root.path, folder), lenient: true)) ?? ExtraKeywords()
            let before = stored[indexFolder] ?? ExtraKeywords()
            guard now != before else { continue }
            current[indexFolder] = now.isEmpty ? nil : now
            let uniques = Set(now.byUnique.keys).union(before.byUnique.keys).filter { now.keywords(of: $0) != before.keywords(of: $0) }
            for unique in uniques.sorted() {
                for sub in ["cur", "new"] {
                    let prefix = Array((IndexSchema.Prefix.file + DirectoryState.join(indexFolder, sub) + "/" + unique).utf8)
                    for (term, _) in try reader.allTerms(withPrefix: prefix) {
                        // The unique name whole: the next byte is the info separator, or none.
                        if term.count == prefix.count || term[prefix.count] == UInt8(ascii: ":") { out.fileTerms.append(term) }
                    }
                }
            }
        }
        if current != stored { out.metadata = [(Self.extraKeywordsKey, Self.encodeExtra(current))] }
        return out
    }

    /// Rewrites the file terms of the documents of `fileTerms`; returns how many.
    func retag(_ db: WritableXapianDatabase, _ reader: XapianDatabase, fileTerms: [[UInt8]], tags: TagTerms) throws -> Int {
        var count = 0
        for term in fileTerms {
            guard let doc = try reader.document(uniqueTerm: term), try retag(db, doc, tags: tags) else { continue }
            count += 1
        }
        return count
    }

    /// `FOLDER<TAB>UNIQUE<TAB>KEYWORD …` lines, each field percent-escaped.
    static func encodeExtra(_ byFolder: [String: ExtraKeywords]) -> String {
        var out = ""
        for folder in byFolder.keys.sorted() {
            let extra = byFolder[folder]!
            for unique in extra.byUnique.keys.sorted() {
                out +=
                    PercentEscape.escape(folder) + "\t" + PercentEscape.escape(unique) + "\t"
                    + extra.keywords(of: unique).sorted().map(PercentEscape.escape).joined(separator: " ") + "\n"
            }
        }
        return out
    }

    static func decodeExtra(_ text: String) -> [String: ExtraKeywords] {
        var out: [String: [String: Set<String>]] = [:]
        for line in text.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard f.count == 3, let folder = PercentEscape.unescape(f[0]), let unique = PercentEscape.unescape(f[1]) else { continue }
            out[folder, default: [:]][unique] = Set(f[2].split(separator: " ").compactMap { PercentEscape.unescape($0) })
        }
        return out.mapValues { ExtraKeywords($0) }
    }
}
