import Testing
@testable import MoConfig

@Suite struct FolderFilterTests {
    @Test(
        arguments: [
            // patterns, mailbox, delimiter, included?
            (["*"], "INBOX", "/", true),
            (["*"], "Lists/dev/swift", "/", true),
            (["%"], "Lists", "/", true),
            (["%"], "Lists/dev", "/", false),
            (["Lists/%"], "Lists/dev", "/", true),
            (["Lists/%"], "Lists/dev/swift", "/", false),
            (["Lists/*"], "Lists/dev/swift", "/", true),
            (["Lists/*"], "Lists", "/", false),
            (["Lists*"], "Lists", "/", true),
            (["%/dev"], "Lists/dev", "/", true),
            (["%/dev"], "a/b/dev", "/", false),
            (["*/dev"], "a/b/dev", "/", true),
            (["Lists.%"], "Lists.dev", ".", true),
            (["Lists.%"], "Lists.dev.swift", ".", false),
            (["%"], "Lists/dev", nil, true),  // flat server: % cannot stop at a delimiter
            (["Sent"], "Sent", "/", true),
            (["Sent"], "sent", "/", false),  // only INBOX ignores case
            (["inbox"], "INBOX", "/", true),
            (["INBOX"], "Inbox", "/", true),
            (["INBOX/%"], "inbox/Receipts", "/", true),
            (["*", "!Spam"], "Spam", "/", false),
            (["*", "!Spam"], "Spam/old", "/", true),
            (["*", "!Spam*"], "Spam/old", "/", false),
            (["*", "!Trash/%"], "Trash", "/", true),
            (["*", "!Trash/%"], "Trash/2024", "/", false),
            (["!Spam"], "Work", "/", true),  // only excludes: everything else is in
            (["!Spam"], "Spam", "/", false),
            (["Work", "!Work"], "Work", "/", false),  // an exclude wins over an include
            (["INBOX", "Archive/%"], "Archive/2023", "/", true),
            (["INBOX", "Archive/%"], "Drafts", "/", false),
            (["*a*b*c*"], "xaybzc", "/", true),
            (["*a*b*c*"], "xaybz", "/", false)
        ] as [([String], String, Character?, Bool)])
    func includes(patterns: [String], mailbox: String, delimiter: Character?, expected: Bool) {
        #expect(FolderFilter(patterns: patterns).includes(mailbox, delimiter: delimiter) == expected)
    }

    @Test func noBacktrackingBlowUp() {
        let filter = FolderFilter(patterns: [String(repeating: "*a", count: 30) + "b"])
        #expect(!filter.includes(String(repeating: "a", count: 200), delimiter: "/"))
    }
}
