import Testing
import Maildir
import MoCore
import MoTestSupport
import SyncEngine
@testable import SyncState

func flags(_ s: String) -> MaildirFlags { MaildirFlags(letters: s)! }

struct StateCodecTests {
    /// The state files now escape bytes ≥ 0x80 like the action journal (`MoCore.PercentEscape`); a file
    /// written before, with the raw UTF-8, still reads the same.
    @Test func nonASCIIIsEscapedAndOlderRawFilesStillRead() throws {
        let state = FolderState(
            mailbox: "Entwürfe", uidValidity: 1, uidNext: 3, highestModSeq: 4,
            records: [SyncRecord(uid: 2, unique: "1700000000.ü.host", flags: flags("S"))])
        let text = String(decoding: StateCodec.render(state), as: UTF8.self)
        #expect(text.contains("mailbox Entw%C3%BCrfe\n") && text.contains("2 1700000000.%C3%BC.host S\n"))
        #expect(try StateCodec.parse(StateCodec.render(state), file: "f") == state)
        let older = text.split(separator: "%C3%BC", omittingEmptySubsequences: false).joined(separator: "ü")
        #expect(try StateCodec.parse(Array(older.utf8), file: "f") == state)
        #expect(StateCodec.render(state, table: RecordTable(state.records)) == StateCodec.render(state))
    }

    /// The fast reader of a record line takes exactly what the strict one takes, and reads it the same;
    /// anything else it leaves to the strict one (which then names the problem).
    @Test(arguments: [
        "7 1700000000.M1P1Q1R1.host FS", "0 a -", "4294967295 x S", "4294967296 x S", "07 x S", "7 - S", "7 %2D S",
        "7 a%20b S", "7 a/b S", "7 a SS", "7 a Z", "7 a ", "7  S", " 7 a S", "7 a S ", "7 a  S", "x7 a S", "7 a",
        "12345678901 a S", "7 é S", "7 a -S"
    ])
    func theFastRecordReaderAgreesWithTheStrictOne(line: String) {
        var bytes = line
        let fast = bytes.withUTF8 { b in
            StateCodec.plainRecord(bytes: b).map { r in
                (uid: r.uid, unique: String(decoding: UnsafeBufferPointer(rebasing: b[r.start..<r.end]), as: UTF8.self), flags: r.flags)
            }
        }
        let strict = try? StateCodec.parseRecord(Substring(line), fail: { StateError(file: "f", problem: $0) })
        if let fast {
            #expect(strict == SyncRecord(uid: fast.uid, unique: fast.unique, flags: fast.flags), "\(line)")
        }
        let plain = line.utf8.allSatisfy { $0 < 0x7F } && !line.contains("%") && !line.contains(" - ") && !line.hasSuffix(" ")
        if strict != nil && plain { #expect(fast != nil, "\(line)") }
    }

    let sample = FolderState(
        mailbox: "Lists/dev team", uidValidity: 1795306901, uidNext: 120, highestModSeq: 4567,
        records: [
            SyncRecord(uid: 7, unique: "1700000000.M1P1Q1R1.host", flags: flags("FS")),
            SyncRecord(uid: 0, unique: "local only", flags: flags("S")),
            SyncRecord(uid: 9, unique: "", flags: []),
            SyncRecord(uid: 10, unique: "-", flags: flags("a"))
        ])

    @Test func roundTrip() throws {
        let bytes = StateCodec.render(sample)
        #expect(
            String(decoding: bytes, as: UTF8.self) == """
                mo-sync-state 1
                mailbox Lists/dev%20team
                uidvalidity 1795306901
                uidnext 120
                highestmodseq 4567

                7 1700000000.M1P1Q1R1.host FS
                0 local%20only S
                9 - -
                10 %2D a

                """)
        #expect(try StateCodec.parse(bytes, file: "f") == sample)
        // Straight into a table (plain lines read from their bytes): the same records.
        let (header, table) = try StateCodec.parseIntoTable(bytes, file: "f")
        #expect(header.uidNext == 120 && header.records.isEmpty && table.records == sample.records.sorted(by: SyncPlanner.recordOrder))
    }

