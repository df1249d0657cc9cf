/// The disk fills while FETCH bodies are written (issue #14): the first error names the full disk, the run
/// ends with EX_IOERR, the IMAP connection is not reused out of step (no folder fails with another's
/// completion), and a rerun with space converges, nothing lost or duplicated.
@Suite struct DiskFullTests {
    @Test func diskFullIsNamedAndTheRerunConverges() throws {
        let f = try SyncFixture()
        // `WriteFault`: body writes fail with ENOSPC after 20 kB, inside the first folder's FETCH.
        let full = try f.runBinary(environment: ["MO_FAULT_ENOSPC_AFTER": "20000"])
        let lines = full.stderrString.split(separator: "\n").map(String.init)
        #expect(full.status == 74, "\(full.stderrString)")
        let failed = lines.filter { $0.contains(": failed: ") }
        #expect(failed.count >= 2, "every folder with mail to fetch fails, each for itself: \(lines)")
        for line in failed {
            #expect(line.contains(": failed: disk full: cannot write ") && line.hasSuffix(": No space left on device"), "\(line)")
        }
        #expect(!full.stderrString.contains("tag"), "a connection reused out of step: \(full.stderrString)")

        let rerun = try f.runBinary()
        #expect(rerun.status == 0, "\(rerun.stderrString)")
        let report = try SyncChecker.check(account: f.account, config: f.config)
        #expect(report.ok, "\(report.problems.joined(separator: "; "))")
        // Nothing left in tmp/ by the failed writes.
        let leftovers = try ChildProcess.run(["find", f.maildir, "-path", f.maildir + "/*/tmp/*", "-type", "f"])
        #expect(leftovers.stdoutString.isEmpty, "\(leftovers.stdoutString)")
    }

    /// The disk fills while the sync state is written (`WriteFault`: journal appends cut mid-entry, then
    /// state files), early (the first folder's journal) or later (some folders committed): each folder that
    /// meets it fails naming the file, exit 74; a rerun with space converges, its torn entries cut.
    @Test(arguments: [200, 3000])
    func diskFullWhileTheStateIsWrittenIsNamedAndTheRerunConverges(budget: Int) throws {
        let f = try SyncFixture()
        let full = try f.runBinary(environment: ["MO_FAULT_ENOSPC_STATE_AFTER": String(budget)])
        let lines = full.stderrString.split(separator: "\n").map(String.init)
        #expect(full.status == 74, "\(full.stderrString)")
        let failed = lines.filter { $0.contains(": failed: ") }
        #expect(!failed.isEmpty && failed.count == lines.count, "one line per failed folder: \(lines)")
        for line in failed {
            #expect(
                line.contains(": failed: disk full: ") && (line.contains(".journal: ") || line.contains(".state: "))
                    && line.hasSuffix(": cannot write: No space left on device"),
                "\(line)")
        }
        let rerun = try f.runBinary()
        #expect(rerun.status == 0, "\(rerun.stderrString)")
        let report = try SyncChecker.check(account: f.account, config: f.config)
        #expect(report.ok, "\(report.problems.joined(separator: "; "))")
        #expect(try f.runBinary().status == 0)
    }
}
