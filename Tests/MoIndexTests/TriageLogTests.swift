import Glibc
import Testing
import Maildir
import MoCore
import MoTestSupport
@testable import MoIndex

/// The triage log's format (docs/action-journal.md, "The triage log"): written, read back, strict.
@Suite struct TriageLogTests {
    func withLog(_ body: (TriageLog, String) throws -> Void) throws {
        let dir = try TemporaryDirectory("mo-triage-log")
        defer { dir.remove() }
        try body(TriageLog(path: dir.path + "/triage.journal"), dir.path + "/triage.journal")
    }

    func text(_ path: String) -> String {
        guard case .success(let b) = readWholeFile(path) else { return "" }
        return String(decoding: b, as: UTF8.self)
    }

    @Test func roundTripWithEscapes() throws {
        try withLog { log, path in
            let change = KeywordMove.Change(addKeywords: ["$snoozed-20261128T080000Z", "a,b"], removeFlags: .seen)
            let id = try #require(
                try log.begin(
                    "mo-index snooze from:bob 'tomorrow 09:00'",
                    changes: [
                        .file(from: "/m/IN BOX", to: "/m/Snoozed", unique: "1.M2P3.host", change: change),
                        .tag(messageID: "a%b@x", add: ["to do"], remove: [])
                    ], now: 1_795_308_806))
            try log.end(id, now: 1_795_308_807)
            let lines = text(path).split(separator: "\n").map(String.init)
            #expect(lines.count == 5 && lines[0] == "mo-triage 1")
            #expect(lines[1] == "\(id) begin at=1795308806 command=mo-index%20snooze%20from:bob%20'tomorrow%2009:00'")
            #expect(lines[2] == "\(id) file from=/m/IN%20BOX to=/m/Snoozed unique=1.M2P3.host kw+=$snoozed-20261128T080000Z,a%2Cb flags-=S")
            #expect(lines[3] == "\(id) tag msgid=a%25b@x add=to%20do")
            let commands = try log.load()
            #expect(commands.count == 1 && commands[0].ended && !commands[0].undone)
            #expect(commands[0].changes.first == .file(from: "/m/IN BOX", to: "/m/Snoozed", unique: "1.M2P3.host", change: change))
            #expect(commands[0].changes.last == .tag(messageID: "a%b@x", add: ["to do"], remove: []))
            try log.markUndone(id)
            #expect(try log.load()[0].undone)
        }
    }

    @Test func noChangeWritesNothingAndATornLineIsIgnored() throws {
        try withLog { log, path in
            #expect(try log.begin("mo-index flag +seen -- x", changes: []) == nil)
            #expect(access(path, F_OK) != 0)
            let id = try #require(try log.begin("c", changes: [.tag(messageID: "m@x", add: ["a"], remove: [])]))
            try "\(text(path))\(id) end at=1".write(toFile: path, atomically: false, encoding: .utf8)  // torn: no line end
            #expect(try log.load().first?.ended == false, "a torn end is not an end")
            try log.end(id)  // the next writer cuts the torn line first
            #expect(text(path).hasSuffix("\n\(id) end at=\(WallClock.now())\n") || text(path).contains("\(id) end at="))
            #expect(!text(path).contains("end at=1\n"))
            #expect(try log.load().first?.ended == true)
        }
    }

    @Test func strictReplayNamesTheLine() throws {
        try withLog { log, path in
            for (bad, line, words) in [
                ("mo-triage 2\n", 1, "not a triage log"),
                ("mo-triage 1\nx begin at=1 command=c\nx flip a=b\n", 3, "unknown record flip"),
                ("mo-triage 1\ny end at=1\n", 2, "which has no begin"),
                ("mo-triage 1\nx begin at=1 command=c\nx file from=/a unique=u\n", 3, "file without from, to or unique"),
                ("mo-triage 1\nx begin at=1 command=%ZZ\n", 2, "bad field")
            ] {
                try bad.write(toFile: path, atomically: false, encoding: .utf8)
                do {
                    _ = try log.load()
                    Issue.record("accepted: \(bad)")
                } catch let e as TriageLog.Failure {
                    #expect(e.line == line && e.problem.contains(words) && e.kind == .data, "\(e)")
                }
            }
        }
    }

    @Test func boundedToTheLastHundredOfThirtyDays() throws {
        try withLog { log, _ in
            let now = 1_800_000_000
            for i in 0..<(TriageLog.compactAt + 1) {
                try log.begin("c\(i)", changes: [.tag(messageID: "m@x", add: ["t"], remove: [])], now: now - 40 * 86_400 + i * 86_400 / 4)
            }
            try log.begin("last", changes: [.tag(messageID: "m@x", add: ["t"], remove: [])], now: now)
            let commands = try log.load()
            #expect(commands.count <= TriageLog.keep + 1 && commands.last?.command == "last", "\(commands.count)")
            #expect(commands.allSatisfy { now - $0.time < TriageLog.maxAge })
        }
    }
}

/// The snooze keyword.
@Suite struct SnoozeMarkTests {
    @Test func keywordRoundTrip() {
        #expect(SnoozeMark.keyword(for: 1_798_137_000) == "$snoozed-20261224T183000Z")
        #expect(SnoozeMark.time(of: "$snoozed-20261224T183000Z") == 1_798_137_000)
        #expect(SnoozeMark.time(of: "$Snoozed-20261224t183000z") == 1_798_137_000, "servers may fold case")
        for bad in ["$snoozed-2026", "$snoozed-20261324T183000Z", "snoozed-20261224T183000Z", "$snoozed-20261224T183000", "work"] {
            #expect(SnoozeMark.time(of: bad) == nil, "\(bad)")
        }
        #expect(SnoozeMark.time(in: ["work", "$snoozed-20261224T183000Z", "$snoozed-20261124T183000Z"]) == 1_798_137_000 - 30 * 86_400)
    }
}
