import Foundation
import MoCore
import XapianKit

extension IndexUpdater {
    /// Re-packs the index into db.N+1 and switches to it (as after a full index), under the update lock;
    /// readers keep working. Incremental updates split the full blocks of a compacted database (Xapian's
    /// B-trees are copy-on-write and keyed by term, so a few new messages touch blocks everywhere): it
    /// settles near 2.5 times its compacted size. Returns the database's bytes before and after.
    public static func compact(indexPath: String) throws -> (before: Int64, after: Int64) {
        _ = try MailIndex(path: indexPath)  // exists, has a format this build reads
        let directory = try IndexDirectory(path: indexPath)
        defer { directory.unlock() }
        guard directory.isReplaceable else {
            throw GenericError(.data, "index \(quotedForMessage(indexPath)) has the old layout: run `mo-index update` to rebuild it")
        }
        let before = bytesInside(directory.currentPath)
        try xapianCompact([directory.currentPath], into: directory.nextPath)
        try directory.switchToNext()
        return (before, bytesInside(directory.currentPath))
    }

    /// The bytes of the files directly in `dir`.
    static func bytesInside(_ dir: String) -> Int64 {
        var total: Int64 = 0
        for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
            var st = stat()
            if stat(dir + "/" + name, &st) == 0 { total += Int64(st.st_blocks) * 512 }
        }
        return total
    }
}
