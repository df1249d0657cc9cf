import MoCore

extension FileLock {
    /// A journal lock (`MoCore.FileLock`), its failures as `JournalError`s naming the file.
    static func journal(_ path: String, wait: Double) throws(JournalError) -> FileLock? {
        do { return try FileLock(path: path, wait: wait) } catch {
            throw JournalError(file: path, problem: error.description, kind: .localIO)
        }
    }
}
