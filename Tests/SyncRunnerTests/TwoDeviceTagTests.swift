#if canImport(Glibc)
import Glibc
#endif
import Testing
import Maildir
import MoConfig
import MoCore
import MoTestSupport
@testable import SyncRunner

/// Two devices (two Maildirs, two state directories) syncing one account on the private Dovecot.
final class TwoDevices {
    let server: TestServer
    let dir: TemporaryDirectory
    let configs: [String: Config]
    static let vocabulary = TagVocabulary()

    init() throws {
        server = try TestServer.start(seed: [SyncFixture.corpus])
        dir = try TemporaryDirectory("mo-two-devices")
        var configs: [String: Config] = [:]
        for device in ["A", "B"] {
            let d = dir.path + "/" + device
            let text = """
                [general]
                state-dir = "\(d)/state"
                index-dir = "\(d)/index"
                [account.test]
                address = "mo@example.com"
                maildir = "\(d)/Mail"
                [account.test.imap]
                host = "127.0.0.1"
                port = \(server.imapsPort)
                user = "\(server.user)"
                password-command = "echo \(server.password)"
                ca-file = "\(server.caFile)"
                """
            _ = makeDirectories(d)
            _ = replaceFileAtomically(d + "/config.toml", Array(text.utf8))
            configs[device] = try ConfigLoader.parse(text: text, path: d + "/config.toml")
        }
        self.configs = configs
    }

    deinit {
        server.stop()
        dir.remove()
    }

    func configPath(_ device: String) -> String { dir.path + "/" + device + "/config.toml" }
    func folder(_ device: String, _ name: String) -> String { configs[device]!.accounts[0].maildir! + "/" + name }

    func sync(_ device: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let config = configs[device]!
        for s in try AccountSync(account: config.accounts[0], config: config, options: SyncOptions()).run() {
            #expect(s.error == nil && s.stopped == nil, "\(device): \(s.line)", sourceLocation: sourceLocation)
        }
    }

    /// The folder's files by Message-ID (files without one are left out).
    func files(_ device: String, _ name: String) throws -> [String: MaildirEntry] {
        var out: [String: MaildirEntry] = [:]
        for e in try MaildirScanner.scan(MaildirFolder(path: folder(device, name))).entries {
            let text = String(decoding: try MessageFile.contents(of: e.path), as: UTF8.self)
            guard let line = text.split(separator: "\n").first(where: { $0.lowercased().hasPrefix("message-id:") }) else { continue }
            let id = line.dropFirst("message-id:".count).drop { $0 == " " || $0 == "\t" }
            out[String(id.reversed().drop { $0 == " " || $0 == "\r" }.reversed())] = e
        }
        return out
    }

    /// Keyword tags (not the flag tags) of every message of a folder, by Message-ID.
    func tags(_ device: String, _ name: String) throws -> [String: Set<String>] {
        let keywords = try MaildirKeywords.load(folder: folder(device, name))
        let flagTags = Set(TagVocabulary.flagTags.map(\.tag))
        return try files(device, name).mapValues {
            MaildirTags.tags(of: $0.flags, keywords: keywords, vocabulary: Self.vocabulary).subtracting(flagTags)
        }
    }

    /// Changes tags as `mo-index tag` does: letters through the folder's table (saved first), one rename.
    func tag(_ device: String, _ name: String, _ messageIDs: [String], add: [String] = [], remove: [String] = []) throws {
        let path = folder(device, name)
        var keywords = try MaildirKeywords.load(folder: path)
        let files = try self.files(device, name)
        var renames: [(String, MaildirFlags)] = []
        for id in messageIDs {
            let e = try #require(files[id])
            let change = MaildirTags.apply(add: add, remove: remove, to: e.flags, keywords: &keywords, vocabulary: Self.vocabulary)
            #expect(change.overflow.isEmpty)
            renames.append((e.path, change.flags))
        }
        try keywords.save(folder: path)
        for (p, flags) in renames { _ = try MaildirFolder(path: path).setFlags(path: p, flags: flags, moveToCur: true) }
    }
}

/// Issue 17, end to end: tags travel between two devices through the server's keywords.
@Suite struct TwoDeviceTagTests {
    @Test func tagsTravelBetweenDevices() throws {
        let t = try TwoDevices()
        try t.sync("A")
        try t.sync("B")
        let ids = try t.files("A", "testdir").keys.sorted()
        try #require(ids.count >= 4)
        let (one, two, three) = (ids[0], ids[1], ids[2])

        // (1) Tagged on A, synced by A then B: B has exactly those messages tagged.
        try t.tag("A", "testdir", [one, two], add: ["work"])
        try t.sync("A")
        try t.sync("B")
        #expect(try t.tags("B", "testdir").filter { $0.value.contains("work") }.keys.sorted() == [one, two])

        // (2) Untagged on B: back on A.
        try t.tag("B", "testdir", [two], remove: ["work"])
        try t.sync("B")
        try t.sync("A")
        #expect(try t.tags("A", "testdir").filter { $0.value.contains("work") }.keys.sorted() == [one])

        // (3) Concurrent tags on one message: A adds x, B adds y; the three-way merge keeps both.
        try t.tag("A", "testdir", [three], add: ["x"])
        try t.tag("B", "testdir", [three], add: ["y"])
        try t.sync("A")
        try t.sync("B")
        try t.sync("A")
        #expect(try t.tags("A", "testdir")[three] == ["x", "y"])
        #expect(try t.tags("B", "testdir")[three] == ["x", "y"])

        // (4) A keyword set on the server (doveadm) appears as a tag on both.
        let added = try ChildProcess.run(["doveadm", "-c", t.server.directory + "/dovecot.conf", "flags", "add", "-u", t.server.user,
                                          "from-doveadm", "mailbox", "testdir", "header", "Message-ID", one])
        #expect(added.status == 0, "\(added.stderrString)")
        try t.sync("A")
        try t.sync("B")
        for device in ["A", "B"] {
            #expect(try t.tags(device, "testdir")[one] == ["work", "from-doveadm"], "\(device)")
            #expect(try t.tags(device, "testdir").filter { $0.value.contains("from-doveadm") }.count == 1, "\(device)")
        }
    }
}
