import Foundation
import Testing
import MoCore
import MoTestSupport

/// `mo-index` as a user runs it: the built binary on a Maildir of the real fixtures, no config.
@Suite struct IndexCLITests {
    static func run(_ args: [String], env: [String: String] = [:]) throws -> ChildProcess.Result {
        try ChildProcess.run([TestPaths.binDirectory + "/mo-index"] + args, environment: env)
    }

    /// A Maildir with the fixtures in INBOX/cur (with `flags` in turn: all seen by default) and an index dir,
    /// both temporary.
    static func setUp(flags: [String] = ["S"]) throws -> (TemporaryDirectory, [String]) {
        let dir = try TemporaryDirectory("mo-index-cli")
        let inbox = dir.path + "/mail/INBOX"
        for sub in ["cur", "new", "tmp"] {
            try FileManager.default.createDirectory(atPath: inbox + "/" + sub, withIntermediateDirectories: true)
        }
        let fixtures = TestPaths.projectRoot + "/Tests/Fixtures/mail"
        for (i, name) in try FileManager.default.contentsOfDirectory(atPath: fixtures).sorted().enumerated()
        where name.hasSuffix(".eml") {
            try FileManager.default.copyItem(
                atPath: fixtures + "/" + name, toPath: "\(inbox)/cur/\(1000 + i).x.host:2,\(flags[i % flags.count])")
        }
        return (dir, ["--maildir", dir.path + "/mail", "--index-dir", dir.path + "/index"])
    }

    @Test func updateQueryCountThreadAddress() throws {
        let (dir, loc) = try Self.setUp()
        defer { dir.remove() }
        let u = try Self.run(loc + ["update"])
        #expect(u.status == 0, "\(u.stderrString)")
        #expect(u.stdoutString.hasPrefix("mo-index: "))
        let noop = try Self.run(loc + ["update"])
        #expect(noop.status == 0 && noop.stdoutString.isEmpty)

        let count = try Self.run(loc + ["count", "*"])
        let n = Int(count.stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(n > 15)

        let ids = try Self.run(loc + ["query", "--output", "message-ids", "*"])
        #expect(ids.stdoutString.split(separator: "\n").count == n)

        let summary = try Self.run(loc + ["query", "--limit", "3", "*"])
        let lines = summary.stdoutString.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.allSatisfy { $0.hasPrefix("thread:") && $0.contains("[") })

        let json = try Self.run(loc + ["query", "--format", "json", "--output", "messages", "--limit", "2", "*"])
        let document = try JSONSerialization.jsonObject(with: Data(json.stdoutString.utf8)) as? [String: Any]
        #expect(document?["format_version"] as? Int == 1)
        let parsed = document?["results"] as? [[String: Any]]
        #expect(parsed?.count == 2)
        #expect((parsed?.first?["files"] as? [String])?.first?.hasPrefix(dir.path) == true)

        let members = try Self.run(loc + ["query", "--output", "thread-members", "*"])
        #expect(members.stdoutString.split(separator: "\n").flatMap { $0.split(separator: " ") }.count == n)

        let firstThread = String(lines[0].split(separator: " ")[0])
        let thread = try Self.run(loc + ["thread", firstThread])
        #expect(thread.status == 0 && thread.stdoutString.hasPrefix(firstThread))

        let address = try Self.run(loc + ["address", "--me", "nobody@example.invalid", "a"])
        #expect(address.status == 0 && address.stdoutString.hasPrefix("mo-index: "))
    }

