import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue 26: a Gmail-mode sync killed at every step (`MO_CRASH_AT`, `_exit(137)` as after kill -9) with
/// changes on both sides pending, then run again: nothing lost, nothing doubled, and the same end as a run
/// never killed (each message once across the views, the new local one uploaded once, every label change
/// made). With Trash and Spam synced (`gmail-folders`) too: a message trashed on the web, one moved to
/// Trash here and one restored from it, each moved as a file.
@Suite(.serialized) struct GmailModeCrashTests {
    typealias Account = GmailModeTests.Account

    /// Changes on both sides: archived, labelled, trashed and new on the web; moved, flagged, deleted and
    /// new in the Maildir.
    static func change(_ a: Account, trash: Bool) throws {
        let root = a.run.maildir
        let inbox = a.model.messages.filter { $0.labels == ["\\Inbox"] || $0.labels == ["\\Inbox", "\\Important"] }
        let archived = a.model.messages.filter { $0.labels.isEmpty }
        a.model.webChange { m in
            m[inbox[0].id]!.labels.remove("\\Inbox")
            m[archived[0].id]!.labels.insert("later")
            m[inbox[1].id]!.labels.insert("\\Trash")  // Gmail keeps a trashed message's labels
        }
        a.model.deliver(
            labels: ["\\Inbox"],
            body: Array("From: a@example.com\r\nSubject: web new\r\nMessage-ID: <web-new@gmail.test>\r\n\r\nHi.\r\n".utf8))
        func local(_ id: UInt64) throws -> String {
            let wanted = GmailModeTests.messageID(a.model.messages.first { $0.id == id }!.body)
            for view in ["INBOX", "Sent", "Archive", "Trash"] {
                for f in try a.files(view)
                where GmailModeTests.messageID(Array(try Data(contentsOf: URL(fileURLWithPath: root + "/" + view + "/" + f)))) == wanted {
                    return view + "/" + f
                }
            }
            throw GenericError(.data, "no local file for \(wanted)")
        }
        let moving = try local(inbox[2].id)
        #expect(rename(root + "/" + moving, root + "/Archive/cur/" + moving.split(separator: "/").last!) == 0)
        let flagging = try local(archived[1].id)
        let unique = flagging.split(separator: "/").last!.split(separator: ":").first!
        #expect(rename(root + "/" + flagging, root + "/Archive/cur/" + unique + ":2,FS") == 0)
        if trash {
            let trashing = try local(archived[2].id), restoring = try local(a.model.messages.last { $0.labels.contains("\\Trash") }!.id)
            #expect(rename(root + "/" + trashing, root + "/Trash/cur/" + trashing.split(separator: "/").last!) == 0)
            #expect(rename(root + "/" + restoring, root + "/INBOX/cur/" + restoring.split(separator: "/").last!) == 0)
        }
        let sent = try #require(try a.files("Sent").first)
        #expect(unlink(root + "/Sent/" + sent) == 0)
        try writePrivateFile(
            root + "/INBOX/new/1800000000.local-new.host",
            "From: me@example.com\nSubject: local new\nMessage-ID: <local-new@example.com>\n\nHello.\n")
    }

    /// The server's messages by Message-ID: labels and flags.
    static func serverView(_ a: Account) -> [String: String] {
        var out: [String: String] = [:]
        for m in a.model.messages { out[GmailModeTests.messageID(m.body)] = "\(m.labels.sorted()) \(m.flags.sorted())" }
        return out
    }

    /// The Message-IDs of the local files, each after its folder's name (duplicates kept).
    static func localIDs(_ a: Account) throws -> [String] {
        var ids: [String] = []
        for view in ["INBOX", "Sent", "Drafts", "Archive", "Trash", "Spam"] {
            for f in try a.files(view) {
                let body = Array(try Data(contentsOf: URL(fileURLWithPath: a.run.maildir + "/" + view + "/" + f)))
                ids.append(view + " " + GmailModeTests.messageID(body))
            }
        }
        return ids.sorted()
    }

