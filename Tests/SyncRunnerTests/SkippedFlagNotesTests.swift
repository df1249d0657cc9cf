@testable import SyncRunner

/// The one-line notes for FLAGS tokens the parser skipped (issue #14): folder and UID named, tokens escaped,
/// a flood summed up.
@Suite struct SkippedFlagNotesTests {
    static func info(_ uid: UInt32, _ skipped: [[UInt8]]) -> MessageInfo {
        var m = MessageInfo(sequenceNumber: uid)
        m.uid = uid
        m.flags = [.seen]
        m.skippedFlags = skipped
        return m
    }

    @Test func notesNameFolderAndUIDWithTokensEscaped() {
        var summary = FolderSummary(folder: "INBOX")
        var notes = SkippedFlagNotes()
        notes.note(Self.info(4, []), in: &summary)
        notes.note(Self.info(5, [[0x5C], [0x1B, 0x5B, 0x32, 0x4A, 0xFF]]), in: &summary)
        notes.finish(&summary)
        #expect(summary.notes == ["INBOX: UID 5: malformed flag \"\\\\\" \"\\u{1B}[2J\\xFF\" from the server; skipped"])
    }

    @Test func aFloodIsSummedUp() {
        var summary = FolderSummary(folder: "Lists")
        var notes = SkippedFlagNotes()
        for uid in UInt32(1)...100 { notes.note(Self.info(uid, [[0x5C]]), in: &summary) }
        notes.finish(&summary)
        #expect(summary.notes.count == SkippedFlagNotes.shown + 1)
        #expect(summary.notes.last == "Lists: 95 more message(s) with malformed flags; skipped")
    }
}
