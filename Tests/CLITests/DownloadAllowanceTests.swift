import Foundation
import Testing
import MoCore
import MoTestSupport
import Synchronization

/// Issue 26 item 3: an initial sync larger than the daily download allowance stops cleanly before it (or at
/// the server's OVERQUOTA refusal), exit 75 with a line saying what is left, and later runs go on with
/// nothing lost and nothing downloaded twice.
@Suite struct DownloadAllowanceTests {
    static func server(_ script: @escaping ScriptedIMAPServer.Script = { _ in nil }) throws -> ScriptedIMAPServer {
        try ScriptedIMAPServer(
            mailboxes: [.init("INBOX", messages: (1...40).map { MailStore.message(UInt32($0), subject: "m\($0)") })], script: script)
    }

    @Test func stopsAtTheAllowanceAndGoesOnTheNextDay() throws {
        let server = try Self.server()
        let run = try ScriptedRun(server, account: "[account.t.sync]\ndaily-download = \"2K\"")
        defer { run.remove() }
        let perDay = 2048 / server.store.mailboxes[0].messages.map(\.body.count).min()!
        var seen = 0, day = 0
        while seen < 40 && day < 10 {
            day += 1
            let r = try run.sync()
            let files = try run.files("INBOX").count
            if files < 40 {
                #expect(r.status == 75, "day \(day): \(r.stderrString)")
                #expect(r.stderrString.contains("daily download allowance (2 KB in 24 hours) is spent; \(40 - files) new message(s) left"))
                // The same day again: nothing more, and nothing lost.
                let again = try run.sync()
                let after = try run.files("INBOX").count
                #expect(again.status == 75 && after == files)
            } else {
                #expect(r.status == 0, "\(r.stderrString)")
            }
            #expect(files > seen && files - seen <= perDay, "day \(day): \(files)")
            if day == 1 {  // newest first
                let bodies = try run.bodies("INBOX").joined()
                #expect(bodies.contains("Body of m40.") && !bodies.contains("Body of m1."))
            }
            seen = files
            // A day passes.
            unlink(run.stateDirectory + "/t/downloads")
        }
        #expect(seen == 40)
        #expect(Set(try run.bodies("INBOX")).count == 40)  // each once
    }

    @Test func theServersOverquotaStopsTheRunCleanly() throws {
        let refuse = Atomic<Bool>(true)
        let server = try Self.server { request in
            guard refuse.load(ordering: .relaxed), request.verb == "UID FETCH", request.lineText.uppercased().contains("BODY.PEEK[]") else {
                return nil
            }
            return [.text("\(request.tag) NO [OVERQUOTA] Account exceeded command or bandwidth limits. (Failure)\r\n")]
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 75, "\(r.stderrString)")
        #expect(r.stderrString.contains("OVERQUOTA") && r.stderrString.contains("40 new message(s) left"), "\(r.stderrString)")
        #expect(try run.files("INBOX").isEmpty)
        // Its day over (the run counted the allowance spent only when one is set: none here).
        refuse.store(false, ordering: .relaxed)
        let next = try run.sync()
        #expect(next.status == 0, "\(next.stderrString)")
        #expect(Set(try run.bodies("INBOX")).count == 40)
        #expect(try run.files("INBOX").count == 40)
    }
}
