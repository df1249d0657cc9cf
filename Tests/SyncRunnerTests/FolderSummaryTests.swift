@testable import SyncRunner

/// Summary lines and notes quote mailbox names and server texts: escaped for the terminal (issue #14).
@Suite struct FolderSummaryTests {
    @Test func linesAndNotesAreEscaped() {
        var s = FolderSummary(folder: "Evil\u{1B}]0;title\u{7}")
        s.error = "imap h:993: SELECT refused: \u{1B}[2Jgone\u{9B}"
        s.notes = ["created mailbox a\nb"]
        #expect(s.line == "Evil\\u{1B}]0;title\\u{7}: failed: imap h:993: SELECT refused: \\u{1B}[2Jgone\\u{9B}")
        #expect(s.noteLines == ["created mailbox a\\u{A}b"])
        #expect(s.json.text.contains("\\u001b[2Jgone\\u009b"))
    }

    /// A message deleted on both sides is one deletion in the line (the JSON keeps each side's count).
    @Test func aMessageDeletedOnBothSidesCountsOnce() {
        var s = FolderSummary(folder: "INBOX")
        s.deletedLocal = 2
        s.deletedRemote = 1
        s.deletedBoth = 1
        #expect(s.line == "INBOX: -2 deleted")
        #expect(s.json.text.contains("\"deleted_local\":2") && s.json.text.contains("\"deleted_remote\":1"))
    }
}
