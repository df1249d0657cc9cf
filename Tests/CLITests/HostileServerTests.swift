import Testing
import MoCore
import MoTestSupport
import Synchronization

/// Turns a script's hostility off for the rerun that must converge.
final class Hostility: Sendable {
    private let state = Mutex(true)
    var on: Bool { state.withLock { $0 } }
    func end() { state.withLock { $0 = false } }
}

/// Issue #14, "Hostile IMAP server": mo-sync against a `ScriptedIMAPServer` that lies, truncates, stalls or
/// floods. Every case ends in correct handling or one clear error line with a sysexits code; never a crash or
/// a hang (each run is bounded), nothing written outside the Maildir root, nothing local deleted by mistake,
/// and the other folders synced where the case concerns one folder. docs/reliability.md lists the outcomes.
@Suite struct HostileServerTests {
    static func messages(_ tag: String, _ uids: ClosedRange<UInt32>) -> [MailStore.Message] {
        uids.map { MailStore.message($0, subject: "\(tag)-\($0)") }
    }

    /// INBOX and Other, three messages each.
    static func twoFolders() -> [MailStore.Mailbox] {
        [.init("INBOX", messages: messages("in", 1...3)), .init("Other", messages: messages("other", 1...3))]
    }

    /// The run's last stderr line is its one error line, naming the server.
    static func expectOneErrorLine(
        _ r: ChildProcess.Result, status: Int32, containing text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(r.status == status, "status \(r.status): \(r.stderrString)", sourceLocation: sourceLocation)
        #expect(r.lines.last?.contains(text) == true, "\(r.stderrString)", sourceLocation: sourceLocation)
        #expect(r.lines.allSatisfy { $0.count < 400 }, "a line too long: \(r.stderrString.prefix(500))", sourceLocation: sourceLocation)
    }

