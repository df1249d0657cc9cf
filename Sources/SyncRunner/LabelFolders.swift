#if canImport(Glibc)
    import Glibc
#endif
import Maildir
import MoCore

/// A message's other memberships shown as folders, without a second copy of its messages: Gmail mode's
/// label folders (`gmail-label-folders`, `Labels/<label>`, docs/gmail.md) and a JMAP account's mailbox
/// folders (`jmap-mailbox-folders`, `Mailboxes/<path>`, docs/jmap.md), one model for both. Each is a Maildir
/// of symbolic links (`SymlinkFolder`) to the files of the synced folders whose tags hold the label (or
/// mailbox), remade after a run from those files (which the run has just made agree with the server). What
/// a mail client did there comes back at the start of the next run, before the synced folders are read, so
/// that run carries it to the server (the table says Gmail; a JMAP mailbox alike):
///
/// | in the label folder                  | at the start of the run               | on Gmail              |
/// |--------------------------------------|---------------------------------------|-----------------------|
/// | a flag set or cleared on a link (S F R P) | the message's own file takes it  | the flag              |
/// | a link deleted                       | the message's own file loses the tag  | the label removed; the message stays |
/// | a file saved there (not a link)      | left alone, with a note               | nothing               |
///
/// Invariants:
/// - Only symbolic links are ever removed from a label folder.
/// - T (deleted) never goes to the message's own file: a client would purge that file itself.
/// - A link is known to have been deleted only from the folder's record of the last refresh (`mo-links`:
///   per line a unique part, a tab, the letters S F R P its file had then); without the record (a label
///   folder removed by hand, a first run, a refresh cut short: it is removed first and written last), or
///   with a `cur/` or `new/` that cannot be read, nothing is taken away, and the folder is remade.
struct LabelFolders {
    struct Label {
        let tag: String
        let path: String
        let display: String
    }
    let labels: [Label]
    /// The synced folders, whose files the links point to.
    let sources: [MaildirFolder]
    let vocabulary: TagVocabulary

    static let recordName = "mo-links"
    /// The letters a link carries back to its message's file.
    static let carried: MaildirFlags = [.seen, .flagged, .replied, .passed]

    /// Carries what was done in the label folders since the last refresh to the messages' own files.
    /// Returns whether any file changed, and notes (files saved in a label folder).
    func carryBack() throws -> (changed: Bool, notes: [String]) {
        var notes: [String] = []
        var flagChanges: [String: (add: MaildirFlags, remove: MaildirFlags)] = [:]
        var untagged: [(tag: String, unique: String)] = []
        for label in labels {
            // No record, or a folder that cannot be read (removed by hand but for its record): nothing taken away.
            guard let record = Self.loadRecord(label.path), let (links, files) = SymlinkFolder.read(label.path) else { continue }
            if !files.isEmpty {
                notes.append(
                    "\(label.display): \(files.count) file(s) saved here are not links to messages and stay local "
                        + "(label a message with mo-index tag +\(quotedForMessage(label.tag)))")
            }
            var present = Set<String>()
            for link in links {
                guard let name = try? MaildirFilename(parsing: link.name), let was = record[name.unique] else { continue }
                present.insert(name.unique)
                let now = name.flags.intersection(Self.carried)
                if now != was { flagChanges[name.unique] = (now.subtracting(was), was.subtracting(now)) }
            }
            for unique in record.keys where !present.contains(unique) { untagged.append((label.tag, unique)) }
        }
        let wanted = Set(flagChanges.keys).union(untagged.map(\.unique))
        guard !wanted.isEmpty else { return (false, notes) }
        // Each message's file as it is now, one scan of each synced folder for all of them, kept current
        // through the renames below (a message may have a flag changed and a label taken off).
        var files: [String: (folder: MaildirFolder, path: String, flags: MaildirFlags)] = [:]
        for folder in sources where folder.exists {
            for entry in try MaildirScanner.scan(folder, only: wanted).entries {
                files[entry.name.unique] = (folder, entry.path, entry.name.flags)
            }
        }
        func renamed(_ unique: String, to path: String) {
            guard let file = files[unique], path != file.path else { return }
            let name = try? MaildirFilename(parsing: String(path.split(separator: "/").last ?? ""), separator: file.folder.separator)
            files[unique] = (file.folder, path, name?.flags ?? file.flags)
        }
        var changed = false
        for (unique, change) in flagChanges {
            guard let file = files[unique] else { continue }
            let flags = file.flags.union(change.add).subtracting(change.remove)
            if flags != file.flags {
                renamed(unique, to: try file.folder.setFlags(path: file.path, flags: flags))
                changed = true
            }
        }
        for (tag, unique) in untagged {
            guard let file = files[unique] else { continue }
            renamed(unique, to: try MaildirTags.remove(tag, fromFileAt: file.path, in: file.folder, vocabulary: vocabulary))
            changed = true
        }
        return (changed, notes)
    }

