import MoCore
import MoHTTP
import MoTestSupport
import Testing

@testable import JMAPClient

/// The client against the private Cyrus 3.6 of scripts/test-cyrus: discovery, mailboxes, import, listing,
/// changes, keyword patches (removed with null: quirk 3 of ../shared/cyrus-jmap.md), `ifInState`, blobs
/// byte for byte, kept-alive connections, and a refused password.
@Suite(.serialized, .enabled(if: CyrusTestServer.usable)) struct JMAPCyrusTests {
    static func client(_ server: CyrusTestServer, password: String? = nil, url: String? = nil) throws -> JMAPClient {
        try JMAPClient(
            sessionURL: WebAddress(url ?? server.sessionURL)!,
            authorization: JMAPClient.basic(user: server.user, password: password ?? server.password))
    }

    static func message(_ n: Int, subject: String) -> [UInt8] {
        Array(
            ("From: a@example.org\r\nTo: mo@example.org\r\nSubject: \(subject)\r\nMessage-ID: <jmap-\(n)-\(subject.hashValue)@example.org>\r\n"
                + "Date: Sat, 28 Nov 2026 04:00:00 +0000\r\n\r\nbody \(n)\r\n").utf8)
    }

    @Test func discoveryFromTheWellKnownAddress() throws {
        let server = try CyrusTestServer.shared()
        let c = try Self.client(server, url: "http://127.0.0.1:\(server.httpPort)/.well-known/jmap")
        #expect(c.sessionURL.target == "/jmap")  // Cyrus's Location
        #expect(c.session.accountID == server.user)
        #expect(c.session.limits.maxObjectsInGet == 4096)
    }

    @Test func aRefusedPasswordIsAnAuthenticationError() throws {
        let server = try CyrusTestServer.shared()
        #expect {
            _ = try Self.client(server, password: "wrong")
        } throws: { error in
            let e = error as? GenericError
            return e?.kind == .authentication && e?.message.contains("wrong") == false && e?.message.contains("HTTP 401") == true
        }
    }

    @Test func importListChangeAndDownload() throws {
        let server = try CyrusTestServer.shared()
        let c = try Self.client(server)
        let (_, boxes) = try c.mailboxes()
        let inbox = try #require(boxes.first { $0.role == "inbox" })
        let (before, _) = try c.allEmailIDs()

        // Import three messages; the same bytes again give the same Email (no second copy).
        var ids: [String] = []
        var blobs: [String: [UInt8]] = [:]
        for n in 0..<3 {
            let bytes = Self.message(n, subject: "import-\(before)")
            let blob = try c.upload(bytes)
            let (id, existed) = try c.importEmail(blobID: blob, mailboxIDs: [inbox.id], keywords: n == 0 ? ["$seen"] : [])
            #expect(!existed)
            ids.append(id)
            blobs[id] = bytes
        }
        let again = try c.importEmail(
            blobID: try c.upload(Self.message(0, subject: "import-\(before)")), mailboxIDs: [inbox.id], keywords: [])
        #expect(again.id == ids[0] && again.existed)

        // The changes since the state before name exactly the new ids; the full listing has them.
        let changes = try c.emailChanges(since: before)
        #expect(Set(changes.created) == Set(ids))
        #expect(changes.destroyed.isEmpty && !changes.hasMoreChanges)
        let (state, all) = try c.allEmailIDs()
        #expect(state == changes.newState)
        #expect(Set(ids).isSubset(of: Set(all)))
        let (_, emails) = try c.emails(ids + ["Mnotthere"])
        #expect(emails.map(\.id) == ids)
        #expect(emails[0].keywords.contains("$seen") && !emails[1].keywords.contains("$seen"))
        #expect(emails.allSatisfy { $0.mailboxIDs == [inbox.id] && blobs[$0.id]?.count == $0.size })

        // Keywords set and removed (null), guarded by the state just read.
        let set = try c.setEmails(
            update: [
                (ids[0], .object([("keywords/$seen", .null), ("keywords/$flagged", .bool(true))])),
                (ids[1], .object([("keywords/work", .bool(true))]))
            ],
            ifInState: state)
        #expect(set.notUpdated.isEmpty)
        let (_, after) = try c.emails([ids[0], ids[1]])
        #expect(after[0].keywords == ["$flagged"] && after[1].keywords == ["work"])
        let updated = try c.emailChanges(since: state)
        #expect(Set(updated.updated) == Set([ids[0], ids[1]]) && updated.created.isEmpty)

        // The old state no longer guards a write.
        #expect(throws: JMAPMethodError.self) {
            _ = try c.setEmails(update: [(ids[2], .object([("keywords/$seen", .bool(true))]))], ifInState: state)
        }

        // Blobs come back byte for byte, streamed.
        for email in emails {
            var got: [UInt8] = []
            try c.download(blobID: email.blobID, maxBytes: 1 << 20) { got += $0 }
            #expect(got == blobs[email.id])
        }

        // Many blobs pipelined on one connection, one the server lacks among them.
        var pieces: [Int: [UInt8]] = [:]
        var found: [Int: Bool] = [:]
        try c.download(
            blobIDs: [emails[0].blobID, "Gnosuchblob", emails[1].blobID], maxBytes: 1 << 20,
            sink: { bytes, i in pieces[i, default: []] += bytes }, done: { i, ok in found[i] = ok })
        #expect(found == [0: true, 1: false, 2: true])
        #expect(pieces[0] == blobs[emails[0].id] && pieces[1] == nil && pieces[2] == blobs[emails[1].id])

        // Destroyed ids show as destroyed.
        let gone = try c.setEmails(destroy: [ids[2]])
        #expect(gone.notDestroyed.isEmpty)
        #expect(try c.emailChanges(since: set.newState).destroyed == [ids[2]])
        // Every request above went over one connection per origin.
        #expect(c.connectionsOpened == 1)
        #expect(c.requests > 10)
    }

    @Test func anUnknownBlobIsNotFoundAndTheConnectionStaysUsable() throws {
        let server = try CyrusTestServer.shared()
        let c = try Self.client(server)
        var got: [UInt8] = []
        #expect(try c.download(blobID: "Gnosuchblob", maxBytes: 1024) { got += $0 } == false)
        #expect(got.isEmpty)
        _ = try c.mailboxes()
        #expect(c.connectionsOpened == 1)
    }

    @Test func mailboxChangesAfterACreate() throws {
        let server = try CyrusTestServer.shared()
        let c = try Self.client(server)
        let (state, boxes) = try c.mailboxes()
        #expect(boxes.contains { $0.role == "inbox" })
        let name = "jmap-test-\(state)"
        let answer = try c.call([
            JMAPCall(
                "Mailbox/set",
                .object([("accountId", .string(c.session.accountID)), ("create", .object([("n", .object([("name", .string(name))]))]))]),
                id: "b")
        ])
        _ = try answer.arguments(for: "b")
        let changes = try c.mailboxChanges(since: state)
        #expect(changes.created.count == 1)
        #expect(try c.mailboxes().mailboxes.contains { $0.name == name && $0.parentID == nil })
    }
}

