import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue 26: Gmail's conversation id (X-GM-THRID) is kept, so a search can ask for a Gmail conversation.
/// mo-sync asks it with each body it downloads in Gmail mode and keeps it in the file's name (`,G=`), which
/// every move between views keeps; mo-index answers `gmail-thread:ID` and `gmail-thread:{query}`.
@Suite(.serialized) struct GmailThreadTests {
    @Test func theConversationTravelsWithTheFileAndIsSearchable() throws {
        let a = try GmailModeTests.Account(24)
        defer { a.run.remove(); a.index.remove() }
        // One conversation across three views, as Gmail groups a thread whatever each message's labels.
        let inbox = try #require(a.model.messages.first { $0.labels.contains("\\Inbox") && !$0.labels.contains("\\Sent") })
        let sent = try #require(a.model.messages.first { $0.labels.contains("\\Sent") && !$0.labels.contains("\\Inbox") })
        let archived = try #require(a.model.messages.first { $0.labels.isEmpty })
        let conversation = inbox.thread
        a.model.webChange { messages in
            for id in [sent.id, archived.id] { messages[id]!.thread = conversation }
        }
        _ = try a.sync()

        // Every downloaded file names its conversation.
        let root = a.run.maildir
        var named: [String: String] = [:]
        for view in ["INBOX", "Sent", "Archive"] {
            for f in try a.files(view) {
                let body = try String(contentsOfFile: root + "/" + view + "/" + f, encoding: .isoLatin1)
                named[GmailModeTests.messageID(Array(body.utf8))] = view + "/" + f
            }
        }
        for m in a.model.messages where !m.labels.contains("\\Trash") && !m.labels.contains("\\Spam") {
            let file = try #require(named[GmailModeTests.messageID(m.body)])
            #expect(file.contains(",G=\(m.thread)"), "\(file)")
        }

        // Searchable by the id and from any message of it.
        #expect(try a.count("gmail-thread:\(conversation)") == 3)
        let id = "id:" + GmailModeTests.messageID(archived.body).dropFirst().dropLast()
        #expect(try a.count("gmail-thread:{\(id)}") == 3)
        #expect(try a.count("gmail-thread:{\(id)} AND folder:t/INBOX") == 1)

        // Archived in neomutt (a rename into Archive keeping the name): the conversation stays with it.
        let file = try #require(named[GmailModeTests.messageID(inbox.body)])
        let name = String(file.split(separator: "/").last!)
        #expect(rename(root + "/" + file, root + "/Archive/cur/" + name) == 0)
        _ = try a.sync()
        #expect(a.model.messages.first { $0.id == inbox.id }!.labels.contains("\\Inbox") == false)
        #expect(try a.count("gmail-thread:\(conversation) AND folder:t/Archive") == 2)
        #expect(try a.count("gmail-thread:{\(id)}") == 3)
        #expect(a.model.bodyDownloads.values.allSatisfy { $0 == 1 })
    }
}
