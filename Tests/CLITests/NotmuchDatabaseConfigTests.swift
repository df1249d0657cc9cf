import Foundation
import Testing
import MoCore
import MoTestSupport

/// What notmuch keeps in its database (`config set --database`, saved queries), under a notmuch
/// configuration: kept beside mo's index, shadowed by the file, listed, dumped as `#@` lines and restored;
/// `query:NAME` expands (nested too) in search, count and tag.
@Suite struct NotmuchDatabaseConfigTests {
    let dir: TemporaryDirectory
    var env: [String: String] { ["NOTMUCH_CONFIG": dir.path + "/notmuch-config", "HOME": dir.path] }

    init() throws {
        dir = try TemporaryDirectory("mo-notmuch-dbconfig")
        let cur = dir.path + "/mail/cur"
        try FileManager.default.createDirectory(atPath: cur, withIntermediateDirectories: true)
        let fixtures = TestPaths.projectRoot + "/Tests/Fixtures/mail"
        for (i, name) in try FileManager.default.contentsOfDirectory(atPath: fixtures).sorted().enumerated() where name.hasSuffix(".eml") {
            try FileManager.default.copyItem(atPath: fixtures + "/" + name, toPath: "\(cur)/\(1000 + i):2,S")
        }
        try "[database]\npath=\(dir.path)/mail\n[new]\ntags=inbox\n".write(
            toFile: dir.path + "/notmuch-config", atomically: true, encoding: .utf8)
    }

    func notmuch(_ args: [String], input: String = "") throws -> ChildProcess.Result {
        try ChildProcess.run([TestPaths.binDirectory + "/mo-index", "notmuch"] + args, input: Array(input.utf8), environment: env)
    }

    @Test func databaseValuesAndSavedQueries() throws {
        defer { dir.remove() }
        // Before a database exists there is nowhere to keep them: notmuch's exit 1.
        #expect(try notmuch(["config", "set", "--database", "query.all", "*"]).status == 1)
        #expect(try notmuch(["new"]).status == 0)
        let total = try notmuch(["count", "*"]).stdoutString
        #expect(try notmuch(["config", "set", "--database", "query.all", "*"]).status == 0)
        #expect(try notmuch(["config", "set", "query.nested", "query:all and not tag:nothing"]).status == 0)
        #expect(try notmuch(["config", "get", "query.all"]).stdoutString == "*\n")
        #expect(try notmuch(["count", "query:nested"]).stdoutString == total)
        #expect(try notmuch(["tag", "+saved", "--", "query:nested"]).status == 0)
        #expect(try notmuch(["count", "tag:saved"]).stdoutString == total)
        let list = try notmuch(["config", "list"]).stdoutString
        #expect(list.contains("\nquery.all=*\n") && list.contains("\nquery.nested=query:all and not tag:nothing\n"))
        // Only the database's values are dumped; the file's are the file's.
        let dump = try notmuch(["dump", "--include=config"]).stdoutString
        #expect(dump == "#notmuch-dump batch-tag:3 config\n#@ query.all %2a\n")
        // The file shadows the database.
        #expect(try notmuch(["config", "set", "query.all", "tag:nothing"]).status == 0)
        #expect(try notmuch(["count", "query:all"]).stdoutString == "0\n")
        #expect(try notmuch(["config", "set", "query.all"]).status == 0)
        // Removed from the database, then restored from the dump.
        #expect(try notmuch(["config", "set", "--database", "query.all"]).status == 0)
        #expect(try notmuch(["count", "query:all"]).stdoutString == "0\n")
        #expect(try notmuch(["restore"], input: dump).status == 0)
        #expect(try notmuch(["config", "get", "query.all"]).stdoutString == "*\n")
    }

    /// `index.header.NAME`: a bad NAME refused in notmuch's words; after `reindex` the header is a field.
    @Test func userHeaders() throws {
        defer { dir.remove() }
        #expect(try notmuch(["new"]).status == 0)
        let bad = try notmuch(["config", "set", "index.header.l:st", "List-Id"])
        #expect(bad.status == 1 && bad.stderrString == "Non-word character in prefix name: l:st\n")
        #expect(try notmuch(["config", "set", "index.header.List", "List-Id"]).status == 0)
        #expect(try notmuch(["count", "List:freebsd"]).stdoutString == "0\n")
        #expect(try notmuch(["reindex", "*"]).status == 0)
        #expect(try notmuch(["count", "List:freebsd"]).stdoutString == "1\n")
        // The rebuild added no new mail: new.tags went nowhere.
        #expect(try notmuch(["count", "tag:inbox"]).stdoutString == (try notmuch(["count", "*"]).stdoutString))
    }

    /// A rebuild (other `index.header.*`) killed after it emptied the index, then run again: only the mail
    /// that arrived meanwhile is new (new.tags), not every message the index held before.
    @Test func aKilledRebuildKnowsNewMail() throws {
        defer { dir.remove() }
        #expect(try notmuch(["new"]).status == 0)
        #expect(try notmuch(["tag", "-inbox", "*"]).status == 0)
        let total = Int(try notmuch(["count", "*"]).stdoutString.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(try notmuch(["config", "set", "index.header.List", "List-Id"]).status == 0)
        try "From: n@example.org\nSubject: arrived meanwhile\nMessage-ID: <meanwhile@example.org>\n\nnew\n"
            .write(toFile: dir.path + "/mail/cur/9999:2,", atomically: true, encoding: .utf8)
        var crashEnv = env
        crashEnv["MO_CRASH_AT"] = "rebuild-started"
        let killed = try ChildProcess.run([TestPaths.binDirectory + "/mo-index", "notmuch", "new"], environment: crashEnv)
        #expect(killed.status == 137)
        let resumed = try notmuch(["new"])
        #expect(resumed.status == 0 && resumed.stdoutString.contains("Added 1 new message"), "\(resumed.stdoutString)")
        #expect(try notmuch(["search", "--output=messages", "tag:inbox"]).stdoutString == "id:meanwhile@example.org\n")
        #expect(try notmuch(["count", "*"]).stdoutString == "\(total + 1)\n")
        // Done: the next run is no rebuild.
        #expect(try notmuch(["new"]).stdoutString == "No new mail.\n")
    }

    /// A file renamed to another name (not only its flags) is a rename, as notmuch counts it: the message
    /// keeps its tags and gets no new.tags again.
    @Test func aRenameToAnotherNameIsNoNewMail() throws {
        defer { dir.remove() }
        #expect(try notmuch(["new"]).status == 0)
        let cur = dir.path + "/mail/cur"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: cur).sorted().first)
        #expect(try notmuch(["tag", "-inbox", "+kept", "*"]).status == 0)
        try FileManager.default.moveItem(atPath: cur + "/" + name, toPath: cur + "/renamed-elsewhere")
        let out = try notmuch(["new"]).stdoutString
        #expect(out == "No new mail. Detected 1 file rename.\n", "\(out)")
        #expect(try notmuch(["count", "tag:inbox"]).stdoutString == "0\n")
        #expect(try notmuch(["count", "tag:kept"]).stdoutString == (try notmuch(["count", "*"]).stdoutString))
    }
}