    @Test(arguments: [
        ("", "f:1: not a mo-sync state file (expected \"mo-sync-state 1\")"),
        ("mo-sync-state 2\n", "f:1: not a mo-sync state file (expected \"mo-sync-state 1\")"),
        ("mo-sync-state 1\nmailbox INBOX\n", "f:2: missing blank line after the header"),
        ("mo-sync-state 1\nmailbox INBOX\nuidvalidity x\n\n", "f:3: uidvalidity \"x\" is not a number"),
        ("mo-sync-state 1\nmailbox INBOX\ncolour red\n\n", "f:3: unknown header key \"colour\""),
        ("mo-sync-state 1\nmailbox INBOX\nmailbox X\n\n", "f:3: mailbox given twice"),
        ("mo-sync-state 1\nmailbox INBOX\n\n", "f:3: header lacks uidvalidity"),
        (
            "mo-sync-state 1\nmailbox I\nuidvalidity 1\nuidnext 2\nhighestmodseq 3\n\n7 u\n",
            "f:7: expected \"UID UNIQUE FLAGS\", found \"7 u\""
        ),
        ("mo-sync-state 1\nmailbox I\nuidvalidity 1\nuidnext 2\nhighestmodseq 3\n\nx u S\n", "f:7: UID \"x\" is not a number"),
        ("mo-sync-state 1\nmailbox I\nuidvalidity 1\nuidnext 2\nhighestmodseq 3\n\n7 u S!\n", "f:7: bad flags \"S!\""),
        ("mo-sync-state 1\nmailbox I\nuidvalidity 1\nuidnext 2\nhighestmodseq 3\n\n7 a/b S\n", "f:7: bad unique name \"a/b\""),
        ("mo-sync-state 1\nmailbox I\nuidvalidity 1\nuidnext 2\nhighestmodseq 3\n\n0 - S\n", "f:7: a record needs a UID or a unique name"),
        (
            "mo-sync-state 1\nmailbox I\nuidvalidity 1\nuidnext 2\nhighestmodseq 3\n\n7 u S\n8 v",
            "f:8: incomplete last line \"8 v\" (the file was cut short)"
        )
    ])
    func strictErrorsNameFileAndLine(text: String, message: String) {
        #expect(
            throws: StateError(
                file: "f", line: Int(message.split(separator: ":")[1])!,
                problem: String(message.split(separator: ":", maxSplits: 2)[2].dropFirst()))
        ) {
            _ = try StateCodec.parse(Array(text.utf8), file: "f")
        }
        #expect(
            throws: StateError(
                file: "f", line: Int(message.split(separator: ":")[1])!,
                problem: String(message.split(separator: ":", maxSplits: 2)[2].dropFirst()))
        ) {
            _ = try StateCodec.parseIntoTable(Array(text.utf8), file: "f")
        }
    }
}

/// A state file read in chunks of any size gives what it gives read whole: the same records, and the same
/// errors at the same lines (a line may straddle chunks; the torn last line too).
struct ChunkedStateTests {
    static let texts = [
        "mo-sync-state 1\nmailbox INBOX\nuidvalidity 5\nuidnext 10\nhighestmodseq 100\n\n7 a FS\n0 b%20c S\n9 - -\n",
        "mo-sync-state 1\nmailbox INBOX\nuidvalidity 5\nuidnext 10\nhighestmodseq 100\n\n7 a FS\n8 b S",
        "mo-sync-state 1\nmailbox INBOX\nuidvalidity 5\nuidnext 10\nhighestmodseq 100\n\n7 a FS\n8 b SS\n9 c S\n",
        "mo-sync-state 1\nmailbox INBOX\nuidvalidity 5\nuidnext 10\nhighestmodseq 100\n\n",
        "mo-sync-state 1\nmailbox INBOX\nuidvalidity 5\n",
        "mo-sync-state 1\nmailbox INBOX\nuidvalidity 5\nuidnext 10\nhighestmodseq 100\nlocalstamp 1 2\n\n7 é S\n"
    ]

