import Testing
import MoCore
import MoTestSupport

/// Hostile mailbox names and UID bookkeeping (issue #14).
extension HostileServerTests {
    /// Names that are not UTF-8, that climb or start at /, 250 characters long, 100 levels deep: INBOX and
    /// the long and deep ones sync, the others are refused each with a note naming it, nothing leaves the root.
    @Test func hostileMailboxNames() throws {
        let deep = Array(repeating: "a", count: 100).joined(separator: "/")
        let long = String(repeating: "L", count: 250)
        var boxes: [MailStore.Mailbox] = [.init("INBOX", messages: Self.messages("in", 1...1))]
        for (i, name) in [
            [0xFF, 0xFE, 0x78], Array("../x".utf8), Array("/etc".utf8), Array("a/../../b".utf8),
            Array(long.utf8), Array(deep.utf8)
        ].enumerated() {
            boxes.append(.init(bytes: name, messages: Self.messages("box\(i)", 1...1)))
        }
        let server = try ScriptedIMAPServer(mailboxes: boxes)
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try run.files("INBOX").count == 1 && run.files(long).count == 1 && run.files(deep).count == 1)
        for name in ["\u{FFFD}\u{FFFD}x", "../x", "/etc", "a/../../b"] {
            #expect(r.lines.contains { $0.hasPrefix("  note: ") && $0.contains(name) }, "no note names \(name): \(r.stderrString)")
        }
        #expect(try run.strayPaths() == [])
        #expect(try ChildProcess.run(["find", run.maildir, "-name", "etc"]).stdoutString.isEmpty)
        let again = try run.sync()
        #expect(again.status == 0, "\(again.stderrString)")
    }

    /// 100,000 mailboxes in LIST: parsed and filtered within the bound, the patterns' note stays one line.
    @Test func listOfAHundredThousandMailboxes() throws {
        var lines: [UInt8] = Array("* LIST () \"/\" INBOX\r\n".utf8)
        for i in 0..<100_000 { lines += Array("* LIST () \"/\" box-\(i)\r\n".utf8) }
        let list = lines
        let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX", messages: Self.messages("in", 1...2))]) { r in
            r.verb == "LIST" ? [.send(list + Array("\(r.tag) OK done\r\n".utf8))] : nil
        }
        let run = try ScriptedRun(server, account: "folders = [\"INBOX\"]")
        defer { run.remove() }
        let r = try run.sync(bound: 60)
        #expect(r.status == 0, "\(r.stderrString.prefix(600))")
        #expect(try run.files("INBOX").count == 2)
        #expect(r.lines.allSatisfy { $0.count < 400 }, "\(r.stderrString.prefix(600))")
        #expect(
            r.lines.contains(
                "  note: skipped by the folders patterns: box-0, box-1, box-10, box-100, box-1000, box-10000, "
                    + "box-10001, box-10002, box-10003, box-10004 and 99990 more"), "\(r.stderrString.prefix(600))")
    }

    /// New UIDs below ones already synced (UIDs going backwards) are fetched; nothing is deleted.
    @Test func uidsGoingBackwards() throws {
        let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX", messages: Self.messages("in", 5...7))])
        let run = try ScriptedRun(server)
        defer { run.remove() }
        #expect(try run.sync().status == 0)
        server.store.modify { $0[0].messages = Self.messages("low", 2...3) + $0[0].messages }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try run.files("INBOX").count == 5)
    }

    /// Every UID renumbered lower under the same UIDVALIDITY (a server that lost its UID list, against RFC 3501
    /// 2.3.1.1): the mail stays, byte for byte. (Today the files are deleted and fetched again under new names;
    /// docs/reliability.md lists it as a known limit.)
    @Test func uidsRenumberedLower() throws {
        let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX", messages: Self.messages("in", 5...7))])
        let run = try ScriptedRun(server)
        defer { run.remove() }
        #expect(try run.sync().status == 0)
        let before = try run.bodies("INBOX")
        server.store.modify { box in
            box[0].messages = box[0].messages.map {
                var m = $0; m.uid -= 4; return m
            }
        }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try run.bodies("INBOX") == before)
        #expect(try run.sync().status == 0)
        #expect(try run.bodies("INBOX") == before)
    }

    /// The same UID twice in a listing and in a body FETCH: one file, and the next run changes nothing.
    @Test func duplicateUIDs() throws {
        let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX", messages: Self.messages("in", 1...3))]) { r in
            guard r.verb == "UID FETCH" else { return nil }
            // A second UID 2, other flags and body, before the true answer.
            let twin = MailStore.fetchResponse(
                seq: 2, MailStore.message(2, subject: "twin", flags: "\\Seen"),
                items: r.argumentText.uppercased())
            return [.send(twin), .standard]
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        let files = try run.files("INBOX")
        #expect(files.count == 3, "\(files)")
        let again = try run.sync()
    }
}

