import Foundation
import Testing
import MoCore
import MoTestSupport

/// Issue #29 in Gmail mode: a date window (`max-age`) over the views, on the Gmail-model server (its
/// `UID SEARCH BEFORE` compares each message's INTERNALDATE by its UTC date, RFC 3501). Only what arrived
/// inside the window, or is unread or starred, is downloaded; nothing outside is ever deleted, trashed or
/// relabelled; a web star on an old message brings it in.
@Suite(.serialized) struct GmailWindowTests {
    static func body(_ subject: String) -> [UInt8] {
        Array(
            "From: a@example.com\r\nTo: me@example.com\r\nSubject: \(subject)\r\nMessage-ID: <\(subject)@gmail.test>\r\n\r\nbody of \(subject)\r\n"
                .utf8)
    }

    @Test func aWindowOverTheViews() throws {
        let model = GmailModel()
        let now = Int64(time(nil))
        for i in 0..<4 {
            model.deliver(labels: ["\\Inbox"], flags: ["\\Seen"], body: Self.body("old-inbox-\(i)"), arrived: now - 800 * 86_400)
        }
        for i in 0..<2 { model.deliver(labels: [], flags: ["\\Seen"], body: Self.body("old-archived-\(i)"), arrived: now - 900 * 86_400) }
        model.deliver(labels: ["\\Inbox"], flags: [], body: Self.body("old-unread"), arrived: now - 700 * 86_400)
        for i in 0..<2 { model.deliver(labels: ["\\Inbox"], flags: ["\\Seen"], body: Self.body("recent-\(i)"), arrived: now - 3 * 86_400) }
        let server = try ScriptedIMAPServer(greeting: GmailModel.greeting, script: model.answer)
        let run = try ScriptedRun(server, account: "[account.t.sync]\nconnections = 1\nmax-age = \"365d\"\n")
        defer { run.remove() }

        let first = try run.sync()
        #expect(first.status == 0, "\(first.stderrString)")
        #expect(try run.files("INBOX").count == 3, "two recent, one unread")
        #expect(((try? run.files("Archive")) ?? []).isEmpty)
        #expect(model.bodyDownloads.count == 3)

        // Runs with nothing new: nothing downloaded, nothing trashed or relabelled on the server.
        let labels = model.messages.map(\.labels)
        for _ in 0..<2 { #expect(try run.sync().status == 0) }
        #expect(model.bodyDownloads.count == 3)
        #expect(model.messages.map(\.labels) == labels)

        // Starred on the web: the old message comes in, once.
        model.webChange { messages in
            if let id = messages.values.first(where: { String(decoding: $0.body, as: UTF8.self).contains("old-archived-0") })?.id {
                messages[id]?.flags.insert("\\Flagged")
            }
        }
        let starred = try run.sync()
        #expect(starred.status == 0, "\(starred.stderrString)")
        #expect(try run.files("Archive").count == 1)
        #expect(model.bodyDownloads.count == 4 && model.bodyDownloads.values.allSatisfy { $0 == 1 })
        #expect(model.messages.map(\.labels) == labels)
    }
}
