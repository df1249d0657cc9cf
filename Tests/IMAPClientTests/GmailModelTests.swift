import Testing
import IMAPCodec
import MoCore
import MoNet
import MoTestSupport
@testable import IMAPClient

/// The Gmail-model test server (`GmailModel`, issue 26), driven by the real client: what each behaviour its
/// sources describe looks like on the wire, and that the codec reads Gmail's attributes from it.
@Suite struct GmailModelTests {
    static func body(_ subject: String) -> [UInt8] {
        Array("From: a@example.com\r\nSubject: \(subject)\r\nMessage-ID: <\(subject)@gmail.test>\r\n\r\nHi.\r\n".utf8)
    }

    /// An inbox message with a user label, an archived one, a sent one, a starred inbox one.
    static func model() -> GmailModel {
        GmailModel([
            (["\\Inbox", "Work"], ["\\Seen"], body("one")),
            ([], [], body("archived")),
            (["\\Sent"], ["\\Seen"], body("sent")),
            (["\\Inbox", "\\Important"], ["\\Flagged"], body("starred"))
        ])
    }

    static func connect(_ model: GmailModel) throws -> (ScriptedIMAPServer, IMAPConnection) {
        let server = try ScriptedIMAPServer(greeting: GmailModel.greeting, script: { model.answer($0) })
        let c = try IMAPConnection.open(
            IMAPSettings(
                host: "127.0.0.1", port: server.port, security: .none, user: "me@gmail.com", authentication: .auto,
                tls: TLSOptions(), timeout: 10, secret: { "pw" }))
        return (server, c)
    }

    static func labels(_ m: MessageInfo) -> Set<String> { Set((m.gmail.labels ?? []).map { String(decoding: $0, as: UTF8.self) }) }

    @Test func foldersAreViewsOfLabelsWithOneIDAcrossThem() throws {
        let model = Self.model()
        let (server, c) = try Self.connect(model)
        defer { c.logout(); server.stop() }
        #expect(c.capabilities.contains("X-GM-EXT-1") && c.capabilities.contains(.condstore) && !c.capabilities.contains(.qresync))
        let names = Set(try c.list().map { String(decoding: $0.mailbox.wire, as: UTF8.self) })
        #expect(names.isSuperset(of: ["INBOX", "[Gmail]/All Mail", "[Gmail]/Sent Mail", "[Gmail]/Starred", "Work"]))

        let items: [FetchItem] = [.uid, .gmailMessageID, .gmailThreadID, .gmailLabels, .flags]
        _ = try c.select(MailboxName("[Gmail]/All Mail"))
        let all = try c.fetchInfo(UIDSet(1...UIDSet.star), items: items).messages
        #expect(all.count == 4)  // every message once, archived included
        _ = try c.select(MailboxName("INBOX"))
        let inbox = try c.fetchInfo(UIDSet(1...UIDSet.star), items: items).messages
        #expect(inbox.count == 2)
        // Same X-GM-MSGID in every folder; per-folder UIDs; \Inbox not listed in INBOX's own view.
        let one = try #require(inbox.first)
        #expect(all.contains { $0.gmail.messageID == one.gmail.messageID })
        #expect(Self.labels(one) == ["Work"])
        _ = try c.select(MailboxName("Work"))
        #expect(try c.fetchInfo(UIDSet(1...UIDSet.star), items: items).messages.map(\.gmail.messageID) == [one.gmail.messageID])
        _ = try c.select(MailboxName("[Gmail]/Starred"))
        let starred = try c.fetchInfo(UIDSet(1...UIDSet.star), items: items).messages
        #expect(starred.count == 1 && starred[0].flags?.contains(.flagged) == true)
    }

