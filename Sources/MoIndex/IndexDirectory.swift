#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import MoCore

/// The index directory's layout (format 2), and the update lock:
///
///     XAPIANDB   Xapian stub file naming the current database: "glass db.N"
///     db.N/      the current glass database
///     lock       flock held by the one updater for its whole run
///     build.K/   shards of a full index being built; db.N+1/: a compacted database being written
///
/// Readers open the directory and Xapian follows the stub. Replacing the database (a compacted copy after a
/// full index) writes db.N+1 beside db.N, fsyncs it, renames a new stub over XAPIANDB, then removes db.N:
/// a reader or a crash sees the old or the new database, both complete and committed; a reader that still
/// has db.N open keeps reading its unlinked files. Other db.* and build.* entries are leftovers of a crashed
/// run; the next updater removes them, under the lock.
///
/// A directory with glass files in it directly (format 1, before this layout) is opened as it is; readers
/// refuse it (format check) and `update` starts over (`startOver`), which moves it to this layout.
final class IndexDirectory {
    let path: String
    /// The current database's generation N (db.N); 0 for the old layout.
    private(set) var generation: Int
    private var lock: FileLock?

    static let stubName = "XAPIANDB"

    /// False for a format-1 directory, which is never replaced.
    var isReplaceable: Bool { generation > 0 }

    /// Takes the update lock and settles the layout (a new index gets an empty db.1 and its stub; leftovers
    /// go). Throws `.busy` when another updater holds the lock.
    init(path: String) throws {
        self.path = path
        generation = 0
        if let e = makeDirectories(path) {
            throw GenericError(.localIO, "cannot create the index directory \(quotedForMessage(path)): \(errnoDescription(e))")
        }
        let taken: FileLock?
        // A moment's wait: a process starting a child can hold a copy of the lock's file description until
        // the child's exec closes it (O_CLOEXEC), which a second updater must not read as a running update.
        do { taken = try FileLock(path: path + "/lock", mode: 0o644, wait: 1) } catch {
            throw GenericError(.localIO, "cannot \(error.operation) \(quotedForMessage(path + "/lock")): \(errnoDescription(error.code))")
        }
        guard let taken else {
            throw GenericError(.busy, "index \(quotedForMessage(path)) is being updated by another process; try again when it finishes")
        }
        lock = taken
        if FileManager.default.fileExists(atPath: path + "/iamglass") { return }  // format 1
        if let n = Self.readStub(path) {
            generation = n
        } else {
            generation = 1
            try? FileManager.default.removeItem(atPath: databasePath(1))
            try writeStub(1)
        }
        removeLeftovers()
    }

    deinit { unlock() }

    /// Makes an empty database current, for an update that rebuilds an index of an older format (derived
    /// data). With the stub layout the switch is atomic (readers see the old index, then an empty one);
    /// a format-1 directory loses its glass files first and gets the stub layout. The writer must be closed.
    func startOver() throws {
        if generation == 0 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            for name in names where name.hasSuffix(".glass") || name == "iamglass" || name == "flintlock" {
                if unlink(path + "/" + name) != 0 && errno != ENOENT {
                    throw GenericError(.localIO, "cannot remove \(quotedForMessage(path + "/" + name)): \(errnoDescription(errno))")
                }
            }
        }
        try? FileManager.default.removeItem(atPath: nextPath)  // created empty by the next writer
        try switchTo(generation + 1)
    }

    /// Releases the lock (also done when the process exits).
    func unlock() {
        lock = nil
    }

    func databasePath(_ n: Int) -> String { path + "/db.\(n)" }
    var currentPath: String { databasePath(generation) }
    var nextPath: String { databasePath(generation + 1) }
    func shardPath(_ k: Int) -> String { path + "/build.\(k)" }

    /// The generation the stub names ("glass db.N"), nil without a stub.
    static func readStub(_ path: String) -> Int? {
        guard case .success(let bytes) = readWholeFile(path + "/" + stubName) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("glass db."), let n = Int(text.dropFirst("glass db.".count)), n > 0 else { return nil }
        return n
    }

    private func writeStub(_ n: Int) throws {
        if case .failure(let e) = replaceFileAtomically(path + "/" + Self.stubName, Array("glass db.\(n)\n".utf8), mode: 0o644) {
            throw GenericError(.localIO, "cannot write \(quotedForMessage(path + "/" + Self.stubName)): \(e)")
        }
    }

    /// Makes db.N+1 (complete, committed, closed by its writer) the current database and removes db.N.
    func switchToNext() throws {
        try Self.syncTree(nextPath)
        try switchTo(generation + 1)
    }

    /// Points the stub at db.`next` and removes the current database (format 1, generation 0: its files
    /// are gone already).
    private func switchTo(_ next: Int) throws {
        try writeStub(next)  // the switch: atomic and durable
        let old = currentPath
        generation = next
        try? FileManager.default.removeItem(atPath: old)
        removeLeftovers()
    }

    /// Removes every db.* and build.* entry but the current database.
    func removeLeftovers() {
        guard isReplaceable, let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        let keep = "db.\(generation)"
        for name in names where name != keep && (name.hasPrefix("db.") || name.hasPrefix("build.")) {
            try? FileManager.default.removeItem(atPath: path + "/" + name)
        }
    }

    /// fsyncs every file of a database directory, then the directory (Xapian's compaction does not).
    static func syncTree(_ dir: String) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        for name in names {
            let fd = openRetrying(dir + "/" + name, O_RDONLY)
            guard fd >= 0 else { continue }
            let e = fsyncRetrying(fd)
            Glibc.close(fd)
            if let e { throw GenericError(.localIO, "cannot sync \(quotedForMessage(dir + "/" + name)): \(errnoDescription(e))") }
        }
        if let e = fsyncDirectoryEntries(dir) {
            throw GenericError(.localIO, "cannot sync \(quotedForMessage(dir)): \(errnoDescription(e))")
        }
    }
}
