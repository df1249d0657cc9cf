import Testing
import MoCore
import MoTestSupport
#if canImport(Glibc)
    import Glibc
#endif

/// The one flock helper (account lock, journal locks, index update lock).
@Suite struct FileLockTests {
    @Test func secondTakerIsRefusedUntilTheFirstLets() throws {
        let temp = TempDirectory(), dir = temp.path
        let path = dir + "/lock"
        var first = try FileLock(path: path)
        #expect(first != nil)
        #expect(FileLock.holder(path) == "\(getpid())")
        #expect(try FileLock(path: path) == nil)  // flock is per open file: refused here too
        let start = monotonicSeconds()
        #expect(try FileLock(path: path, wait: 0.2) == nil)  // waits, then gives up
        #expect(monotonicSeconds() - start >= 0.15)
        first = nil
        #expect(try FileLock(path: path) != nil)
    }

    @Test func modeAndFailures() throws {
        let temp = TempDirectory(), dir = temp.path
        _ = try FileLock(path: dir + "/index-lock", mode: 0o644)
        var st = stat()
        #expect(stat(dir + "/index-lock", &st) == 0 && st.st_mode & 0o777 == 0o644)
        let failure = #expect(throws: FileLock.Failure.self) { _ = try FileLock(path: dir + "/missing/lock") }
        #expect(failure?.operation == "open" && failure?.code == ENOENT)
        #expect(failure?.description.hasPrefix("cannot open: ") == true)
        #expect(FileLock.holder(dir + "/missing/lock") == "?")
    }
}