    /// Whether some label folder has no record (a first run, one removed by hand, a refresh cut short) or no
    /// readable `cur/` and `new/`: then it is made again.
    var needsRefresh: Bool { labels.contains { Self.loadRecord($0.path) == nil || SymlinkFolder.read($0.path) == nil } }

    /// Remakes every label folder from the synced folders' files: a link per message whose tags hold the
    /// label, named as its file; other links removed; the record written last.
    func refresh() throws {
        let tags = Set(labels.map(\.tag))
        var wanted: [String: [String: String]] = [:]  // tag → unique → the file
        for folder in sources where folder.exists {
            let table = try MaildirKeywords.load(folder: folder.path)
            let extra = try ExtraKeywords.load(folder: folder.path, lenient: true)
            for entry in try MaildirScanner.scan(folder).entries {
                var has = MaildirTags.tags(of: entry.name.flags, keywords: table, vocabulary: vocabulary)
                for keyword in extra.keywords(of: entry.name.unique) { has.insert(vocabulary.tag(forKeyword: keyword)) }
                for tag in has.intersection(tags) { wanted[tag, default: [:]][entry.name.unique] = entry.path }
            }
        }
        for label in labels {
            try SymlinkFolder.prepare(label.path)
            // The record goes first and comes back last: a refresh cut in between (or failing) leaves no record,
            // which takes nothing away, and the next run remakes the folder (`needsRefresh`).
            Self.removeRecord(label.path)
            let desired = wanted[label.tag] ?? [:]
            var kept = Set<String>()
            for link in SymlinkFolder.read(label.path)?.links ?? [] {
                guard let name = try? MaildirFilename(parsing: link.name), let path = desired[name.unique], link.target == path,
                    link.name == Self.linkName(path), kept.insert(name.unique).inserted
                else {
                    SymlinkFolder.unlink(link.path)
                    continue
                }
            }
            var record: [String: MaildirFlags] = [:]
            for (unique, path) in desired {
                let name = Self.linkName(path)
                if !kept.contains(unique) { try SymlinkFolder.link(label.path, name: name, to: path) }
                record[unique] = ((try? MaildirFilename(parsing: name))?.flags ?? []).intersection(Self.carried)
            }
            try Self.saveRecord(record, label.path)
        }
    }

    /// A link's name: its file's, with the `:2,` that names in cur/ carry.
    static func linkName(_ path: String) -> String {
        let name = String(path.split(separator: "/").last ?? "")
        return name.contains(":2,") ? name : name + ":2,"
    }

    static func loadRecord(_ folder: String) -> [String: MaildirFlags]? {
        guard case .success(let bytes) = readWholeFile(folder + "/" + recordName) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        var record: [String: MaildirFlags] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, let flags = MaildirFlags(letters: String(parts[1])) else { continue }
            record[String(parts[0])] = flags
        }
        return record
    }

    static func removeRecord(_ folder: String) {
        _ = unlink(folder + "/" + recordName)
    }

    static func saveRecord(_ record: [String: MaildirFlags], _ folder: String) throws {
        let text = record.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value.letters)\n" }.joined()
        if case .failure(let e) = replaceFileAtomically(folder + "/" + recordName, Array(text.utf8)) {
            throw MaildirError("cannot write", folder + "/" + recordName, code: e.code)
        }
    }
}
