import Foundation
import Maildir
import MoCore
import XapianKit

/// Steps 1 and 2 of an update: which folders changed since the index recorded them, and how their files
/// differ from the files the index holds. Nothing is written here.
extension IndexUpdater {
    /// Step 1's result.
    struct FolderChanges {
        var foldersToScan: [(root: IndexRoot, folder: String)] = []
        /// Recorded cur/ or new/ directories that are gone: every file the index has under them went.
        var goneDirectories: [(root: String, relative: String)] = []
        /// `mo-index-dirs` to record: the unchanged entries and the relisted hierarchies (step 2 adds the
        /// scanned folders).
        var directories = DirectoryState()

        var isEmpty: Bool { foldersToScan.isEmpty && goneDirectories.isEmpty }
    }

    /// Step 2's result.
    struct FileDiff {
        /// `mo-index-dirs` to record, the scanned folders' directories included.
        let directories: DirectoryState
        /// New files (not renames), in index path order.
        let added: [ParallelParser.Job]
        /// Old index path → new index path.
        let renames: [String: String]
        /// Index paths of files that went.
        let removals: [String]
    }

    /// Step 1: stats every recorded directory (a no-op update does only this) and relists the roots whose
    /// hierarchy changed (or every root, on a full scan).
    func changedFolders(_ start: UpdateStart, into summary: inout UpdateSummary) -> FolderChanges {
        let stored = start.directories
        let fullScan = start.fullScan
        var changes = FolderChanges()
        var relist = Set<String>()  // root names
        if fullScan {
            relist = Set(roots.map(\.name))
            for entry in stored.entries.values where entry.kind == .messages {
                changes.goneDirectories.append((entry.root, entry.relative))
            }
        } else {
            var changedFolders = Set<String>()
            for (key, entry) in stored.entries {
                guard let root = roots.first(where: { $0.name == entry.root }) else { continue }
                let mtime = DirectoryState.mtime(DirectoryState.join(root.path, entry.relative), followingLinks: root.allFiles)
                if mtime == entry.mtime { changes.directories.entries[key] = entry; continue }
                switch entry.kind {
                case .hierarchy: relist.insert(root.name)
                case .messages:
                    if mtime == nil { changes.goneDirectories.append((root.name, entry.relative)); relist.insert(root.name) }
                    // In an all-files root a folder's directory is the folder, and may hold new directories.
                    if root.allFiles { relist.insert(root.name) }
                    let folder = root.allFiles ? entry.relative : DirectoryState.folder(ofMessageDirectory: entry.relative)
                    if changedFolders.insert(DirectoryState.key(root.name, folder)).inserted, mtime != nil {
                        changes.foldersToScan.append((root, folder))
                    }
                }
            }
        }
        for root in roots where relist.contains(root.name) {
            let listing = FolderWalker.listFolders(root, ignore: ignore)
            log("\(root.path): \(listing.folders.count) folders")
            summary.warnings += listing.warnings
            // An all-files root's directories are all folders: their entries are `.messages`, set as they are scanned.
            for h in listing.hierarchy where !root.allFiles {
                if let m = DirectoryState.mtime(DirectoryState.join(root.path, h)) {
                    changes.directories.set(.init(mtime: m, kind: .hierarchy, root: root.name, relative: h))
                }
            }
            let present = Set(listing.folders.flatMap { root.messageDirectories(of: $0) })
            for (_, entry) in stored.entries
            where entry.root == root.name && entry.kind == .messages
                && !present.contains(entry.relative) && !fullScan
            {
                changes.goneDirectories.append((root.name, entry.relative))
                changes.directories.entries[DirectoryState.key(root.name, entry.relative)] = nil
            }
            for folder in listing.folders {
                let known = root.messageDirectories(of: folder).contains { stored.entries[DirectoryState.key(root.name, $0)] != nil }
                if fullScan || !known, !changes.foldersToScan.contains(where: { $0.root == root && $0.folder == folder }) {
                    changes.foldersToScan.append((root, folder))
                }
            }
        }
        // A full scan (a new or rebuilt index) is never cut short: what it did not record, no later
        // update would look at.
        if let only = onlyFolders, !fullScan {
            // Only these folders this time: the others' changes wait, unrecorded, for the next update.
            for (root, folder) in changes.foldersToScan where !only.contains(folder) {
                // Their old entries stay recorded, so the next update sees them changed.
                for rel in root.messageDirectories(of: folder) {
                    if let old = stored.entries[DirectoryState.key(root.name, rel)] {
                        changes.directories.entries[DirectoryState.key(root.name, rel)] = old
                    }
                }
            }
            if changes.foldersToScan.contains(where: { !only.contains($0.folder) }) {
                // A folder not scanned may be new: the hierarchies keep their old times, so it is listed again.
                for (key, entry) in stored.entries where entry.kind == .hierarchy { changes.directories.entries[key] = entry }
            }
            changes.foldersToScan.removeAll { !only.contains($0.folder) }
            let inScope = { (relative: String) in only.contains { relative == $0 || relative.hasPrefix($0 + "/") } }
            for gone in changes.goneDirectories where !inScope(gone.relative) {
                // Still recorded, so the next update finds it gone and removes its files.
                let key = DirectoryState.key(gone.root, gone.relative)
                if let old = stored.entries[key] { changes.directories.entries[key] = old }
            }
            changes.goneDirectories.removeAll { !inScope($0.relative) }
        }
        return changes
    }