/// `Blob/get` in batches with two requests in flight (Cyrus with `--blob-get`): every blob in order, an
/// unknown one passed over, and a failure of the caller thrown with every worker ended.
@Suite(.serialized, .enabled(if: CyrusTestServer.usable)) struct JMAPBlobBatchTests {
    @Test func batchesInFlightArriveInOrder() throws {
        let server = try CyrusTestServer.start(blobGet: true)
        defer { server.stop() }
        let client = try JMAPCyrusTests.client(server)
        defer { client.close() }
        let messages = (0..<7).map { JMAPCyrusTests.message($0, subject: "batch \($0)") }
        var blobs = try messages.map { try client.upload($0) }
        blobs.insert("Gunknown0000000000000000000000000000000000", at: 3)
        let batches = [Array(blobs[0..<2]), Array(blobs[2..<5]), Array(blobs[5..<7]), [blobs[7]]]
        let before = client.requests
        var got: [[UInt8]] = []
        var places: [[Int]] = []
        try client.blobs(batches: batches, inFlight: 2) { bytes, b, i in
            got.append(bytes)
            places.append([b, i])
        }
        #expect(got == messages)
        #expect(places == [[0, 0], [0, 1], [1, 0], [1, 2], [2, 0], [2, 1], [3, 0]])
        #expect(client.requests == before + 4)
        struct Full: Error {}
        var handed = 0
        #expect(throws: Full.self) {
            try client.blobs(batches: batches, inFlight: 2) { _, b, _ in
                handed += 1
                if b == 1 { throw Full() }
            }
        }
        #expect(handed == 3)
    }
}