    /// What one list of local ids has that the other lacks, and the reverse.
    static func difference(_ got: [String], _ expected: [String]) -> String {
        "extra \(got.filter { !expected.contains($0) }), missing \(expected.filter { !got.contains($0) })"
    }

    static func prepared(cut: CutGate? = nil, trash: Bool) throws -> Account {
        let a = try Account(12, sync: trash ? "gmail-folders = [\"Trash\", \"Spam\"]" : "", cut: cut)
        _ = try a.sync()
        try change(a, trash: trash)
        return a
    }

    @Test(arguments: [false, true]) func killedAtEveryStepConverges(trash: Bool) throws {
        // The end a run never killed reaches, and the number of steps on the way.
        let reference = try Self.prepared(trash: trash)
        defer { reference.run.remove(); reference.index.remove() }
        let listed = try reference.run.sync(env: ["MO_CRASH_AT": "list"])
        #expect(listed.status == 0, "\(listed.stderrString)")
        let steps = listed.stderrString.split(separator: "\n").filter { $0.hasPrefix("crash-point ") }.count
        #expect(steps >= 10, "\(listed.stderrString)")
        _ = try reference.sync()
        _ = try reference.sync()  // a deletion here reaches the synced Trash one run later (docs/gmail.md)
        let expectedServer = Self.serverView(reference)
        let expectedLocal = try Self.localIDs(reference)
        #expect(Set(expectedLocal.map { $0.split(separator: " ").last! }).count == expectedLocal.count)
        #expect(expectedServer["<local-new@example.com>"] != nil && expectedLocal.contains("INBOX <web-new@gmail.test>"))

        for k in 1...steps {
            let a = try Self.prepared(trash: trash)
            defer { a.run.remove(); a.index.remove() }
            let crashed = try a.run.sync(env: ["MO_CRASH_AT": String(k)])
            #expect(crashed.status == 137, "step \(k) of \(steps): \(crashed.stderrString)")
            _ = try a.sync()
            _ = try a.sync()
            #expect(a.model.messages.count == reference.model.messages.count, "step \(k): a message lost or doubled on the server")
            #expect(Self.serverView(a) == expectedServer, "step \(k)")
            let local = try Self.localIDs(a)
            #expect(local == expectedLocal, "step \(k): \(Self.difference(local, expectedLocal))")
            let checked = try a.check()
            #expect(checked.status == 0, "step \(k): \(checked.stdoutString)")
        }
    }

    /// The same changes, the connection cut at each command of the run in turn (as a network cut does),
    /// then two runs: the same end as a run never cut.
    @Test(arguments: [false, true]) func cutAtEveryCommandConverges(trash: Bool) throws {
        let gate = CutGate()
        let reference = try Self.prepared(cut: gate, trash: trash)
        defer { reference.run.remove(); reference.index.remove() }
        gate.arm(at: .max)
        _ = try reference.sync()
        let commands = gate.disarm()
        #expect(commands >= 10)
        _ = try reference.sync()
        _ = try reference.sync()
        let expectedServer = Self.serverView(reference)
        let expectedLocal = try Self.localIDs(reference)

        for k in 1...commands {
            let a = try Self.prepared(cut: gate, trash: trash)
            defer { a.run.remove(); a.index.remove() }
            gate.arm(at: k)
            let cut = try a.run.sync()
            _ = gate.disarm()
            #expect(cut.status != 0 || k == commands, "command \(k) of \(commands): \(cut.stderrString)")
            _ = try a.sync()
            _ = try a.sync()
            #expect(Self.serverView(a) == expectedServer, "cut at command \(k)")
            let local = try Self.localIDs(a)
            #expect(local == expectedLocal, "cut at command \(k): \(Self.difference(local, expectedLocal))")
            let checked = try a.check()
            #expect(checked.status == 0, "cut at command \(k): \(checked.stdoutString)")
        }
    }
}
