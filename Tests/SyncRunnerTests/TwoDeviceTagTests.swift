@testable import SyncRunner

/// Two devices (two Maildirs, two state directories) syncing one account on the private Dovecot.
final class TwoDevices {
    let server: TestServer
    let dir: TemporaryDirectory
    let configs: [String: Config]

    init() throws {
        server = try TestServer.start(seed: [SyncFixture.corpus])
        dir = try TemporaryDirectory("mo-two-devices")
        var configs: [String: Config] = [:]
        for device in ["A", "B"] {
            let d = dir.path + "/" + device
            let text = server.accountConfig(in: d)
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

    /// Runs the built `mo-index` on a device's configuration.
    @discardableResult
    func index(_ device: String, _ args: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ChildProcess.Result {
        let r = try ChildProcess.run([TestPaths.binDirectory + "/mo-index", "--config", configPath(device)] + args)
        #expect(r.status == 0, "\(device): mo-index \(args): \(r.stderrString)", sourceLocation: sourceLocation)
        return r
    }

    /// `mo-index tag` on a device, for messages given by Message-ID (`<...>`, as `files` keys them).
    func tag(_ device: String, _ messageIDs: [String], _ changes: String...) throws {
        try tag(device, messageIDs, changes)
    }

    func tag(_ device: String, _ messageIDs: [String], _ changes: [String]) throws {
        try index(device, ["update", "--quiet"])
        let query = messageIDs.map { "id:" + Self.bare($0) }.joined(separator: " OR ")
        try index(device, ["tag"] + changes + ["--", query])
    }

    /// The Message-IDs (`<...>`) a query matches on a device, after `mo-index update`, sorted.
    func query(_ device: String, _ q: String) throws -> [String] {
        try index(device, ["update", "--quiet"])
        return try index(device, ["query", "--output", "message-ids", q]).stdoutString
            .split(separator: "\n").map { "<" + $0 + ">" }.sorted()
    }

    static func bare(_ id: String) -> String { String(id.dropFirst().dropLast()) }
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

        // (1) Tagged on A, synced by A then B: on B, tag:work finds exactly those messages.
        try t.tag("A", [one, two], "+work")
        try t.sync("A")
        try t.sync("B")
        #expect(try t.query("B", "tag:work") == [one, two])

        // (2) Untagged on B: back on A.
        try t.tag("B", [two], "-work")
        try t.sync("B")
        try t.sync("A")
        #expect(try t.query("A", "tag:work") == [one])

        // (3) Concurrent tags on one message: A adds x, B adds y; the three-way merge keeps both.
        try t.tag("A", [three], "+x")
        try t.tag("B", [three], "+y")
        try t.sync("A")
        try t.sync("B")
        try t.sync("A")
        for device in ["A", "B"] {
            #expect(try t.query(device, "tag:x AND tag:y") == [three], "\(device)")
            #expect(try t.query(device, "tag:x OR tag:y") == [three], "\(device)")
        }

        // (4) A keyword set on the server (doveadm) appears as a tag on both.
        let added = try ChildProcess.run([
            "doveadm", "-c", t.server.directory + "/dovecot.conf", "flags", "add", "-u", t.server.user,
            "from-doveadm", "mailbox", "testdir", "header", "Message-ID", one
        ])
        #expect(added.status == 0, "\(added.stderrString)")
        try t.sync("A")
        try t.sync("B")
        for device in ["A", "B"] {
            #expect(try t.query(device, "tag:from-doveadm") == [one], "\(device)")
            #expect(try t.query(device, "tag:from-doveadm AND tag:work") == [one], "\(device)")
        }
    }
}

/// Issue 26 item 4, end to end on the private Dovecot: tags without the 26-letter limit.
@Suite struct TwoDeviceManyTagsTests {
    /// 100 distinct tags in one folder (`mo-index tag`): the first 26 take letters, the rest go to the
    /// folder's `mo-keywords`; every one reaches the server as a keyword and the other device as a tag, and a
    /// removal on the other device comes back.
    @Test func aHundredTagsTravelBetweenDevices() throws {
        let t = try TwoDevices()
        try t.sync("A")
        try t.sync("B")
        let ids = try t.files("A", "testdir").keys.sorted()
        try #require(ids.count >= 2)
        let (one, two) = (ids[0], ids[1])
        let tags = (1...100).map { "t" + String(repeating: "0", count: 3 - String($0).count) + String($0) }

        // Tagged on A: 60 tags on one message, the other 40 (and 10 of the first) on another.
        try t.tag("A", [one], Array(tags.prefix(60).map { "+" + $0 }))
        try t.tag("A", [two], Array(tags.suffix(50).map { "+" + $0 }))
        let extra = try ExtraKeywords.load(folder: t.folder("A", "testdir"))
        #expect(!extra.isEmpty)
        try t.sync("A")
        let server = try ChildProcess.run([
            "doveadm", "-c", t.server.directory + "/dovecot.conf", "fetch", "-u", t.server.user, "flags",
            "mailbox", "testdir", "header", "Message-ID", two
        ])
        let onServer = Set(server.stdoutString.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
        #expect(onServer.isSuperset(of: tags.suffix(50)), "\(server.stdoutString.prefix(300))")
        try t.sync("B")
        for tag in tags {
            let expected = ([tags.firstIndex(of: tag)! < 60 ? one : nil, tags.firstIndex(of: tag)! >= 50 ? two : nil]).compactMap { $0 }
                .sorted()
            #expect(try t.query("B", "tag:" + tag) == expected, "B: tag:\(tag)")
        }

        // Removed on B (letters and mo-keywords alike): gone on A after both sync.
        try t.tag("B", [one, two], tags.map { "-" + $0 }.filter { $0 != "-t001" && $0 != "-t100" })
        try t.sync("B")
        try t.sync("A")
        #expect(try t.query("A", "tag:t001") == [one])
        #expect(try t.query("A", "tag:t100") == [two])
        #expect(try t.query("A", "tag:t050 OR tag:t077 OR tag:t099").isEmpty)
        // Both sides quiet: a further sync on each changes nothing.
        try t.sync("A")
        try t.sync("B")
        #expect(try t.query("B", "tag:t099").isEmpty)

        // Moved on A to another folder (mo-index move, then mo-sync's UID MOVE): the tags beyond the letters
        // come along on A, stay on the server, and reach B's copy in that folder.
        try t.index("A", ["update", "--quiet"])
        try t.index("A", ["move", "id:" + TwoDevices.bare(two), "cjk"])
        try t.sync("A")
        try t.sync("B")
        for d in ["A", "B"] {
            #expect(try t.query(d, "tag:t100") == [two], "\(d)")
            #expect(try ExtraKeywords.load(folder: t.folder(d, "testdir")).isEmpty, "\(d)")
        }
        // On A the line came along with the file; on B the message arrived in cjk, whose table had a free letter.
        #expect(try ExtraKeywords.load(folder: t.folder("A", "cjk")).byUnique.values.first == ["t100"])
        #expect(try ExtraKeywords.load(folder: t.folder("B", "cjk")).isEmpty)
    }
}