extension HostileServerTests {
    /// SELECT's UIDNEXT below the UIDs it holds: every message is still fetched, and a later lower UIDNEXT
    /// deletes nothing.
    @Test func uidNextLying() throws {
        let lie = Hostility()
        let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX", messages: Self.messages("in", 4...6))]) { r in
            guard r.verb == "SELECT" || r.verb == "EXAMINE" else { return nil }
            return [
                .text("* 3 EXISTS\r\n* OK [UIDVALIDITY 1] ok\r\n* OK [UIDNEXT \(lie.on ? 2 : 1)] ok\r\n\(r.tag) OK [READ-WRITE] done\r\n")
            ]
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try run.files("INBOX").count == 3)
        lie.end()
        let again = try run.sync()
        #expect(try run.files("INBOX").count == 3)
    }

    /// UIDVALIDITY changes between runs and at every SELECT of one run: no duplicate, nothing lost.
    @Test func uidValidityChanging() throws {
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders())
        let run = try ScriptedRun(server)
        defer { run.remove() }
        #expect(try run.sync().status == 0)
        server.store.modify { $0[0].uidValidity = 2 }
        let r = try run.sync()
        let (inbox, other) = (try run.files("INBOX"), try run.files("Other"))
        #expect(inbox.count == 3 && other.count == 3, "\(inbox) \(other)")

        // A server whose every SELECT names another UIDVALIDITY: the folder selected twice in a run (INBOX:
        // listed, then re-selected to finish) fails with a clear line each run; Other syncs; nothing is sent up.
        let flipping = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            guard r.verb == "SELECT" || r.verb == "EXAMINE" else { return nil }
            let v = UInt32.random(in: 10...1_000_000)
            return [.text("* 3 EXISTS\r\n* OK [UIDVALIDITY \(v)] ok\r\n* OK [UIDNEXT 4] ok\r\n\(r.tag) OK [READ-WRITE] done\r\n")]
        }
        let fresh = try ScriptedRun(flipping)
        defer { fresh.remove() }
        for _ in 0..<2 {
            let f = try fresh.sync()
            #expect(f.status == 75, "\(f.stderrString)")
            #expect(
                f.lines.first
                    == "INBOX: failed: imap 127.0.0.1:\(flipping.port): unexpected response: UIDVALIDITY of INBOX changed during the run; it will be handled next run",
                "\(f.stderrString)")
            #expect(try fresh.files("Other").count == 3 && fresh.files("INBOX").count <= 3)
            #expect(flipping.store.mailboxes.map(\.messages.count) == [3, 3], "messages were uploaded")
        }
    }

    /// FETCH responses for UIDs never asked for (a body and flags of UID 99 with every FETCH that does not
    /// ask for all) are not stored.
    @Test func fetchForUIDsNeverAskedFor() throws {
        let server = try ScriptedIMAPServer(mailboxes: Self.twoFolders()) { r in
            guard r.verb == "UID FETCH" && !r.argumentText.hasPrefix("1:*") else { return nil }
            let stranger = MailStore.fetchResponse(seq: 9, MailStore.message(99, subject: "stranger"), items: r.argumentText.uppercased())
            return [.send(stranger), .standard]
        }
        let run = try ScriptedRun(server)
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 0, "\(r.stderrString)")
        #expect(try run.files("INBOX").count == 3 && run.files("Other").count == 3)
        #expect(try ChildProcess.run(["grep", "-rl", "stranger", run.maildir]).stdoutString.isEmpty)
        let again = try run.sync()
        #expect(again.status == 0, "\(again.stderrString)")
        #expect(try run.files("INBOX").count == 3)
    }
}
