import Foundation
import Maildir
import MoCore
import MoIndex

/// `--links DIR`: DIR becomes a Maildir whose cur/ holds one symlink per matching file, for a mail
/// client's "virtual folder" (`SymlinkFolder`: only symlinks are ever removed from it, so pointing --links
/// at a real Maildir by mistake cannot delete mail).
enum LinkFolder {
    /// The file as it is now: the indexed path, or, when a mail client renamed it since the last update
    /// (a flag change: same unique name, other letters), the file of that unique name in its folder; nil
    /// when it is gone. So a link never dangles and shows the flags the message has now.
    static func currentFile(_ path: String, _ name: Substring) -> (path: String, name: String)? {
        if access(path, F_OK) == 0 { return (path, String(name)) }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 2, let parsed = try? MaildirFilename(parsing: String(name)) else { return nil }
        let folder = MaildirFolder(path: parts.dropLast(2).joined(separator: "/"))
        guard let entry = try? MaildirScanner.scan(folder, only: [parsed.unique]).entries.first else { return nil }
        return (entry.path, String(entry.path.split(separator: "/").last ?? ""))
    }

    static func fill(_ dir: String, with messages: [IndexedMessage], index: MailIndex) throws {
        do {
            try SymlinkFolder.prepare(dir)
            for link in SymlinkFolder.read(dir)?.links ?? [] { SymlinkFolder.unlink(link.path) }
            var used = Set<String>()
            for m in messages {
                for file in m.record.files {
                    guard let (target, current) = currentFile(index.absolutePath(file), IndexedFile(file).name) else { continue }
                    var name = current
                    if !name.contains(":2,") { name += ":2," }  // cur/ names carry info
                    var unique = name
                    var n = 1
                    while !used.insert(unique).inserted { n += 1; unique = "\(n)-" + name }
                    try SymlinkFolder.link(dir, name: unique, to: target)
                }
            }
        } catch {
            throw GenericError(.localIO, "--links: \(error.description)")
        }
    }
}