    static func outcome(_ text: String, chunk: Int?) -> String {
        let bytes = Array(text.utf8)
        do {
            let (header, table): (FolderState, RecordTable)
            if let chunk {
                var at = 0
                (header, table) = try StateCodec.parseIntoTable(file: "f", sizeHint: bytes.count) { () throws(StateError) -> [UInt8]? in
                    guard at < bytes.count else { return nil }
                    defer { at += chunk }
                    return Array(bytes[at..<min(at + chunk, bytes.count)])
                }
            } else {
                (header, table) = try StateCodec.parseIntoTable(bytes, file: "f")
            }
            return
                "\(header.uidNext) \(header.localStamp.map { "\($0.cur)" } ?? "-") \(table.records.map { "\($0.uid):\($0.unique):\($0.flags.letters)" })"
        } catch {
            return "error: \(error)"
        }
    }

    @Test(arguments: texts)
    func chunksOfAnySizeReadAlike(_ text: String) {
        let whole = Self.outcome(text, chunk: nil)
        for chunk in [1, 2, 3, 7, 16, 64, 4096] {
            #expect(Self.outcome(text, chunk: chunk) == whole, "chunk \(chunk): \(text.debugDescription)")
        }
    }
}

struct JournalTests {
    let base = FolderState(
        mailbox: "INBOX", uidValidity: 5, uidNext: 10, highestModSeq: 100,
        records: [SyncRecord(uid: 3, unique: "u3", flags: flags("S"))])

    func replay(_ entries: [JournalEntry], tail: String = "") throws -> Replay {
        let text = JournalEntry.magic + "\n" + entries.map(\.line).joined() + tail
        return try JournalCodec.replay(Array(text.utf8), over: base, file: "j")
    }

    @Test func settledAndPendingIntents() throws {
        let key = MessageKey(messageID: "a b@c", wireSize: 512)
        let r = try replay([
            .status(uidValidity: 5, uidNext: 12, highestModSeq: 130),
            .fetchIntent(uid: 10, unique: "u10"),
            .record(SyncRecord(uid: 10, unique: "u10", flags: flags("S"))),
            .fetchIntent(uid: 11, unique: "u11"),
            .appendIntent(unique: "l1", uidNext: 12, key: key),
            .appendIntent(unique: "l2", uidNext: 12, key: nil),
            .record(SyncRecord(uid: 12, unique: "l2", flags: [])),
            .drop(uid: 3, unique: "u3")
        ])
        #expect(r.state.uidNext == 12 && r.state.highestModSeq == 130)
        #expect(
            r.records == [
                SyncRecord(uid: 10, unique: "u10", flags: flags("S")),
                SyncRecord(uid: 12, unique: "l2", flags: [])
            ])
        #expect(r.pendingFetches.map(\.uid) == [11])
        #expect(r.pendingAppends.count == 1 && r.pendingAppends[0].unique == "l1" && r.pendingAppends[0].key == key)
    }

    @Test func recordReplacesByUIDOrUnique() throws {
        let r = try replay([
            .record(SyncRecord(uid: 3, unique: "u3", flags: flags("FS"))),  // flags change
            .drop(uid: 3, unique: "u3"),
            .record(SyncRecord(uid: 0, unique: "u3", flags: flags("FS")))  // became a local tombstone
        ])
        #expect(r.records == [SyncRecord(uid: 0, unique: "u3", flags: flags("FS"))])
    }

    /// Plain `D` and `F` lines are read from their bytes, other spellings by the strict parser: both alike.
    @Test func plainAndEscapedDropsAndIntentsReplayAlike() throws {
        let r = try replay([], tail: "F 11 u11\nF 12 a%20b\nD 3 u3\nD 4 -\nF 07 u7\n")
        #expect(r.pendingFetches.map(\.uid) == [11, 12, 7] && r.pendingFetches.map(\.unique) == ["u11", "a b", "u7"])
        #expect(r.records.isEmpty)
        #expect(throws: StateError(file: "j", line: 2, problem: "bad unique name \"x/y\"")) {
            _ = try replay([], tail: "F 13 x/y\n")
        }
        #expect(throws: StateError(file: "j", line: 2, problem: "\"D\" takes 2 fields, found \"D 3 u3 S\"")) {
            _ = try replay([], tail: "D 3 u3 S\n")
        }
    }

    @Test func tornLastLineIsIgnoredButBadLinesAreErrors() throws {
        let r = try replay([.fetchIntent(uid: 10, unique: "u10")], tail: "R 10 u1")
        #expect(r.pendingFetches.map(\.uid) == [10])
        #expect(throws: StateError(file: "j", line: 3, problem: "unknown journal entry \"Q\"")) {
            _ = try replay([.fetchIntent(uid: 10, unique: "u10")], tail: "Q 1\n")
        }
        #expect(throws: StateError(file: "j", line: 2, problem: "\"F\" takes 2 fields, found \"F 1\"")) {
            _ = try replay([], tail: "F 1\n")
        }
        #expect(throws: StateError(file: "j", line: 1, problem: "not a mo-sync journal (expected \"mo-sync-journal 1\")")) {
            _ = try JournalCodec.replay(Array("junk\n".utf8), over: base, file: "j")
        }
    }
}

