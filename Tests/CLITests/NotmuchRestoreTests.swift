import Foundation
import Testing
import MoCore
import MoTestSupport

/// Moving from notmuch: tags set with notmuch 0.37 on the shared notmuch-test corpus, dumped by notmuch,
/// restored by `mo-index restore`, give the same count for every tag as notmuch; `mo-index dump` writes
/// what `notmuch restore` reads back.
@Suite struct NotmuchRestoreTests {
    static var notmuchAvailable: Bool { (try? ChildProcess.run(["notmuch", "--version"]).status) == 0 }
    static var corpusAvailable: Bool { FileManager.default.fileExists(atPath: TestPaths.corpus("notmuch-test")) }

    func notmuch(_ args: [String], _ config: String) throws -> String {
        let r = try ChildProcess.run(["notmuch"] + args, environment: ["NOTMUCH_CONFIG": config])
        #expect(r.status == 0, "notmuch \(args): \(r.stderrString)")
        return r.stdoutString
    }

    /// tag → message count, from notmuch.
    func notmuchCounts(_ config: String) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for tag in try notmuch(["search", "--output=tags", "*"], config).split(separator: "\n") {
            out[String(tag)] = Int(try notmuch(["count", "tag:\"\(tag)\""], config).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return out
    }

    /// tag → message count, from `mo-index tags`.
    func moCounts(_ loc: [String]) throws -> [String: Int] {
        let r = try IndexCLITests.run(loc + ["tags"])
        #expect(r.status == 0, "\(r.stderrString)")
        var out: [String: Int] = [:]
        for line in r.stdoutString.split(separator: "\n") {
            let f = line.split(separator: "\t")
            if f.count == 2 { out[String(f[0])] = Int(f[1]) }
        }
        return out
    }

    @Test func restoresANotmuchDumpWithTheSameCounts() throws {
        if !(Self.notmuchAvailable && Self.corpusAvailable) {
            #expect(ProcessInfo.processInfo.environment["MO_CI"] == nil, "CI installs notmuch and has ../shared")
            return
        }
        let dir = try TemporaryDirectory("mo-notmuch")
        defer { dir.remove() }
        let mail = dir.path + "/mail", config = dir.path + "/notmuch-config"
        #expect(try ChildProcess.run(["cp", "-a", TestPaths.corpus("notmuch-test"), mail]).status == 0)
        try FileManager.default.createDirectory(atPath: dir.path + "/notmuch-db", withIntermediateDirectories: true)
        try """
        [database]
        path=\(dir.path)/notmuch-db
        mail_root=\(mail)
        [new]
        tags=inbox;unread
        [maildir]
        synchronize_flags=true

        """.write(toFile: config, atomically: true, encoding: .utf8)
        _ = try notmuch(["new", "--quiet"], config)
        // Tags a notmuch user has: plain words, a space, non-ASCII, a Thunderbird label name, removals.
        _ = try notmuch(["tag", "+work", "--", "from:cworth"], config)
        _ = try notmuch(["tag", "+to do", "+flagged", "--", "subject:notmuch and date:..2009-11-18"], config)
        _ = try notmuch(["tag", "+äpfel", "-inbox", "--", "tag:attachment"], config)
        _ = try notmuch(["tag", "-unread", "+important", "--", "from:keithp"], config)
        let dump = dir.path + "/tags.dump"
        _ = try notmuch(["dump", "--output=" + dump], config)
        let expected = try notmuchCounts(config)
        #expect(expected["work"] ?? 0 > 0 && expected["to do"] ?? 0 > 0 && expected["äpfel"] ?? 0 > 0)

        let loc = ["--maildir", mail, "--index-dir", dir.path + "/index"]
        #expect(try IndexCLITests.run(loc + ["update", "--quiet"]).status == 0)
        let restore = try IndexCLITests.run(loc + ["restore", "--input", dump])
        #expect(restore.status == 0, "\(restore.stderrString)")
        #expect(restore.stdoutString.hasPrefix("mo-index: restore: "))
        #expect(try moCounts(loc) == expected)

        // The tags are in the files (keywords), so a fresh index finds them without the dump.
        try FileManager.default.removeItem(atPath: dir.path + "/index")
        #expect(try IndexCLITests.run(loc + ["update", "--quiet"]).status == 0)
        #expect(try moCounts(loc) == expected)

        // And back: notmuch restores mo-index's dump to the same counts.
        let ours = dir.path + "/ours.dump"
        #expect(try IndexCLITests.run(loc + ["dump", "-o", ours]).status == 0)
        _ = try notmuch(["tag", "-work", "-äpfel", "--", "*"], config)
        _ = try notmuch(["restore", "--input=" + ours], config)
        #expect(try notmuchCounts(config) == expected)
    }

    @Test func badAndUnknownLinesArePassedOverAndNamed() throws {
        let (dir, loc) = try IndexCLITests.setUp()
        defer { dir.remove() }
        #expect(try IndexCLITests.run(loc + ["update"]).status == 0)
        let id =
            try IndexCLITests.run(loc + ["query", "--output", "message-ids", "from:alice"]).stdoutString
            .split(separator: "\n").first.map(String.init) ?? ""
        let dump = dir.path + "/d"
        try "#notmuch-dump batch-tag:3 tags\n+a%zz -- id:x@y\n+work -- id:\(id)\n+work -- id:absent@nowhere\n"
            .write(toFile: dump, atomically: true, encoding: .utf8)
        let r = try IndexCLITests.run(loc + ["restore", "-i", dump])
        #expect(r.status == 0)
        #expect(r.stderrString.contains("\(dump):2: '+a%zz' has a bad %xx escape; line passed over"))
        #expect(
            r.stdoutString.contains("1 message(s) changed") && r.stdoutString.contains("1 line(s) name messages not in the index")
                && r.stdoutString.contains("1 line(s) passed over"))
        #expect(try IndexCLITests.run(loc + ["count", "tag:work"]).stdoutString == "1\n")
        // Without --accumulate the line is the whole truth: the fixture's seen message gains "work" only.
        let dumped = try IndexCLITests.run(loc + ["dump", "tag:work"]).stdoutString
        #expect(dumped == "#notmuch-dump batch-tag:3 tags\n+work -- id:\(id)\n")
    }
}
