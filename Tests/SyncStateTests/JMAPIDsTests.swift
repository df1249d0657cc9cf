import MoCore
import MoTestSupport
import Testing

@testable import SyncState

#if canImport(Glibc)
    import Glibc
#endif

/// The JMAP account's numbering of Email ids and states: appended durably, read back strictly, the last
/// state read alone.
@Suite struct JMAPIDsTests {
    @Test func numbersIDsAndStatesOnceAndReadsThemBack() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var ids = try JMAPIDs.open(in: dir.path, newEpoch: { 4242 })
        #expect(ids.epoch == 4242 && ids.lastNumber == 0 && ids.latest == nil)
        #expect(JMAPIDs.lastState(in: dir.path) == nil)
        #expect(try ids.record(newIDs: ["Ma", "Mb"], state: "s 1%") == 1)
        #expect(try ids.record(newIDs: ["Mb", "Mc"], state: "s 1%") == 1)  // Mb known, the state too
        #expect(try ids.record(newIDs: [], state: "s2") == 2)
        #expect(ids.number(of: "Mc") == 3 && ids.id(of: 2) == "Mb" && ids.id(of: 4) == nil && ids.id(of: 0) == nil)
        #expect(ids.mark(of: "s 1%") == 1 && ids.state(of: 2) == "s2")
        let text = String(decoding: try readWholeFile(ids.path).get(), as: UTF8.self)
        #expect(text == "mo-jmap-ids 1 4242\ni 1 Ma\ni 2 Mb\ns 1 s%201%25\ni 3 Mc\ns 2 s2\n")
        let again = try JMAPIDs.open(in: dir.path, newEpoch: { 1 })
        #expect(again.epoch == 4242 && again.lastNumber == 3 && again.number(of: "Mb") == 2 && again.latest! == (2, "s2"))
        #expect(JMAPIDs.lastState(in: dir.path)! == (4242, 2, "s2"))
        // The last line an "i" line: the ids must be read.
        var more = again
        try more.record(newIDs: ["Md"], state: nil)
        #expect(JMAPIDs.lastState(in: dir.path) == nil)
    }

    @Test func aTornLastLineIsNotRead() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try replaceFileAtomically(dir.path + "/jmap-ids", Array("mo-jmap-ids 1 7\ni 1 Ma\ni 2 M".utf8)).get()
        var ids = try JMAPIDs.open(in: dir.path)
        #expect(ids.lastNumber == 1)
        try ids.record(newIDs: ["Mz"], state: "9")
        let text = String(decoding: try readWholeFile(ids.path).get(), as: UTF8.self)
        #expect(text == "mo-jmap-ids 1 7\ni 1 Ma\ni 2 Mz\ns 1 9\n")
    }

    @Test(arguments: [
        ("mo-jmap-ids 2 7\n", 1, "not a jmap-ids file"),
        ("mo-jmap-ids 1 0\n", 1, "not a jmap-ids file"),
        ("mo-jmap-ids 1 7\ni 2 Ma\n", 2, "out of order"),
        ("mo-jmap-ids 1 7\ni 1 Ma\ni 2 Ma\n", 3, "numbered twice"),
        ("mo-jmap-ids 1 7\ni 1 M/a\n", 2, "not \"i NUMBER ID\""),
        ("mo-jmap-ids 1 7\ni +1 Ma\n", 2, "not \"i NUMBER ID\""),
        ("mo-jmap-ids 1 7\ni 1 Ma x\n", 2, "not \"i NUMBER ID\""),
        ("mo-jmap-ids 1 7\ni 1  Ma\n", 2, "not \"i NUMBER ID\""),
        ("mo-jmap-ids 1 7\ni 4294967296 Ma\n", 2, "not \"i NUMBER ID\""),
        ("mo-jmap-ids 1 7\ni 1\n", 2, "not \"i NUMBER ID\""),
        ("mo-jmap-ids 1 7\ns 2 x\n", 2, "mark 2 out of order"),
        ("mo-jmap-ids 1 7\ns 1 %zz\n", 2, "not \"s MARK STATE\""),
        ("mo-jmap-ids 1 7\nx 1 Ma\n", 2, "neither")
    ])
    func strictReplay(text: String, line: Int, problem: String) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        _ = try replaceFileAtomically(dir.path + "/jmap-ids", Array(text.utf8)).get()
        #expect {
            _ = try JMAPIDs.open(in: dir.path)
        } throws: { error in
            let e = error as? StateError
            return e?.line == line && e?.problem.contains(problem) == true
        }
    }

    @Test func anUnusableIDFromTheServerIsRefusedAndNothingIsWritten() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var ids = try JMAPIDs.open(in: dir.path, newEpoch: { 3 })
        #expect(throws: StateError.self) { try ids.record(newIDs: ["Ma", "bad id\n"], state: "1") }
        #expect(ids.number(of: "Ma") == nil && ids.lastNumber == 0)
        #expect(String(decoding: try readWholeFile(ids.path).get(), as: UTF8.self) == "mo-jmap-ids 1 3\n")
    }

    @Test func theMarkRoundTripsAndAnythingElseReadsAsNone() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        #expect(JMAPMark.load(in: dir.path) == nil)
        var mark = JMAPMark(mailboxState: "d1 gest")
        try mark.save(in: dir.path)
        #expect(JMAPMark.load(in: dir.path) == mark)
        mark.counts = JMAPMark.Counts(epoch: 7, mark: 3, uidNext: 61, views: ["INBOX": 20, "Archive": 40])
        try mark.save(in: dir.path)
        #expect(JMAPMark.load(in: dir.path) == mark)
        mark.ownFrom = 2
        try mark.save(in: dir.path)
        #expect(JMAPMark.load(in: dir.path) == mark)
        mark.ownFrom = nil
        try mark.save(in: dir.path)
        #expect(
            String(decoding: try readWholeFile(dir.path + "/jmap-mark").get(), as: UTF8.self)
                == "mo-jmap-mark 1\nmailboxes d1%20gest\ncounts 7 3 61 Archive=40 INBOX=20\n")
        for bad in [
            "mo-jmap-mark 2\nmailboxes x\n", "mo-jmap-mark 1\n", "mo-jmap-mark 1\nmailboxes x\ncounts 7 3\n",
            "mo-jmap-mark 1\nmailboxes x\ncounts 7 3 61 INBOX=1 INBOX=2\n"
        ] {
            _ = try replaceFileAtomically(dir.path + "/jmap-mark", Array(bad.utf8)).get()
            #expect(JMAPMark.load(in: dir.path) == nil, "\(bad)")
        }
    }
}