struct StateStoreTests {
    /// Issue #14: the key of any folder path, however long or deep, leaves room for `.state.new`.
    @Test func keysOfLongAndDeepPathsFitAFileName() throws {
        #expect(FolderStateStore.key(forLocalPath: "Lists/dev") == "=Lists%2Fdev")
        let fits = String(repeating: "x", count: 244)
        #expect(FolderStateStore.key(forLocalPath: fits) == "=" + fits)  // unchanged: it always fitted
        let long = String(repeating: "x", count: 250)
        let deep = Array(repeating: "a", count: 100).joined(separator: "/")
        let keys = [long, deep, deep + "/a", long + "/" + long].map(FolderStateStore.key(forLocalPath:))
        #expect(keys.allSatisfy { $0.utf8.count <= 194 && $0.hasPrefix("=") && $0.contains("%%") })
        #expect(Set(keys).count == keys.count)
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        for key in keys {
            let store = FolderStateStore(accountDirectory: dir.path, key: key)
            store.append(.status(uidValidity: 1, uidNext: 2, highestModSeq: 3))
            try store.flush()
            try store.commit(FolderState(mailbox: deep, uidValidity: 1, uidNext: 2, highestModSeq: 3), completeTable: RecordTable([]))
            #expect(try store.loadHeader()?.mailbox == deep)
        }
    }

    @Test func journalThenCommit() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = FolderStateStore(accountDirectory: dir.path, key: FolderStateStore.key(forLocalPath: "Lists/dev"))
        #expect(store.statePath == dir.path + "/=Lists%2Fdev.state")
        #expect(!store.exists)
        var state = try store.load(mailbox: "Lists/dev").state
        #expect(state == FolderState(mailbox: "Lists/dev"))

        store.append(.status(uidValidity: 9, uidNext: 3, highestModSeq: 7))
        store.append(.fetchIntent(uid: 1, unique: "a"))
        try store.flush()
        store.append(.record(SyncRecord(uid: 1, unique: "a", flags: flags("S"))))
        try store.flush()

        // A second reader (the next run after a crash) sees the journal replayed.
        let crashed = try FolderStateStore(accountDirectory: dir.path, key: "=Lists%2Fdev").load(mailbox: "x")
        #expect(crashed.state.uidValidity == 9)
        #expect(crashed.records == [SyncRecord(uid: 1, unique: "a", flags: flags("S"))])
        #expect(crashed.pendingFetches.isEmpty)

