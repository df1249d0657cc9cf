#if canImport(Glibc)
    import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

@Suite struct DirectoryWatchTests {
    @Test func seesCreateRenameAndDeleteThenNothing() throws {
        let temp = TempDirectory(), dir = temp.path
        mkdir(dir + "/cur", 0o700)
        let watch = try DirectoryWatch()
        #expect((try? watch.add(dir + "/cur").get()) != nil)
        #expect((try? watch.add(dir + "/cur").get()) != nil)  // twice is one watch
        #expect(!watch.wait(seconds: 0))

        let fd = open(dir + "/cur/a", O_WRONLY | O_CREAT, 0o600)
        close(fd)
        #expect(rename(dir + "/cur/a", dir + "/cur/a:2,S") == 0)
        #expect(unlink(dir + "/cur/a:2,S") == 0)
        #expect(watch.wait(seconds: 5))
        let batch = watch.drain()
        // create, close-write, moved-from, moved-to, delete (one watch, so no doubles)
        #expect(batch == DirectoryWatch.Batch(events: 5, overflowed: false))
        #expect(!watch.wait(seconds: 0.05))
        #expect(watch.drain().events == 0)
    }

    @Test func aMissingDirectoryIsReportedAndADeletedOneDropsOut() throws {
        let temp = TempDirectory(), dir = temp.path
        let watch = try DirectoryWatch()
        guard case .failure(let e) = watch.add(dir + "/nope") else { Issue.record("watched a missing directory"); return }
        #expect(e.description.contains("cannot watch \(dir)/nope"))
        mkdir(dir + "/new", 0o700)
        _ = watch.add(dir + "/new")
        #expect(rmdir(dir + "/new") == 0)
        _ = watch.wait(seconds: 1)
        #expect(watch.drain().events == 0)  // only IN_IGNORED: the watch ended, nothing to sync
    }
}