    @Test func labelsChangeByStoreCopyMoveAndExpunge() throws {
        let model = Self.model()
        let (server, c) = try Self.connect(model)
        defer { c.logout(); server.stop() }
        _ = try c.select(MailboxName("INBOX"))
        let inbox = try c.fetchInfo(UIDSet(1...UIDSet.star), items: [.uid, .gmailMessageID]).messages
        let first = inbox[0]
        // +X-GM-LABELS adds a label (and its folder); \Seen set in one folder is seen in every folder.
        _ = try c.run(.uidStoreGmailLabels(UIDSet(first.uid), .add, [Array("Travel".utf8)]))
        _ = try c.run(.uidStore(UIDSet(inbox[1].uid), StoreAction(.add, [.seen])))
        #expect(model.messages.first { $0.id == first.gmail.messageID }?.labels.contains("Travel") == true)
        _ = try c.select(MailboxName("[Gmail]/All Mail"))
        let seen = try c.fetchInfo(UIDSet(1...UIDSet.star), items: [.uid, .gmailMessageID, .flags]).messages
        #expect(seen.first { $0.gmail.messageID == inbox[1].gmail.messageID }?.flags?.contains(.seen) == true)
        // COPY to a label folder adds the label; MOVE out of INBOX archives it ([LBL]).
        _ = try c.select(MailboxName("INBOX"))
        _ = try c.move(UIDSet(first.uid), to: MailboxName("[Gmail]/All Mail"))
        let archived = model.messages.first { $0.id == first.gmail.messageID }!
        #expect(!archived.labels.contains("\\Inbox") && archived.labels.contains("Work"))
        // Expunged in a label folder: only that label goes; the message stays in All Mail.
        _ = try c.select(MailboxName("Work"))
        _ = try c.run(.uidStore(UIDSet(1...UIDSet.star), StoreAction(.add, [.deleted])))
        _ = try c.expungeAll()
        #expect(model.messages.count == 4)
        #expect(model.messages.first { $0.id == first.gmail.messageID }?.labels == ["Travel"])
        // Expunged in All Mail: to Trash. Expunged in Trash: gone.
        _ = try c.select(MailboxName("[Gmail]/All Mail"))
        let uid = try c.fetchInfo(UIDSet(1...UIDSet.star), items: [.uid, .gmailMessageID]).messages.first {
            $0.gmail.messageID == first.gmail.messageID
        }!.uid
        _ = try c.run(.uidStore(UIDSet(uid), StoreAction(.add, [.deleted])))
        _ = try c.expungeAll()
        #expect(model.messages.first { $0.id == first.gmail.messageID }?.labels == ["\\Trash"])
        _ = try c.select(MailboxName("[Gmail]/Trash"))
        _ = try c.run(.uidStore(UIDSet(1...UIDSet.star), StoreAction(.add, [.deleted])))
        _ = try c.expungeAll()
        #expect(model.messages.count == 3)
    }

    @Test func condstoreReportsChangesSinceAMark() throws {
        let model = Self.model()
        let (server, c) = try Self.connect(model)
        defer { c.logout(); server.stop() }
        let mark = try #require(try c.select(MailboxName("[Gmail]/All Mail")).highestModSeq)
        #expect(try c.fetchInfo(UIDSet(1...UIDSet.star), changedSince: mark).messages.isEmpty)
        model.webChange { messages in
            let id = messages.keys.sorted()[1]
            messages[id]!.labels.insert("\\Inbox")  // moved to the inbox in the web interface
        }
        let changed = try c.fetchInfo(UIDSet(1...UIDSet.star), items: [.uid, .gmailLabels, .flags], changedSince: mark).messages
        #expect(changed.count == 1 && Self.labels(changed[0]) == ["\\Inbox"])
        #expect(changed[0].modSeq.map { $0 > mark } == true)
        // And an APPEND gets a new id, in its folder's label, with APPENDUID.
        let appended = try c.append(to: MailboxName("[Gmail]/Sent Mail"), flags: [.seen], message: Self.body("new"))
        #expect(appended != nil)
        #expect(model.messages.last?.labels == ["\\Sent"])
    }
}
