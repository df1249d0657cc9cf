import Testing
@testable import SyncRunner

/// Summary lines and notes quote mailbox names and server texts: escaped for the terminal (issue #14).
@Suite struct FolderSummaryTests {
    @Test func linesAndNotesAreEscaped() {
        var s = FolderSummary(folder: "Evil\u{1B}]0;title\u{7}")
        s.error = "imap h:993: SELECT refused: \u{1B}[2Jgone\u{9B}"
        s.notes = ["created mailbox a\nb"]
        #expect(s.line == "Evil\\u{1B}]0;title\\u{7}: failed: imap h:993: SELECT refused: \\u{1B}[2Jgone\\u{9B}")
        #expect(s.noteLines == ["created mailbox a\\u{A}b"])
        #expect(s.json.contains("\\u001b[2Jgone\\u009b"))
    }
}