        state = crashed.state
        state.records = crashed.records
        try store.commit(state, completeTable: crashed.table)  // the first commit makes the state file
        #expect(readWholeFile(store.journalPath) == .failure(ErrnoCode(2)))
        let reloaded = try store.load(mailbox: "x")
        #expect(reloaded.records == state.records)
        state.records = []
        #expect(reloaded.state == state)
    }

    /// Issue #14: a torn last entry (a crash or a full disk cut the append) is ignored by replay and cut
    /// off by the next append, which would otherwise run into it and leave a damaged line in the middle.
    @Test(arguments: ["mo-sync-journal 1\nF 1 a\nR 1 a", "mo-sync-jour"])
    func theNextAppendCutsATornLastEntry(journal: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = FolderStateStore(accountDirectory: dir.path, key: "=INBOX")
        guard case .success = replaceFileAtomically(store.journalPath, Array(journal.utf8)) else { Issue.record("write"); return }
        let replay = try store.load(mailbox: "INBOX")
        #expect(replay.records.isEmpty)
        store.append(.record(SyncRecord(uid: 2, unique: "b", flags: flags("S"))))
        try store.flush()
        let kept = journal.hasPrefix("mo-sync-journal 1\n") ? "mo-sync-journal 1\nF 1 a\n" : "mo-sync-journal 1\n"
        #expect(readWholeFile(store.journalPath) == .success(Array((kept + "R 2 b S\n").utf8)))
        let next = try FolderStateStore(accountDirectory: dir.path, key: "=INBOX").load(mailbox: "INBOX")
        #expect(next.records == [SyncRecord(uid: 2, unique: "b", flags: flags("S"))])
        #expect(next.pendingFetches.map(\.uid) == (journal.contains("F 1") ? [1] : []))
    }

    /// Issue #31: a commit after the first appends the run's entries and one `C` line, O(change) bytes;
    /// the committed header is read from the journal's last line; entries after it mark an interrupted
    /// run; the journal is folded into the state file only past its bound.
    @Test func aCommitAppendsOnlyTheChange() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = FolderStateStore(accountDirectory: dir.path, key: "=INBOX")
        func r(_ uid: UInt32, _ unique: String, _ f: String) -> SyncRecord { SyncRecord(uid: uid, unique: unique, flags: flags(f)) }
        let records = (1...2_000).map { r(UInt32($0), "\(1_700_000_000 + $0).M\($0)P1.host", "S") }
        var state = FolderState(mailbox: "INBOX", uidValidity: 5, uidNext: 2_001, highestModSeq: 90)
        try store.commit(state, completeTable: RecordTable(records))
        guard case .success(let committed) = readWholeFile(store.statePath) else { Issue.record("no state file"); return }

        // A later run changes one flag: the state file is untouched, the journal is the change.
        state.uidNext = 2_002; state.highestModSeq = 91; state.localStamp = LocalStamp(cur: 10, new: 20)
        store.append(.record(r(7, records[6].unique, "FS")))
        try store.commit(state, completeTable: nil)
        #expect(readWholeFile(store.statePath) == .success(committed))
        #expect(
            readWholeFile(store.journalPath)
                == .success(Array("mo-sync-journal 1\nR 7 \(records[6].unique) FS\nC 5 2002 91 10 20\n".utf8)))
        let next = FolderStateStore(accountDirectory: dir.path, key: "=INBOX")
        #expect(!next.isCommitted)
        #expect(try next.loadCommittedHeader() == state)
        #expect(next.isCommitted)
        let loaded = try next.load(mailbox: "INBOX")
        #expect(!loaded.interrupted && loaded.state == state)
        #expect(loaded.table.record(uid: 7) == r(7, records[6].unique, "FS"))

        // An interrupted run's entries after the `C`: no committed header, and the replay says so.
        next.append(.fetchIntent(uid: 2_002, unique: "n"))
        try next.flush()
        #expect(!next.isCommitted)
        let third = FolderStateStore(accountDirectory: dir.path, key: "=INBOX")
        #expect(try third.loadCommittedHeader() == nil)
        #expect(try third.load(mailbox: "INBOX").interrupted && !third.isCommitted)
        // Its commit settles the intent. Below the bound (a quarter of the state file) the journal stays;
        // compacted, it is folded into the state file.
        third.compactionFloor = 0
        state.highestModSeq = 92
        try third.commit(state, completeTable: nil)
        #expect(try third.load(mailbox: "INBOX").pendingFetches.isEmpty)
        #expect(third.hasJournal)
        try third.compact(state, table: nil)
        #expect(readWholeFile(third.journalPath) == .failure(ErrnoCode(2)))
        var expected = state
        expected.records = records
        expected.records[6] = r(7, records[6].unique, "FS")
        #expect(readWholeFile(store.statePath) == .success(StateCodec.render(expected)))
    }

    /// A run that loaded only some UIDs' records sees the journal's entries for them as a full load does.
    @Test func partialLoadReplaysTheJournal() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let store = FolderStateStore(accountDirectory: dir.path, key: "=INBOX")
        func r(_ uid: UInt32, _ unique: String, _ f: String) -> SyncRecord { SyncRecord(uid: uid, unique: unique, flags: flags(f)) }
        let full = FolderState(mailbox: "INBOX", uidValidity: 5, uidNext: 40, highestModSeq: 90)
        try store.commit(
            full,
            completeTable: RecordTable([
                r(0, "local-only", "S"), r(3, "c", ""), r(7, "g", "FS"), r(9, "", "S"), r(12, "l", "R"), r(30, "x y%", "S")
            ]))
        // 7 changes flags, 9 is forgotten, 12 becomes local-only, 3's name moves to 31, 44 is new.
        for e: JournalEntry in [
            .record(r(7, "g", "S")), .drop(uid: 9, unique: ""), .drop(uid: 12, unique: "l"), .record(r(0, "l", "R")),
            .record(r(31, "c", "")), .record(r(44, "new2", "F"))
        ] { store.append(e) }
        try store.commit(FolderState(mailbox: "INBOX", uidValidity: 5, uidNext: 45, highestModSeq: 97), completeTable: nil)
        let uids: Set<UInt32> = [3, 7, 9, 12, 31, 44, 50]
        let partial = try FolderStateStore(accountDirectory: dir.path, key: "=INBOX").load(keepingUIDs: uids)
        let whole = try FolderStateStore(accountDirectory: dir.path, key: "=INBOX").load(mailbox: "INBOX")
        #expect(partial.records == whole.records.filter { uids.contains($0.uid) })
        #expect(partial.records == [r(7, "g", "S"), r(31, "c", ""), r(44, "new2", "F")])
        #expect(partial.uidNext == 45 && partial.highestModSeq == 97)

        // A damaged state file is refused by the compaction, not silently carried on.
        _ = replaceFileAtomically(store.statePath, Array("mo-sync-state 1\nmailbox INBOX\n".utf8))
        store.compactionFloor = 0
        #expect(throws: StateError.self) { try store.commit(full, completeTable: nil) }
    }

    /// An `S` or `C` naming a new UIDVALIDITY drops every record, as the run that saw it dropped its table:
    /// a crash before its commit must not bring back pairs whose UIDs name other messages now.
    @Test func aNewUIDValidityDropsTheOldRecords() throws {
        let base = FolderState(
            mailbox: "INBOX", uidValidity: 5, uidNext: 4,
            records: [SyncRecord(uid: 3, unique: "a", flags: []), SyncRecord(uid: 0, unique: "b", flags: [])])
        for entry in ["S 6 2 0", "C 6 2 0 - -"] {
            let journal = "mo-sync-journal 1\n\(entry)\nR 1 a S\n"
            let replay = try JournalCodec.replay(Array(journal.utf8), over: base, file: "j")
            #expect(replay.records == [SyncRecord(uid: 1, unique: "a", flags: flags("S"))])
        }
        let same = try JournalCodec.replay(Array("mo-sync-journal 1\nS 5 9 0\n".utf8), over: base, file: "j")
        #expect(same.records.count == 2)
    }

    @Test func secondLockIsBusyAndNamesTheHolder() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let lock = try AccountLock(directory: dir.path + "/work", account: "work")
        do {
            _ = try AccountLock(directory: dir.path + "/work", account: "work")
            Issue.record("a second lock was granted")
        } catch {
            #expect(error.kind == .busy)
            #expect(error.description.contains("another mo-sync is running for account work (pid \(getpid()))"))
        }
        _ = lock
    }

    /// A full disk (or quota) leads the line, as for Maildir writes; other errors do not.
    @Test func aFullDiskLeadsTheLine() {
        let problem = "cannot write: \(errnoDescription(ENOSPC))"
        #expect(
            StateError(file: "/s/=INBOX.journal", problem: problem, kind: .localIO, code: ENOSPC).description
                == "disk full: /s/=INBOX.journal: cannot write: No space left on device")
        #expect(StateError(file: "/s/=INBOX.state", problem: "x", kind: .localIO, code: EDQUOT).description.hasPrefix("disk full: "))
        #expect(StateError(file: "/s/=INBOX.state", problem: "x", kind: .localIO, code: EACCES).description == "/s/=INBOX.state: x")
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// The compact table against a plain model: random upserts and removals, every lookup compared.
struct RecordTableTests {
    /// A file exactly as recorded, whose message the server did not change, settles its pair: left out of
    /// `unsettledRecords`, kept in lookups; a replaced or removed record is no longer settled.
    @Test func settleMarksOnlyExactUnchangedPairs() {
        var table = RecordTable([
            SyncRecord(uid: 1, unique: "a", flags: MaildirFlags(letters: "S")!),
            SyncRecord(uid: 2, unique: "b", flags: []), SyncRecord(uid: 3, unique: "c", flags: []),
            SyncRecord(uid: 0, unique: "t", flags: [])
        ])
        #expect(table.settle(unique: "a", flags: MaildirFlags(letters: "S")!, changedUIDs: []) == .settled)
        #expect(table.settle(unique: "a", flags: MaildirFlags(letters: "S")!, changedUIDs: []) == .duplicate)
        #expect(table.settle(unique: "b", flags: MaildirFlags(letters: "F")!, changedUIDs: []) == .unsettled)
        // A second file of a name kept unsettled is kept too, whatever its letters.
        #expect(table.settle(unique: "b", flags: [], changedUIDs: []) == .unsettled)
        #expect(table.settle(unique: "c", flags: [], changedUIDs: [3]) == .unsettled)
        #expect(table.settle(unique: "t", flags: [], changedUIDs: []) == .unsettled)  // a tombstone
        #expect(table.settle(unique: "new", flags: [], changedUIDs: []) == .unsettled)
        #expect(table.settledCount == 1 && table.count == 4)
        #expect(Set(table.unsettledRecords.map(\.unique)) == ["b", "c", "t"])
        #expect(table.record(unique: "a")?.uid == 1)
        table.upsert(SyncRecord(uid: 1, unique: "a", flags: []))
        #expect(table.settledCount == 0 && table.unsettledRecords.count == 4)
        #expect(table.settle(unique: "a", flags: [], changedUIDs: []) == .settled)
        table.remove(uid: 1, unique: "a")
        #expect(table.settledCount == 0 && table.count == 3)
    }