    /// Step 2: reads the changed folders' file names (readdir only) and diffs them with the `XFILE:` terms
    /// under them and under the gone directories.
    func scanAndDiff(_ changes: FolderChanges, _ reader: XapianDatabase, into summary: inout UpdateSummary) throws
        -> FileDiff
    {
        var directories = changes.directories
        var onDisk: [String: String] = [:]  // index path -> absolute path
        var inIndex = Set<String>()
        for (root, folder) in changes.foldersToScan {
            let messageDirectories = root.messageDirectories(of: folder)
            summary.scannedDirectories += messageDirectories.count
            for rel in messageDirectories {
                if let m = DirectoryState.mtime(DirectoryState.join(root.path, rel), followingLinks: root.allFiles) {
                    directories.set(.init(mtime: m, kind: .messages, root: root.name, relative: rel))
                }
                try storedFiles(reader, root.indexPath(rel), into: &inIndex, allFiles: root.allFiles)
            }
            for rel in messageDirectories.reversed() {
                var broken: [String] = []
                let names = FolderWalker.files(
                    DirectoryState.join(root.path, rel), allFiles: root.allFiles, ignore: root.allFiles ? ignore : nil, relative: rel,
                    warnings: &summary.warnings, brokenLinks: &broken)
                summary.brokenLinks += broken
                summary.warnings += broken.map { "\(quotedForMessage($0)): a symbolic link to nothing; passed over" }
                guard let names else { continue }
                for name in names { onDisk[root.indexPath(Self.child(rel, name))] = DirectoryState.join(root.path, rel) + "/" + name }
            }
        }
        for (root, relative) in changes.goneDirectories {
            let prefix =
                roots.first { $0.name == root }?.indexPath(relative)
                ?? (root.isEmpty ? relative : root + "/" + relative)
            try storedFiles(reader, prefix, into: &inIndex)
        }

        // A placeholder filled since (same name, new content): a removal and a new file, indexed again.
        let filled = try filledPlaceholders(reader, onDisk: onDisk)
        inIndex.subtract(filled)
        var added = onDisk.keys.filter { !inIndex.contains($0) }.sorted()
        let gone = inIndex.filter { onDisk[$0] == nil }.sorted()
        // A gone file whose unique name reappears is the same file renamed.
        var addedByUnique: [String: [String]] = [:]
        for path in added { addedByUnique[renameKey(path), default: []].append(path) }
        var renames: [String: String] = [:]
        var removals: [String] = []
        for path in gone {
            let key = renameKey(path)
            if var candidates = addedByUnique[key], !candidates.isEmpty {
                renames[path] = candidates.removeFirst()
                addedByUnique[key] = candidates
            } else {
                removals.append(path)
            }
        }
        let renamedTargets = Set(renames.values)
        added.removeAll { renamedTargets.contains($0) }
        return FileDiff(
            directories: directories,
            added: added.map { ParallelParser.Job(absolutePath: onDisk[$0]!, indexPath: $0, userHeaders: userHeaders) },
            renames: renames, removals: removals + filled.sorted())
    }

    /// The files of `onDisk` (scanned folders) indexed as placeholders (`XIS:placeholder`) that are one no
    /// longer. Placeholders are few: their documents are looked up by the term, and only their files read.
    private func filledPlaceholders(_ reader: XapianDatabase, onDisk: [String: String]) throws -> Set<String> {
        let term = IndexSchema.Prefix.state + "placeholder"
        let count = try reader.termFrequency(term)
        guard count > 0, !onDisk.isEmpty else { return [] }
        var filled = Set<String>()
        let skip = IndexSchema.Prefix.file.utf8.count
        for match in try reader.search(XapianQuery(term: term), limit: count).matches {
            for t in try reader.document(match.documentID).terms(withPrefix: IndexSchema.Prefix.file) {
                let path = String(decoding: t.dropFirst(skip), as: UTF8.self)
                if let absolute = onDisk[path], Placeholder.size(ofFile: absolute) == nil { filled.insert(path) }
            }
        }
        return filled
    }

    /// Renames are matched within a root by Maildir unique name.
    func renameKey(_ path: String) -> String {
        let root = roots.first { !$0.name.isEmpty && path.hasPrefix($0.name + "/") }?.name ?? ""
        return root + "\u{0}" + IndexedFile(path).unique
    }

    /// The `XFILE:` terms under a directory, as index paths. In an all-files root only the directory's
    /// own files (its subdirectories are folders of their own), and the root's own directory is "".
    private func storedFiles(_ reader: XapianDatabase, _ directory: String, into set: inout Set<String>, allFiles: Bool = false) throws {
        let prefix = IndexSchema.Prefix.file + (directory.isEmpty && allFiles ? "" : directory + "/")
        let skip = IndexSchema.Prefix.file.utf8.count
        for (term, _) in try reader.allTerms(withPrefix: prefix) {
            let path = String(decoding: term.dropFirst(skip), as: UTF8.self)
            if allFiles && path.utf8.dropFirst(prefix.utf8.count - skip).contains(UInt8(ascii: "/")) { continue }
            set.insert(path)
        }
    }

    /// A file of directory `relative` (an all-files root's own files sit at "").
    static func child(_ relative: String, _ name: String) -> String { relative.isEmpty ? name : relative + "/" + name }
}
