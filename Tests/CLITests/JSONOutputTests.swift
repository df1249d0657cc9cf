import Foundation
import Testing
import MoCore
import MoTestSupport

/// Every JSON output of every program (docs/json.md): one document a strict parser (Python's json) takes,
/// an object carrying `format_version`, and `--format-version` other than 1 refused with exit 64.
@Suite struct JSONOutputTests {
    /// The document parsed by python3's json module (strict: a raw control character in a string fails),
    /// then by Foundation for the checks.
    static func parse(_ r: ChildProcess.Result, _ what: String) throws -> [String: Any]? {
        #expect(r.status == 0 || what.hasPrefix("mo-sync"), "\(what): \(r.stderrString)")
        return try parse(r.stdout, what)
    }

    static func parse(_ stdout: [UInt8], _ what: String) throws -> [String: Any]? {
        let check = try ChildProcess.run(
            [
                "python3", "-c",
                """
                import json, sys
                d = json.loads(sys.stdin.read())
                assert isinstance(d, dict) and d["format_version"] == 1, d
                """
            ], input: stdout)
        #expect(check.status == 0, "\(what): python3 json.loads: \(check.stderrString)")
        return try JSONSerialization.jsonObject(with: Data(stdout)) as? [String: Any]
    }

    /// docs/json.md names every field an output has, in its tables (`| \`name\` |`).
    static func expectDocumented(_ value: Any, _ what: String) throws {
        guard case .success(let bytes) = readWholeFile(TestPaths.projectRoot + "/docs/json.md") else {
            Issue.record("cannot read docs/json.md"); return
        }
        let doc = String(decoding: bytes, as: UTF8.self)
        func walk(_ v: Any) {
            if let o = v as? [String: Any] {
                for (k, child) in o {
                    #expect(
                        doc.contains("| `\(k)` |") || doc.contains("| `accounts[].\(k)` |"), "\(what): field \(k) is not in docs/json.md")
                    walk(child)
                }
            } else if let a = v as? [Any] {
                a.forEach(walk)
            }
        }
        walk(value)
    }

    /// Every example in docs/json.md is a versioned document.
    @Test func examplesInTheDocParse() throws {
        guard case .success(let bytes) = readWholeFile(TestPaths.projectRoot + "/docs/json.md") else {
            Issue.record("cannot read docs/json.md"); return
        }
        let blocks = String(decoding: bytes, as: UTF8.self).components(separatedBy: "```json\n").dropFirst()
            .map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count >= 8)
        for block in blocks {
            _ = try Self.parse(Array(block.utf8), "docs/json.md: \(block.prefix(60))")
        }
    }

    static func results(_ r: ChildProcess.Result, _ what: String) throws -> [Any] {
        let d = try parse(r, what)
        #expect(d?.keys.sorted() == ["format_version", "results"], "\(what)")
        if let d { try expectDocumented(d, what) }
        return d?["results"] as? [Any] ?? []
    }

    @Test func everyIndexOutputIsOneVersionedDocument() throws {
        let (dir, loc) = try IndexCLITests.setUp()
        defer { dir.remove() }
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        for kind in ["summary", "threads", "messages", "message-ids", "thread-members", "files"] {
            for version in [[], ["--format-version", "1"]] {
                let args = ["query", "--format", "json", "--output", kind] + version + ["*"]
                let r = try IndexCLITests.run(loc + args)
                #expect(try !Self.results(r, args.joined(separator: " ")).isEmpty)
            }
        }
        let thread = try Self.results(try IndexCLITests.run(loc + ["thread", "--format", "json", "*"]), "thread")
        #expect(!thread.isEmpty)
    }

    /// A missing parent is an entry of its own in the thread JSON, as in the text; thread ids are one form
    /// everywhere (bare in JSON, `thread:` + the same in text and queries).
    @Test func threadIdsAreOneFormAndPlaceholdersStay() throws {
        let (dir, loc) = try IndexCLITests.setUp()
        defer { dir.remove() }
        // Two replies to a message not in the Maildir: a placeholder joins them (one reply alone would be the root).
        for n in 1...2 {
            try writePrivateFile(
                dir.path + "/mail/INBOX/cur/200\(n).x.host:2,S",
                """
                From: Orphan <orphan@example.com>
                Subject: Re: the lost one
                Message-ID: <orphan\(n)@example.com>
                In-Reply-To: <never-indexed@example.com>
                Date: Mon, 2 Mar 2026 1\(n):00:00 +0000

                A reply whose parent is not in the Maildir.

                """)
        }
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        let text = try IndexCLITests.run(loc + ["thread", "*"]).stdoutString
        let entries = try Self.results(try IndexCLITests.run(loc + ["thread", "--format", "json", "*"]), "thread")
            .compactMap { $0 as? [String: Any] }
        let missing = entries.filter { $0["missing"] as? Bool == true }
        #expect(!missing.isEmpty)
        #expect(missing.count == text.components(separatedBy: "(missing: ").count - 1)
        #expect(missing.allSatisfy { $0.keys.sorted() == ["depth", "id", "missing", "thread"] })
        #expect(missing.contains { $0["id"] as? String == "never-indexed@example.com" && $0["depth"] as? Int == 0 })
        #expect(entries.contains { $0["id"] as? String == "orphan2@example.com" && $0["depth"] as? Int == 1 })

        let threads = try Self.results(try IndexCLITests.run(loc + ["query", "--format", "json", "--output", "threads", "*"]), "threads")
            .compactMap { $0 as? String }
        let summaries = try Self.results(try IndexCLITests.run(loc + ["query", "--format", "json", "*"]), "summary")
            .compactMap { ($0 as? [String: Any])?["thread"] as? String }
        let ofMessages = try Self.results(
            try IndexCLITests.run(loc + ["query", "--format", "json", "--output", "messages", "*"]), "messages"
        )
        .compactMap { ($0 as? [String: Any])?["thread"] as? String }
        #expect(threads == summaries)
        #expect(Set(ofMessages) == Set(threads))
        #expect(Set(entries.compactMap { $0["thread"] as? String }) == Set(threads))
        #expect(threads.allSatisfy { $0.count == 16 && $0.allSatisfy(\.isHexDigit) })
        let textIDs = try IndexCLITests.run(loc + ["query", "--output", "threads", "*"]).stdoutString.split(separator: "\n")
        #expect(textIDs.map(String.init) == threads.map { "thread:" + $0 })
        // The id as JSON gives it, in a query and to `thread`.
        let one = try Self.results(try IndexCLITests.run(loc + ["query", "--format", "json", "thread:" + threads[0]]), "thread:")
        #expect((one.first as? [String: Any])?["thread"] as? String == threads[0])
        #expect(try IndexCLITests.run(loc + ["thread", threads[0]]).stdoutString.hasPrefix("thread:" + threads[0] + "\n"))
    }

    /// Both parsers of `query` (the fast path and ArgumentParser's `--name=value`), `thread` and mo-sync.
    @Test(
        arguments: [
            ("mo-index", ["--index-dir", "/nonexistent", "query", "--format", "json", "--format-version", "2", "*"], 2),
            ("mo-index", ["--index-dir=/nonexistent", "query", "--format=json", "--format-version=2", "*"], 2),
            ("mo-index", ["--index-dir", "/nonexistent", "thread", "--format-version", "2", "x"], 2),
            ("mo-sync", ["--config", "/nonexistent", "--json", "--format-version", "2"], 2),
            ("mo-sync", ["--config", "/nonexistent", "sync", "--format-version", "0"], 0)
        ] as [(String, [String], Int)])
    func otherVersionsAreUsageErrors(tool: String, args: [String], n: Int) throws {
        let r = try CLITests.run(tool, args)
        #expect(r.status == 64)
        #expect(r.stderrString == "\(tool): --format-version \(n): not supported (supported: 1)\n")
        #expect(r.stdout.isEmpty)
    }

    /// mo-sync --json with a folder that fails (a server text with terminal escapes) and an account that
    /// cannot connect: both branches of the document, strings escaped.
    @Test func syncSummaryIsOneVersionedDocument() throws {
        let server = try ScriptedIMAPServer(mailboxes: [.init("INBOX")]) { r in
            r.verb == "SELECT" || r.verb == "EXAMINE" ? [.text("\(r.tag) NO \u{1B}[2J\u{1B}]0;pwned\u{7}mailbox gone\r\n")] : nil
        }
        defer { server.stop() }
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let file = dir.path + "/config.toml"
        var config = "[general]\nstate-dir = \"\(dir.path)/state\"\n"
        for (name, port) in [("hostile", server.port), ("down", closedLoopbackPort())] {
            config += """
                [account.\(name)]
                address = "\(name)@example.com"
                maildir = "\(dir.path)/Mail-\(name)"
                [account.\(name).imap]
                host = "127.0.0.1"
                port = \(port)
                tls = "none"
                user = "u"
                password-command = "echo x"

                """
        }
        try writePrivateFile(file, config)
        let r = try CLITests.run("mo-sync", ["--config", file, "--json", "--format-version", "1"])
        #expect(r.status != 0)
        #expect(!r.stdout.contains(0x1B) && !r.stdout.contains(0x07))
        let d = try Self.parse(r, "mo-sync --json")
        #expect(d?.keys.sorted() == ["accounts", "dry_run", "format_version"])
        if let d { try Self.expectDocumented(d, "mo-sync --json") }
        #expect(d?["dry_run"] as? Bool == false)
        let accounts = d?["accounts"] as? [[String: Any]] ?? []
        #expect(accounts.compactMap { $0["account"] as? String }.sorted() == ["down", "hostile"])
        let down = accounts.first { $0["account"] as? String == "down" }
        #expect(down?.keys.sorted() == ["account", "error"])
        let hostile = accounts.first { $0["account"] as? String == "hostile" }
        let inbox = (hostile?["folders"] as? [[String: Any]])?.first { $0["folder"] as? String == "INBOX" }
        // The error's text is the one-line message, whose server words are already escaped for a terminal.
        #expect(
            (inbox?["error"] as? String)?.hasSuffix("refused: \\u{1B}[2J\\u{1B}]0;pwned\\u{7}mailbox gone") == true, "\(r.stdoutString)")
        #expect(inbox?["notes"] as? [String] == [])
        #expect(inbox?["new"] as? Int == 0)
    }
}
