import Foundation
import MoCore
import MoIndex

/// `--links DIR`: DIR becomes a Maildir whose cur/ holds one symlink per matching file, for a mail
/// client's "virtual folder". Only symlinks are ever removed from it, so pointing --links at a real
/// Maildir by mistake cannot delete mail.
enum LinkFolder {
    static func fill(_ dir: String, with messages: [IndexedMessage], index: MailIndex) throws {
        let fm = FileManager.default
        for sub in ["cur", "new", "tmp"] {
            do {
                try fm.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true)
            } catch {
                throw IndexError(.localIO, "--links: cannot create \(quotedForMessage(dir + "/" + sub)): \(error.localizedDescription)")
            }
        }
        for sub in ["cur", "new"] {
            for name in (try? fm.contentsOfDirectory(atPath: dir + "/" + sub)) ?? [] {
                let path = dir + "/" + sub + "/" + name
                if (try? fm.destinationOfSymbolicLink(atPath: path)) != nil { try? fm.removeItem(atPath: path) }
            }
        }
        var used = Set<String>()
        for m in messages {
            for file in m.record.files {
                let target = index.absolutePath(file)
                var name = IndexedFile(file).name.description
                if !name.contains(":2,") { name += ":2," }  // cur/ names carry info
                var unique = name
                var n = 1
                while !used.insert(unique).inserted { n += 1; unique = "\(n)-" + name }
                let link = dir + "/cur/" + unique
                if symlink(target, link) != 0 {
                    throw IndexError(.localIO, "--links: cannot create \(quotedForMessage(link)): \(errnoDescription(errno))")
                }
            }
        }
    }
}
