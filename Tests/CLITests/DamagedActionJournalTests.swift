#if canImport(Glibc)
    import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

/// Issue #14: a damaged action journal (docs/reliability.md, "Bad local state"). Reading it is strict, so
/// every command that reads it fails with one `FILE:LINE` line, exit 65, and nothing acts on it; a new
/// message is still queued (appending reads no record), and once the line is corrected everything queued
/// is there. Uses the mo-sendmail suite's fixture with a closed SMTP port (the outage as mo sees it).
@Suite struct DamagedActionJournalTests {
    @Test func aDamagedLineIsNamedAndTheQueueIsIntactOnceItIsFixed() throws {
        let t = try Fixture(smtpPort: closedLoopbackPort())
        defer { t.remove() }
        let path = t.dir.path + "/state/actions.journal"
        #expect(mkdir(t.dir.path + "/state", 0o700) == 0)
        guard case .success = replaceFileAtomically(path, Array("mo-actions 1\nsl2k3a-0x9f3kqp send bogus\u{1B}[2J -\n".utf8)) else {
            Issue.record("cannot write the journal"); return
        }
        let token = Fixture.token()
        let queued = try t.sendmail(["-oem", "-oi", "--", "rcpt@mo.test"], t.message(token: token))
        #expect(queued.status == 0, "\(queued.stderrString)")
        #expect(queued.stderrString.hasPrefix("mo-sendmail: queued: "), "\(queued.stderrString)")

        let before = t.journalLines()
        for args in [["--queue"], ["--flush"]] {
            let r = try t.sendmail(args)
            #expect(r.status == 65, "\(args): \(r.stderrString)")
            #expect(r.stderrString == "mo-sendmail: \(path):2: unknown state \"bogus\\u{1B}[2J\"\n", "\(args)")
        }
        #expect(t.journalLines() == before, "nothing rewritten or compacted")

        // The recovery: delete (or correct) the named line.
        #expect(before[1].hasPrefix("sl2k3a-0x9f3kqp "))
        let fixed = before.enumerated().filter { $0.offset != 1 }.map { $0.element + "\n" }.joined()
        guard case .success = replaceFileAtomically(path, Array(fixed.utf8)) else { Issue.record("cannot fix"); return }
        let queue = try t.sendmail(["--queue"])
        #expect(queue.status == 0, "\(queue.stderrString)")
        #expect(queue.stdoutString.contains("send queued to rcpt@mo.test \"\(token)\""), "\(queue.stdoutString)")
    }
}
