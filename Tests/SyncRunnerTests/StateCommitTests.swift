@testable import SyncRunner

/// Issue #31: a run commits by appending its own entries and one `C` line to the journal, so the bytes it
/// writes follow the change, not the folder; and a state directory as an earlier release left it (a state
/// file, no journal) is synced on with nothing transferred again.
@Suite struct StateCommitTests {
    /// Each synced folder's store, by its key's folder path ("=testdir2_bar" → "testdir2_bar").
    func stores(_ f: SyncFixture) throws -> [(folder: String, store: FolderStateStore)] {
        let account = f.dir.path + "/state/test"
        let names = try ChildProcess.run(["ls", account]).stdoutString.split(separator: "\n")
        return names.filter { $0.hasSuffix(".state") }.map {
            let key = String($0.dropLast(".state".count))
            return (String(key.dropFirst()), FolderStateStore(accountDirectory: account, key: key))
        }
    }

    @Test func anEarlierReleasesStateIsSyncedOnWithNothingTransferred() throws {
        let f = try SyncFixture.stamped()  // every folder's directory times recorded: no commit without a change
        // The layout an earlier release leaves after every run: the state file alone, in the same format.
        var files: [String: [UInt8]] = [:]
        for (folder, store) in try stores(f) {
            let replay = try store.load(mailbox: try #require(try store.loadHeader()).mailbox)
            try store.compact(replay.state, table: replay.table)
            #expect(!store.hasJournal)
            guard case .success(let bytes) = readWholeFile(store.statePath) else { Issue.record("no state"); continue }
            var rendered = replay.state
            rendered.records = replay.records
            #expect(bytes == StateCodec.render(rendered), "\(folder)")
            files[folder] = bytes
        }
        #expect(files.count >= 2)

        // One change on each side: the run moves flags only, and leaves every state file as it was.
        let (c, uids) = try f.selected("testdir2_bar")
        defer { c.logout() }
        try c.store(UIDSet(uids[0]), StoreAction(.add, [.flagged], silent: true))
        let file = try f.files("testdir")[0]
        try f.setLocalFlags(file, file.flags.isFlagged ? "S" : "FS")
        let byFolder = try f.sync()
        #expect(byFolder.values.allSatisfy { $0.new == 0 && $0.uploaded == 0 && $0.adopted == 0 })
        #expect(byFolder["testdir2_bar"]?.flagsDown == 1 && byFolder["testdir"]?.flagsUp == 1)
        for (folder, store) in try stores(f) {
            #expect(readWholeFile(store.statePath) == .success(files[folder] ?? []), "\(folder)")
        }
        let changed = try stores(f).filter { $0.store.hasJournal }.map(\.folder).sorted()
        #expect(changed == ["testdir", "testdir2_bar"])
        for (_, store) in try stores(f) where store.hasJournal {
            guard case .success(let journal) = readWholeFile(store.journalPath) else { continue }
            let lines = String(decoding: journal, as: UTF8.self).split(separator: "\n")
            #expect(lines.count <= 4 && lines.last?.hasPrefix("C ") == true, "\(lines)")
        }
        try f.expectInSync("after the upgrade")
        #expect(try f.sync().values.allSatisfy { !$0.changed })
    }
}