    @Test func matchesAModelUnderRandomChanges() {
        var rng = SeededGenerator(seed: 0x7AB1E)
        var table = RecordTable([])
        var model: [SyncRecord] = []
        func flags(_ n: Int) -> MaildirFlags { MaildirFlags(letters: ["", "S", "FS", "RS", "a"][n % 5])! }
        for step in 0..<20_000 {
            let uid = UInt32.random(in: 0...300, using: &rng)
            let unique = Bool.random(using: &rng) && uid != 0 ? "" : "u\(Int.random(in: 0...300, using: &rng)).host,S=\(step % 7)"
            if uid == 0 && unique.isEmpty { continue }
            if Int.random(in: 0..<4, using: &rng) == 0, let victim = model.randomElement(using: &rng) {
                table.remove(uid: victim.uid, unique: victim.unique)
                model.removeAll { $0 == victim }
            } else {
                let r = SyncRecord(uid: uid, unique: unique, flags: flags(step))
                table.upsert(r)
                model.removeAll { (uid != 0 && $0.uid == uid) || (!unique.isEmpty && $0.unique == unique) }
                model.append(r)
            }
            // Removing a key that is not there changes nothing.
            table.remove(uid: 9_999, unique: "nothing")
        }
        let sorted = model.sorted { $0.uid != $1.uid ? $0.uid < $1.uid : $0.unique < $1.unique }
        #expect(table.records == sorted)
        #expect(table.count == model.count)
        #expect(Set(table.unorderedRecords) == Set(model))
        for r in model {
            if r.uid != 0 { #expect(table.record(uid: r.uid) == r) }
            if !r.unique.isEmpty { #expect(table.record(unique: r.unique) == r) }
        }
        #expect(table.record(uid: 301) == nil && table.record(unique: "u999.host") == nil && table.record(unique: "") == nil)
    }
}

/// The UID index against a Dictionary: inserts, updates and removals over a small key range, so probe
/// runs wrap around the table's end and deletions shift runs back.
struct UIDIndexTests {
    @Test func matchesADictionary() {
        var rng = SeededGenerator(seed: 0x1D1D)
        var index = UIDIndex()
        var model: [UInt32: Int32] = [:]
        for step in 0..<50_000 {
            let uid = UInt32.random(in: 1...(step < 25_000 ? 40 : 4_000), using: &rng)
            if Bool.random(using: &rng) {
                index[uid] = nil
                model[uid] = nil
            } else {
                index[uid] = Int32(step)
                model[uid] = Int32(step)
            }
            if step % 997 == 0 { for k in UInt32(1)...4_001 { #expect(index[k] == model[k]) } }
        }
        #expect(index.count == model.count)
        for k in UInt32(1)...4_001 { #expect(index[k] == model[k]) }
        #expect(index[0] == nil)
        index.reserveCapacity(100_000)
        for (k, v) in model { #expect(index[k] == v) }
    }
}

/// `<key>.extra`: the base of the keywords beyond the letters, strict like the state file.
@Suite struct ExtraKeywordBaseTests {
    @Test func roundTripAndStrictLines() throws {
        var b = ExtraKeywordBase()
        b.set(["k27", "a b"], uid: 4711, unique: "1700000000.M1P2.host")
        b.set([], uid: 5, unique: "gone")
        #expect(String(decoding: b.rendered, as: UTF8.self) == "extra 1\n4711\t1700000000.M1P2.host\ta%20b k27\n")
        #expect(try ExtraKeywordBase.parse(b.rendered, file: "X") == b)
        for (text, message) in [
            ("extra 2\n", "X:1"), ("extra 1\n0\tu\tk\n", "X:2"), ("extra 1\n1\tu\n", "X:2"),
            ("extra 1\n1\tu\tk\n1\tv\tk\n", "UID 1 given twice"), ("extra 1\n1\tu\tk", "X:2")
        ] {
            let error = #expect(throws: StateError.self) { try ExtraKeywordBase.parse(Array(text.utf8), file: "X") }
            #expect("\(error.map { "\($0)" } ?? "")".contains(message), "\(text)")
        }
    }

    @Test func savedBesideTheStateAndRemovedWithIt() throws {
        let dir = TempDirectory()
        let store = FolderStateStore(accountDirectory: dir.path, key: "=INBOX")
        #expect(store.extraPath == dir.path + "/=INBOX.extra")
        var b = ExtraKeywordBase()
        b.set(["k"], uid: 1, unique: "u")
        try b.save(store.extraPath)
        #expect(try ExtraKeywordBase.load(store.extraPath) == b)
        try store.remove()
        #expect(try ExtraKeywordBase.load(store.extraPath).isEmpty)
    }
}

/// `downloads`: the last 24 hours of body downloads, per hour.
@Suite struct DownloadLogTests {
    @Test func aRollingDay() throws {
        var log = DownloadLog()
        let t = 1_700_000_000
        log.add(100, now: t)
        log.add(50, now: t + 60)
        log.add(7, now: t + 3 * 3600)
        #expect(log.last24Hours(now: t + 3 * 3600) == 157)
        #expect(log.last24Hours(now: t + 24 * 3600) == 157)  // by whole hours: a day and a part
        #expect(log.last24Hours(now: t + 25 * 3600) == 7)  // the first hour more than a day old
        log.add(1, now: t + 26 * 3600)
        #expect(log.byHour.count == 2)  // older hours forgotten
        let dir = TempDirectory()
        try log.save(in: dir.path)
        #expect(DownloadLog.load(in: dir.path) == log)
        // Damaged or absent: no downloads (the server's refusal still stops a run).
        #expect(DownloadLog.load(in: dir.path + "/none").byHour.isEmpty)
    }
}
