import Foundation
import JMAPClient
import MoCore
import MoHTTP
import MoTestSupport
import Testing

/// Issue 27: a JMAP account mirrored to Maildir both ways, against the private Cyrus of scripts/test-cyrus
/// (its own instance per test). The views INBOX, Sent, Drafts, Archive, Trash and Junk; a message in
/// several mailboxes stored once, its other mailboxes as tags; moves carried as moves (nothing downloaded
/// again); deletions to Trash; uploads imported once.
@Suite(.serialized, .enabled(if: CyrusTestServer.usable)) struct JMAPSyncTests {
    /// One test's Cyrus, client, Maildir and config.
    final class Account {
        let server: CyrusTestServer
        let client: JMAPClient
        let dir = TempDirectory("mo-jmap")
        var boxes: [String: String] = [:]

        /// `smtp`: where Cyrus relays what it is asked to send (a private Postfix's plain port).
        init(blobGet: Bool = false, sync: String = "", smtp: String? = nil) throws {
            server = try CyrusTestServer.start(blobGet: blobGet, smtp: smtp)
            client = try JMAPClient(
                sessionURL: WebAddress(server.sessionURL)!, authorization: JMAPClient.basic(user: server.user, password: server.password))
            _ = try client.call([
                JMAPCall(
                    "Mailbox/set",
                    .object([
                        ("accountId", .string(client.session.accountID)),
                        (
                            "create",
                            .object([
                                ("l", .object([("name", "Lists")])), ("s", .object([("name", "Sent"), ("role", "sent")])),
                                ("t", .object([("name", "Trash"), ("role", "trash")]))
                            ])
                        )
                    ]), id: "c")
            ])
            for b in try client.mailboxes().mailboxes { boxes[b.name] = b.id }
            dir.write(
                "mo.toml",
                """
                [general]
                state-dir = "\(dir.path)/state"
                index-dir = "\(dir.path)/index"
                [account.cy]
                address = "mo@example.org"
                maildir = "\(dir.path)/Mail"
                [account.cy.jmap]
                url = "\(server.sessionURL)"
                user = "\(server.user)"
                password-command = "echo \(server.password)"
                [account.cy.sync]
                \(sync)
                """)
            chmod(dir.path + "/mo.toml", 0o600)
        }

        deinit {
            client.close()
            server.stop()
        }

        func message(_ n: Int, subject: String? = nil) -> [UInt8] {
            Array(
                ("From: a@example.org\r\nTo: mo@example.org\r\nSubject: \(subject ?? "test \(n)")\r\nMessage-ID: <t\(n)@example.org>\r\n"
                    + "Date: Sat, 28 Nov 2026 04:00:00 +0000\r\n\r\nbody \(n)\r\n").utf8)
        }

        @discardableResult
        func seed(_ n: Int, in names: [String], keywords: Set<String> = []) throws -> String {
            try client.importEmail(blobID: client.upload(message(n)), mailboxIDs: Set(names.map { boxes[$0]! }), keywords: keywords).id
        }

        func sync() throws -> ChildProcess.Result {
            let r = try CLITests.run("mo-sync", ["--config", dir.path + "/mo.toml", "-v"])
            #expect(r.status == 0, "\(r.stdoutString) \(r.stderrString)")
            return r
        }

        /// mo-sync-check: the server against the Maildir, message by message.
        func check() throws {
            let r = try CLITests.run("mo-sync-check", ["--config", dir.path + "/mo.toml"])
            #expect(r.status == 0 && r.stdoutString.contains(": OK ("), "\(r.stdoutString) \(r.stderrString)")
        }

        /// Every local message: subject → (folder, file name).
        func local() -> [String: [(folder: String, name: String)]] {
            var out: [String: [(String, String)]] = [:]
            for folder in ["INBOX", "Sent", "Drafts", "Archive", "Trash", "Junk"] {
                for sub in ["cur", "new"] {
                    for name in dir.list("Mail/\(folder)/\(sub)") {
                        let text = dir.read(dir.path + "/Mail/\(folder)/\(sub)/\(name)") ?? ""
                        let subject =
                            text.components(separatedBy: "\n").first { $0.hasPrefix("Subject: ") }.map { String($0.dropFirst(9)) } ?? "?"
                        out[subject, default: []].append((folder, sub + "/" + name))
                    }
                }
            }
            return out
        }

        /// Every server Email: subject → (mailbox names, keywords).
        func remote() throws -> [String: (boxes: Set<String>, keywords: Set<String>)] {
            for b in try client.mailboxes().mailboxes { boxes[b.name] = b.id }
            let names = Dictionary(uniqueKeysWithValues: boxes.map { ($0.value, $0.key) })
            let (_, ids) = try client.allEmailIDs()
            var out: [String: (Set<String>, Set<String>)] = [:]
            _ = try client.get(ids, properties: ["subject", "mailboxIds", "keywords"]) { item in
                guard let subject = item["subject"]?.stringValue, case .object(let b)? = item["mailboxIds"],
                    case .object(let k)? = item["keywords"]
                else { return }
                #expect(out[subject] == nil, "\(subject) twice on the server")
                out[subject] = (Set(b.map { names[$0.0] ?? $0.0 }), Set(k.map(\.0)))
            }
            return out
        }

        func id(_ subject: String) throws -> String {
            let (_, ids) = try client.allEmailIDs()
            var found: String?
            _ = try client.get(ids, properties: ["id", "subject"]) { item in
                if item["subject"]?.stringValue == subject { found = item["id"]?.stringValue }
            }
            return try #require(found)
        }
    }

    /// `-v` lines go to standard error.
    static func fetched(_ r: ChildProcess.Result) -> Int { r.stderrString.components(separatedBy: "fetched UID").count - 1 }

    /// Bodies downloaded one blob a GET (pipelined), or many a `Blob/get` where the server offers it.
    @Test(arguments: [false, true])
    func initialNoOpServerAndLocalChanges(blobGet: Bool) throws {
        let a = try Account(blobGet: blobGet)
        try a.seed(0, in: ["Inbox"], keywords: ["$seen"])
        try a.seed(1, in: ["Inbox", "Lists"])
        try a.seed(2, in: ["Lists"], keywords: ["$seen", "$flagged"])
        try a.seed(3, in: ["Sent"])
        try a.seed(4, in: ["Inbox"])
        try a.seed(5, in: ["Inbox"])

        // Initial: each message once, in the folder its mailboxes place it in; its other mailboxes a tag.
        let first = try a.sync()
        #expect(Self.fetched(first) == 6, "\(first.stderrString)")
        #expect(a.client.session.blobCapability == (blobGet ? "https://cyrusimap.org/ns/jmap/blob" : nil))
        var local = a.local()
        #expect(local.values.allSatisfy { $0.count == 1 }, "\(local) \(a.dir.list("Mail")) \(a.dir.list("Mail/INBOX/new"))")
        #expect(local["test 0"]?.first?.folder == "INBOX" && local["test 0"]?.first?.name.hasSuffix(":2,S") == true)
        #expect(local["test 1"]?.first?.folder == "INBOX" && local["test 1"]?.first?.name.hasSuffix(":2,a") == true)
        #expect(local["test 2"]?.first?.folder == "Archive" && local["test 2"]?.first?.name.hasSuffix(":2,FSa") == true)
        #expect(local["test 3"]?.first?.folder == "Sent")
        #expect(a.dir.read(a.dir.path + "/Mail/INBOX/dovecot-keywords") == "0 Lists\n")
        // Bytes as the server has them, with the Maildir's line ends (LF).
        let file = a.dir.path + "/Mail/INBOX/" + local["test 4"]![0].name
        #expect(a.dir.read(file) == String(decoding: a.message(4), as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"))
        try a.check()

        // No-op: nothing fetched, nothing changed, one HTTP request (the session is kept from the last run).
        for _ in 0..<2 {
            let r = try a.sync()
            #expect(Self.fetched(r) == 0 && !r.stderrString.contains("uploaded"))
            #expect(r.stderrString.contains("cy: 1 HTTP request(s)"), "\(r.stderrString)")
        }
        // A kept session whose API address moved: fetched again, and the run goes on.
        let kept = a.dir.path + "/state/cy/jmap-session"
        let text = try #require(a.dir.read(kept))
        try text.replacingOccurrences(of: "\"apiUrl\":\"/jmap/\"", with: "\"apiUrl\":\"/jmap/moved/\"").write(
            toFile: kept, atomically: true, encoding: .utf8)
        let refreshed = try a.sync()
        #expect(Self.fetched(refreshed) == 0 && refreshed.stderrString.contains("cy: 3 HTTP request(s)"), "\(refreshed.stderrString)")
        #expect(a.dir.read(kept) == text)

        // Server changes: a keyword, a move out of Inbox (kept in Lists: Archive), a destroy, a new message.
        _ = try a.client.setEmails(
            update: [
                (try a.id("test 3"), .object([("keywords/$flagged", true)])),
                (try a.id("test 4"), .object([("mailboxIds", .object([(a.boxes["Lists"]!, .bool(true))]))]))
            ], destroy: [try a.id("test 5")])
        try a.seed(6, in: ["Inbox"])
        let r = try a.sync()
        #expect(Self.fetched(r) == 1, "only the new message is downloaded: \(r.stderrString)")
        // The changes and their Emails in one request, the counts brought forward from the last run's, and
        // the new message's body in a second.
        #expect(r.stderrString.contains("cy: 2 HTTP request(s)"), "\(r.stderrString)")
        local = a.local()
        #expect(local["test 3"]?.first?.name.hasSuffix(":2,F") == true)
        #expect(local["test 4"]?.map(\.folder) == ["Archive"])
        #expect(local["test 5"] == nil)
        #expect(local["test 6"]?.map(\.folder) == ["INBOX"])
        try a.check()

        // A flag changed here alone: pushed as a keyword; the run after is the one-request no-op (the last
        // run's own keyword changes moved the mark past themselves).
        let three = try #require(local["test 3"]?.first)
        let sentRoot = a.dir.path + "/Mail/Sent/"
        #expect(
            rename(sentRoot + three.name, sentRoot + "cur/" + three.name.split(separator: "/").last!.split(separator: ":").first! + ":2,FS")
                == 0)
        let flagged = try a.sync()
        #expect(flagged.stderrString.contains("cy: 2 HTTP request(s)"), "\(flagged.stderrString)")
        #expect(try a.remote()["test 3"]?.keywords == ["$flagged", "$seen"])
        let quiet = try a.sync()
        #expect(
            quiet.stderrString.contains("cy: 1 HTTP request(s)"),
            "\(quiet.stderrString) \(a.dir.read(a.dir.path + "/state/cy/jmap-mark") ?? "")")
        local = a.local()

        // Local changes: read, a move to Archive, a deletion, a new message.
        let root = a.dir.path + "/Mail/"
        let six = try #require(local["test 6"]?.first)
        #expect(rename(root + "INBOX/" + six.name, root + "INBOX/cur/" + six.name.split(separator: "/").last! + ":2,S") == 0)
        let one = try #require(local["test 1"]?.first)
        #expect(rename(root + "INBOX/" + one.name, root + "Archive/" + one.name) == 0)
        let zero = try #require(local["test 0"]?.first)
        #expect(unlink(root + "INBOX/" + zero.name) == 0)
        a.dir.write(
            "Mail/INBOX/cur/1795838700.M1P1.vm:2,S",
            String(decoding: a.message(7, subject: "test 7"), as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"))
        let pushed = try a.sync()
        #expect(pushed.stderrString.contains("uploaded"))
        var remote = try a.remote()
        #expect(remote["test 6"]?.keywords == ["$seen"])
        // Archive had no mailbox on this Cyrus: the move made one, with the archive role.
        #expect(remote["test 1"]?.boxes == ["Lists", "Archive"])
        #expect(remote["test 0"]?.boxes == ["Trash"])
        #expect(remote["test 7"]?.boxes == ["Inbox"] && remote["test 7"]?.keywords == ["$seen"])
        #expect(remote.count == 7)

        // Converged: the next runs change nothing on either side but the trashed message's file in Trash.
        _ = try a.sync()
        let settled = a.local()
        #expect(settled.values.allSatisfy { $0.count == 1 }, "\(settled)")
        #expect(settled["test 0"]?.map(\.folder) == ["Trash"])
        let again = try a.sync()
        #expect(Self.fetched(again) == 0 && !again.stderrString.contains("uploaded"))
        remote = try a.remote()
        #expect(remote.count == 7)
        try a.check()
    }

    /// A view's record lost (its state cut at a line end) while the counts are brought forward from the last
    /// run's: the view's state then holds fewer messages than the server had at the mark, so the pairs do
    /// not add up; the run lists nothing whole on a look at the changes alone, and the next run lists every
    /// Email and pairs the message again by key: nothing downloaded or imported twice.
    @Test func aLostRecordIsFoundWhenTheCountsAreBroughtForward() throws {
        let a = try Account()
        for n in 0..<3 { try a.seed(n, in: ["Inbox"]) }
        _ = try a.sync()
        _ = try a.sync()
        let state = a.dir.path + "/state/cy/~jmap=INBOX.state"
        let lines = try #require(a.dir.read(state)).split(separator: "\n", omittingEmptySubsequences: false)
        a.dir.write("state/cy/~jmap=INBOX.state", lines.dropLast(2).joined(separator: "\n") + "\n")
        // A change on the server (so the look brings the counts forward) and one here (so INBOX is listed).
        _ = try a.client.setEmails(update: [(try a.id("test 0"), .object([("keywords/$flagged", true)]))], destroy: [])
        let one = try #require(a.local()["test 1"]?.first)
        let root = a.dir.path + "/Mail/INBOX/"
        #expect(rename(root + one.name, root + "cur/" + one.name.split(separator: "/").last!.split(separator: ":").first! + ":2,FS") == 0)
        let cut = try CLITests.run("mo-sync", ["--config", a.dir.path + "/mo.toml", "-v"])
        #expect(cut.status == 75 && cut.stderrString.contains("INBOX must be listed whole"), "\(cut.stderrString)")
        let whole = try a.sync()
        #expect(Self.fetched(whole) == 0 && !whole.stderrString.contains("uploaded"), "\(whole.stderrString)")
        let local = a.local()
        #expect(local.count == 3 && local.values.allSatisfy { $0.count == 1 }, "\(local)")
        #expect(try a.remote().count == 3)
        #expect(try a.remote()["test 1"]?.keywords == ["$flagged", "$seen"])
        try a.check()
    }

    /// A run killed after a folder committed its own upload, before the account's mark was written: the
    /// last run's counts were taken out of the mark before the upload, so the next run asks the server for
    /// them (the folder's state now holds one message more than the counts knew) and converges.
    @Test func aRunStoppedAfterItsOwnChangesLeavesNoCountsToBringForward() throws {
        let a = try Account()
        for n in 0..<2 { try a.seed(n, in: ["Inbox"]) }
        _ = try a.sync()
        _ = try a.sync()
        #expect(a.dir.read(a.dir.path + "/state/cy/jmap-mark")?.contains("counts ") == true)
        a.dir.write(
            "Mail/INBOX/cur/1795838700.M1P1.vm:2,S",
            String(decoding: a.message(7, subject: "test 7"), as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"))
        let killed = try ChildProcess.run(
            [TestPaths.binDirectory + "/mo-sync", "--config", a.dir.path + "/mo.toml", "-q"], environment: ["MO_CRASH_AT": "commit: after"])
        #expect(killed.status == 137, "\(killed.stderrString)")
        #expect(a.dir.read(a.dir.path + "/state/cy/jmap-mark")?.contains("counts ") == false)
        try a.seed(8, in: ["Inbox"])
        let next = try a.sync()
        #expect(Self.fetched(next) == 1 && !next.stderrString.contains("uploaded"), "\(next.stderrString)")
        let local = a.local()
        #expect(local.count == 4 && local.values.allSatisfy { $0.count == 1 }, "\(local)")
        #expect(try a.remote().count == 4)
        try a.check()
    }

    /// `mo-sync --watch` on a JMAP account: no push (Cyrus's Debian build has none), so the server is polled
    /// every `poll-interval`, and a local change is carried at once (inotify).
    @Test func watchPollsTheServerAndCarriesLocalChangesAtOnce() throws {
        let a = try Account(sync: "poll-interval = 10")
        try a.seed(0, in: ["Inbox"])
        let log = a.dir.path + "/watch"
        let watch = try BackgroundProcess([
            "/bin/sh", "-c", "exec \"$0\" \"$@\" >\(log).out 2>\(log).err", TestPaths.binDirectory + "/mo-sync", "--config",
            a.dir.path + "/mo.toml", "--watch", "-v"
        ])
        defer { _ = watch.kill() }
        func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
            let end = monotonicSeconds() + seconds
            while monotonicSeconds() < end {
                if try condition() { return true }
                usleep(200_000)
            }
            return try condition()
        }
        #expect(waitFor(10) { a.local()["test 0"] != nil })
        // A server change arrives by the next poll.
        try a.seed(1, in: ["Inbox"])
        #expect(waitFor(16) { a.local()["test 1"] != nil }, "\(a.dir.read(log + ".err") ?? "")")
        // A local flag change reaches the server at once.
        let zero = try #require(a.local()["test 0"]?.first)
        let root = a.dir.path + "/Mail/INBOX/"
        #expect(rename(root + zero.name, root + "cur/" + zero.name.split(separator: "/").last!.split(separator: ":").first! + ":2,F") == 0)
        #expect(try waitFor(8) { try a.remote()["test 0"]?.keywords.contains("$flagged") == true }, "\(a.dir.read(log + ".err") ?? "")")
        #expect(a.dir.read(log + ".err")?.contains("polling every 10 s (JMAP)") == true)
    }

    /// `jmap-delete = "destroy"`: a message deleted here is destroyed on the server, not moved to Trash.
    @Test func aDeletionDestroysWhenTheAccountSaysSo() throws {
        let a = try Account(sync: "jmap-delete = \"destroy\"")
        try a.seed(0, in: ["Inbox"])
        try a.seed(1, in: ["Inbox"])
        _ = try a.sync()
        let zero = try #require(a.local()["test 0"]?.first)
        #expect(unlink(a.dir.path + "/Mail/INBOX/" + zero.name) == 0)
        _ = try a.sync()
        let remote = try a.remote()
        #expect(remote["test 0"] == nil && remote["test 1"]?.boxes == ["Inbox"], "\(remote)")
        #expect(a.local()["test 0"] == nil)
        try a.check()
    }

    /// `jmap-mailbox-folders`: a mailbox shown as a folder of links to its messages' files (the model of
    /// Gmail's label folders); a link deleted takes the message out of the mailbox, a flag set on a link
    /// reaches the message; nothing is stored twice.
    @Test func aMailboxAsAFolderOfLinks() throws {
        let a = try Account(sync: "jmap-mailbox-folders = [\"Lists\"]")
        try a.seed(0, in: ["Inbox", "Lists"])
        try a.seed(1, in: ["Lists"])
        try a.seed(2, in: ["Inbox"])
        _ = try a.sync()
        let cur = a.dir.path + "/Mail/Mailboxes/Lists/cur/"
        func links() -> [String: String] {
            var out: [String: String] = [:]
            for name in a.dir.list("Mail/Mailboxes/Lists/cur") {
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: cur + name)) ?? "not a link"
                let text = a.dir.read(cur + name) ?? ""
                let subject = text.components(separatedBy: "\n").first { $0.hasPrefix("Subject: ") }.map { String($0.dropFirst(9)) } ?? "?"
                out[subject] = name
                #expect(target != "not a link", "\(name)")
            }
            return out
        }
        #expect(Set(links().keys) == ["test 0", "test 1"])
        #expect(a.local().values.allSatisfy { $0.count == 1 })
        // A link deleted: out of Lists on the server, still in Inbox. A flag on a link: on the message.
        let before = links()
        #expect(unlink(cur + before["test 0"]!) == 0)
        let one = before["test 1"]!
        #expect(rename(cur + one, cur + one.split(separator: ":").first! + ":2,F") == 0)
        _ = try a.sync()
        let remote = try a.remote()
        #expect(remote["test 0"]?.boxes == ["Inbox"] && remote["test 1"]?.keywords.contains("$flagged") == true, "\(remote)")
        #expect(Set(links().keys) == ["test 1"])
        try a.check()
    }

    /// `max-size`: a large message arrives as a placeholder, and `mo-sync fetch` puts the message in its place
    /// under the same name (the number names the Email through `jmap-ids`).
    @Test func aPlaceholderIsFilledByFetch() throws {
        let a = try Account(sync: "max-size = \"1K\"")
        try a.seed(0, in: ["Inbox"])
        let big = Array(
            ("From: a@example.org\r\nTo: mo@example.org\r\nSubject: big\r\nMessage-ID: <big@example.org>\r\n\r\n"
                + String(repeating: "0123456789abcdef\r\n", count: 200)).utf8)
        _ = try a.client.importEmail(blobID: a.client.upload(big), mailboxIDs: [a.boxes["Inbox"]!], keywords: [])
        _ = try a.sync()
        let file = try #require(a.local()["big"]?.first)
        let path = a.dir.path + "/Mail/INBOX/" + file.name
        #expect(a.dir.read(path)?.hasPrefix("X-Mo-Placeholder: ") == true)
        let r = try CLITests.run("mo-sync", ["fetch", "--config", a.dir.path + "/mo.toml", path])
        #expect(r.status == 0, "\(r.stdoutString) \(r.stderrString)")
        #expect(a.dir.read(path) == String(decoding: big, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"))
        try a.check()
    }

    /// A second file with the bytes of a message already in the folder: the server keeps one Email per
    /// content (Cyrus), so the copy stays local, unpaired, with a note, run after run; nothing doubles or
    /// goes on either side.
    @Test func aLocalCopyOfAMessageInTheSameFolderStaysLocal() throws {
        let a = try Account()
        try a.seed(0, in: ["Inbox"])
        _ = try a.sync()
        let zero = try #require(a.local()["test 0"]?.first)
        let root = a.dir.path + "/Mail/INBOX/"
        let copy = root + "cur/1795900000.M1P2.copy:2,S"
        #expect(link(root + zero.name, copy) == 0)
        for round in 0..<2 {
            let r = try CLITests.run("mo-sync", ["--config", a.dir.path + "/mo.toml", "-v"])
            // Said on the first run; the core then holds the upload in doubt and does not repeat it.
            #expect(r.stderrString.contains("same bytes as a message already here") == (round == 0), "\(r.stderrString)")
            #expect(r.stderrString.contains("uploaded 1795900000.M1P2.copy") == (round == 0))
            #expect(try a.remote().count == 1)
            #expect(a.local()["test 0"]?.count == 2)
        }
        #expect(unlink(copy) == 0)
        _ = try a.sync()
        #expect(try a.remote()["test 0"]?.boxes == ["Inbox"] && a.local()["test 0"]?.count == 1)
        try a.check()
    }
}