    @Test func aCorrectServerSyncs() throws {
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders())
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try run.files("INBOX").count == 3 && run.files("Other").count == 3)
        #expect(try run.strayPaths() == [])
        let again = try run.sync()
        #expect(again.status == 0, "\(again.stderrString)")
    }

    /// A nested mailbox whose parent does not exist (`Lists/dev` without `Lists`), the parent listed
    /// `\NonExistent` (RFC 5258: implies `\Noselect`; Dovecot with LIST-EXTENDED may say it): mo-sync and
    /// mo-sync-check both pass the parent over and exit 0.
    @Test func aNonExistentParentIsNotSelected() throws {
        let server = try ScriptedIMAPServer(mailboxes: [
            .init("INBOX", messages: Self.messages("in", 1...2)), .init("Lists/dev", messages: Self.messages("dev", 1...2))
        ]) { r in
            guard r.verb == "LIST" else { return nil }
            return [
                .text(
                    "* LIST (\\HasNoChildren) \"/\" INBOX\r\n* LIST (\\NonExistent \\HasChildren) \"/\" Lists\r\n"
                        + "* LIST (\\HasNoChildren) \"/\" Lists/dev\r\n\(r.tag) OK done\r\n")
            ]
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try run.files("Lists/dev").count == 2)
        let check = try ChildProcess.run([TestPaths.binDirectory + "/mo-sync-check", "--config", run.config])
        #expect(check.status == 0, "\(check.stdoutString)\(check.stderrString)")
        #expect(!server.receivedText.contains("EXAMINE Lists\r") && !server.receivedText.contains("SELECT Lists\r"))
    }

    @Test func malformedListIsAProtocolError() throws {
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            r.verb == "LIST" ? [.text("* LIST ((( \"/\" INBOX\r\n\(r.tag) OK done\r\n")] : nil
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        Self.expectOneErrorLine(try run.sync(), status: 76, containing: "127.0.0.1:\(server.port)")
        #expect(try run.strayPaths() == [])
    }

    /// Garbage in one folder's listing fails that folder alone: the connection is replaced and Other syncs.
    @Test func malformedFetchInOneFolder() throws {
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            r.verb == "UID FETCH" && r.argumentText.hasPrefix("1:*") && r.connection == 0
                ? [.text("* 1 FETCH (UID one FLAGS ())\r\n\(r.tag) OK done\r\n")] : nil
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 75, "\(r.stderrString)")
        #expect(
            r.lines == [
                "INBOX: failed: imap 127.0.0.1:\(server.port): bad response: malformed server response: expected number, found \"o\" at offset 251"
            ],
            "\(r.stderrString)")
        #expect(try run.files("Other").count == 3)
        #expect(try run.strayPaths() == [])
    }

    /// A server that garbles every folder costs a bounded number of logins, then ends the run.
    @Test func malformedFetchInEveryFolder() throws {
        let boxes = (1...6).map { MailStore.Mailbox("box\($0)", messages: Self.messages("b\($0)", 1...1)) }
        let server = try ScriptedIMAPServer(mailboxes: boxes) { r in
            r.verb == "UID FETCH" ? [.text("* 1 FETCH (UID one FLAGS ())\r\n\(r.tag) OK done\r\n")] : nil
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        Self.expectOneErrorLine(r, status: 76, containing: "bad response")
        // The first and three replacements; a listing helper opened before the first malformed response
        // (`ListingPlan`, after INBOX) is one more, and stops at its first.
        #expect((4...5).contains(server.connections), "\(server.connections) connections")
    }

    @Test func truncatedBodyThenClose() throws {
        let hostile = Hostility()
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            hostile.on && r.verb == "UID FETCH" && r.argumentText.contains("BODY")
                ? [.text("* 1 FETCH (UID 1 BODY[] {500}\r\nFrom: a@example.com\r\nSubj"), .close] : nil
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        Self.expectOneErrorLine(r, status: 75, containing: "127.0.0.1:\(server.port)")
        let partial = try ChildProcess.run(["grep", "-rl", "Subj$", run.maildir])
        #expect(partial.stdoutString.isEmpty, "a truncated body was delivered: \(partial.stdoutString)")
        // The next run, against a server that behaves, converges.
        hostile.end()
        let rerun = try run.sync()
        #expect(rerun.status == 0, "\(rerun.stderrString)")
        #expect(try run.files("INBOX").count == 3 && run.files("Other").count == 3)
        #expect(try run.strayPaths() == [])
    }

    @Test func truncatedLineThenClose() throws {
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            r.verb == "SELECT" ? [.text("* 3 EXI"), .close] : nil
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        Self.expectOneErrorLine(try run.sync(), status: 75, containing: "127.0.0.1:\(server.port)")
    }

    @Test func literalLargerThanMemory() throws {
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            r.verb == "UID FETCH" && r.argumentText.contains("BODY") ? [.text("* 1 FETCH (UID 1 BODY[] {99999999999}\r\nxx"), .stall] : nil
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        Self.expectOneErrorLine(r, status: 76, containing: "literal of 99999999999 bytes")
    }

    @Test func endlessContinuationRequests() throws {
        let flood = Array(repeating: Array("+ more\r\n".utf8), count: 200_000).flatMap { $0 }
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            r.verb == "SELECT" || r.verb == "EXAMINE" ? [.send(flood), .stall] : nil
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 75, "\(r.stderrString)")
        #expect(
            r.lines.first
                == "INBOX: failed: imap 127.0.0.1:\(server.port): unexpected response: continuation request where none was expected",
            "\(r.stderrString)")
    }

    @Test func neverAnswersAfterTheGreeting() throws {
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { _ in [.stall] }
        let run = try ScriptedRun(server, timeout: "2s")
        defer { run.remove() }
        let r = try run.sync(bound: 30)
        Self.expectOneErrorLine(r, status: 75, containing: "127.0.0.1:\(server.port)")
        #expect(r.stderrString.contains("timed out"), "\(r.stderrString)")
    }

    @Test func byeMidFetch() throws {
        let hostile = Hostility()
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            guard hostile.on && r.verb == "UID FETCH" && r.argumentText.contains("BODY") else { return nil }
            let first = MailStore.fetchResponse(seq: 1, MailStore.message(1, subject: "in-1"), items: "UID BODY[]")
            return [.send(first), .text("* BYE shutting down\r\n"), .close]
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        Self.expectOneErrorLine(r, status: 75, containing: "shutting down")
        hostile.end()
        let rerun = try run.sync()
        #expect(rerun.status == 0, "\(rerun.stderrString)")
        let inbox = try run.files("INBOX"), other = try run.files("Other")
        #expect(inbox.count == 3 && other.count == 3, "\(inbox) \(other) \(r.stderrString) \(rerun.stderrString)")
    }
}