    @Test func badQueryIsUsageErrorNamingThePosition() throws {
        let (dir, loc) = try Self.setUp()
        defer { dir.remove() }
        _ = try Self.run(loc + ["update"])
        let r = try Self.run(loc + ["query", "subject:x", "bogus:y"])
        #expect(r.status == 64)
        #expect(
            r.stderrString
                == "mo-index: query: at character 11: unknown field \"bogus:\" (known: from to cc subject body attachment id mid thread folder path list mimetype flag has tag is gmail-thread date lastmod sexp size)\n"
        )
    }

    @Test func linksMakeAMaildirOfSymlinks() throws {
        let (dir, loc) = try Self.setUp()
        defer { dir.remove() }
        _ = try Self.run(loc + ["update"])
        let links = dir.path + "/search"
        let r = try Self.run(loc + ["query", "--links", links, "--output", "files", "*"])
        #expect(r.status == 0, "\(r.stderrString)")
        let made = try FileManager.default.contentsOfDirectory(atPath: links + "/cur")
        #expect(made.count == r.stdoutString.split(separator: "\n").count)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: links + "/cur/" + made[0]).hasPrefix(dir.path))
    }

    @Test func missingIndexSaysRunUpdate() throws {
        let dir = try TemporaryDirectory("mo-index-cli")
        defer { dir.remove() }
        let r = try Self.run(["--index-dir", dir.path + "/none", "query", "*"])
        #expect(r.status == 69)
        #expect(r.stderrString.contains("run `mo-index update` first"))
    }

    /// Output kinds × formats × sorts, and pages, on the fixtures with mixed flags: the bytes are pinned by
    /// Tests/Fixtures/index-golden (made by the mo-index that printed from document data, before listings
    /// read value slots; the Maildir's path is written MAILDIR). Each is also run in a form only
    /// ArgumentParser takes (`--name=value`), so the FastQuery path and the full parser print the same.
    static let goldenCases: [(name: String, args: [String])] = {
        var cases: [(String, [String])] = []
        for kind in ["summary", "threads", "messages", "message-ids", "thread-members"] {
            for format in ["text", "json"] {
                for sort in ["newest", "oldest", "relevance"] {
                    cases.append(("\(kind).\(format).\(sort)", ["--output", kind, "--format", format, "--sort", sort, "*"]))
                }
            }
            cases.append(("\(kind).page", ["--output", kind, "--offset", "2", "--limit", "4", "*"]))
            cases.append(("\(kind).query", ["--output", kind, "--", "NOT", "flag:flagged", "OR", "thread:{from:carl}"]))
        }
        return cases
    }()

    @Test func outputsAreByteIdenticalToTheGoldenFiles() throws {
        let (dir, loc) = try Self.setUp(flags: ["S", "", "FS", "RS", "DPT"])
        defer { dir.remove() }
        #expect(try Self.run(loc + ["update"]).status == 0)
        let golden = TestPaths.projectRoot + "/Tests/Fixtures/index-golden/"
        let env = ["TZ": "UTC"]
        for (name, args) in Self.goldenCases {
            func output(_ r: ChildProcess.Result) -> String {
                r.stdoutString.replacingOccurrences(of: dir.path + "/mail", with: "MAILDIR")
            }
            let fast = try Self.run(["--index-dir", dir.path + "/index", "query"] + args, env: env)
            // MO_UPDATE_GOLDEN=1 rewrites the files from this build's output (review their diff before committing).
            if ProcessInfo.processInfo.environment["MO_UPDATE_GOLDEN"] == "1" {
                try output(fast).write(toFile: golden + name + ".txt", atomically: true, encoding: .utf8)
            }
            let expected = try String(contentsOfFile: golden + name + ".txt", encoding: .utf8)
            #expect(fast.status == 0 && output(fast) == expected, "\(name)")
            var slow = ["--index-dir=" + dir.path + "/index", "query"]
            var i = 0
            while i < args.count {
                if args[i].hasPrefix("--") && args[i] != "--" {
                    slow.append(args[i] + "=" + args[i + 1]); i += 2
                } else {
                    slow.append(args[i]); i += 1
                }
            }
            let full = try Self.run(slow, env: env)
            #expect(full.status == 0 && output(full) == expected, "\(name) through ArgumentParser")
        }
    }
}
