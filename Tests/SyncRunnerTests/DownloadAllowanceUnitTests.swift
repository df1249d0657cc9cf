import Testing
@testable import SyncRunner

/// `DownloadAllowance`: which bound a run keeps to, and what fits.
@Suite struct DownloadAllowanceUnitTests {
    @Test func theBoundARunKeepsTo() {
        #expect(DownloadAllowance.make(configured: nil, gmail: false, directory: "/nonexistent") == nil)
        #expect(DownloadAllowance.make(configured: nil, gmail: true, directory: "/nonexistent")?.limit == 2_300 << 20)
        #expect(DownloadAllowance.make(configured: 0, gmail: true, directory: "/nonexistent") == nil)  // "0": none
        #expect(DownloadAllowance.make(configured: 5 << 20, gmail: false, directory: "/nonexistent")?.limit == 5 << 20)
    }

    @Test func takesInOrderWhatFitsAndCountsItAcrossInstances() throws {
        let dir = TempDirectory()
        let a = DownloadAllowance(limit: 100, directory: dir.path)
        #expect(try a.take([40, 40, 40]) == 2)
        #expect(try a.take([30], all: true) == 0)  // all or nothing: 20 left
        #expect(try a.take([20]) == 1)
        #expect(try DownloadAllowance(limit: 100, directory: dir.path).take([1]) == 0)  // the next run: spent
        let b = DownloadAllowance(limit: 1000, directory: dir.path)
        b.spendAll()
        #expect(try b.take([1]) == 0 && b.isSpent)
        // One message larger than the whole allowance goes alone on a day with nothing downloaded.
        let dir2 = TempDirectory()
        let c = DownloadAllowance(limit: 100, directory: dir2.path)
        #expect(try c.take([150, 10]) == 1)
        #expect(try c.take([150]) == 0)
    }
}
