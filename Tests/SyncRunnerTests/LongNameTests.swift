@testable import SyncRunner

/// Issue #14: mailbox names as long and as deep as the server allows never make a local file name too
/// long; a folder whose path would pass PATH_MAX is refused alone, with a note naming it.
@Suite struct LongNameTests {
    @Test func longAndDeepMailboxesSyncAndTooLongOneIsRefusedAlone() throws {
        let f = try SyncFixture(seed: false)
        let long = String(repeating: "L", count: 250)  // state key > 255 before
        let escaped = String(repeating: "%", count: 100)  // a 300-byte folder name before
        let deep = Array(repeating: "a", count: 100).joined(separator: "/")  // state key of 398 bytes before
        let tooLong = Array(repeating: String(repeating: "d", count: 39), count: 100).joined(separator: "/")  // 3999 bytes
        let c = try f.imap()
        defer { c.logout() }
        for name in [long, escaped, deep, tooLong] { try c.create(MailboxName(name)) }
        for name in [long, escaped, deep, "INBOX"] {
            try c.append(to: MailboxName(name), flags: [], message: SyncFixture.message("in-\(name.count)"))
        }

        let s = try f.sync()  // no folder error
        let shortened = try #require(s.keys.first { $0.hasPrefix(String(repeating: "%25", count: 53) + "%%") })
        #expect(s[long]?.new == 1 && s[shortened]?.new == 1 && s[deep]?.new == 1 && s["INBOX"]?.new == 1)
        #expect(try f.files(deep).count == 1)
        let notes = s["(account test)"]?.notes ?? []
        #expect(
            notes.contains(
                "mailbox \(quotedForMessage(tooLong)): refused: its folder path would be 3999 bytes; "
                    + "the path limit (PATH_MAX 4096) leaves \(FolderNameMapper.pathBudget(root: f.maildir)) under the Maildir root"),
            "\(notes)")
        #expect(!notes.contains { $0.contains("nested deeper") }, "\(notes)")  // the folder walk goes 100 levels down
        #expect(try f.sync().values.allSatisfy { !$0.changed })

        // A folder made locally under the shortened one is created on the server under the full name.
        try MaildirFolder(path: f.maildir + "/" + shortened + "/child").create()
        try f.addLocal(shortened + "/child", subject: "made-here")
        let again = try f.sync()
        #expect(again[shortened + "/child"]?.uploaded == 1)
        #expect(try c.list().contains { $0.mailbox.decoded == escaped + "/child" })

        // The binary ends well: one refused mailbox is a note, not a temporary failure (75).
        let run = try f.runBinary()
        #expect(run.status == 0, "\(run.stderrString)")
    }
}
