#if canImport(Glibc)
    import Glibc
#endif
@testable import JMAPClient
import MoCore
import MoHTTP
import MoTestSupport
import Synchronization
import Testing

/// JMAP push (RFC 8620 §7.3): the event-stream parser fed whole and byte by byte, the `StateChange`
/// reading, and the client against the tests' own EventSource endpoint (`PushTestServer`).
@Suite struct JMAPPushTests {
    static func events(_ text: String, byteByByte: Bool) throws -> [ServerSentEvent] {
        var parser = EventStreamParser()
        let bytes = Array(text.utf8)
        if !byteByByte { return try parser.append(bytes) }
        return try bytes.flatMap { try parser.append([$0]) }
    }

    @Test(arguments: [false, true])
    func eventsLineEndsCommentsAndFields(byteByByte: Bool) throws {
        let stream =
            "\u{FEFF}: a comment\r\nevent: state\r\ndata: {\"a\":\r\ndata:1}\r\nid: 7\r\n\r\n"  // CRLF, two data lines
            + "event: ping\rdata: {}\r\r"  // CR alone
            + "data\n\n"  // a field without a colon: empty data
            + "event: nodata\nid: 8\n\n"  // no data: no event, the id kept
            + "retry: 2500\nretry: x\nunknown: y\ndata:  two spaces\n\n"
            + "data: cut off"  // the stream ends mid-event: dropped
        let got = try Self.events(stream, byteByByte: byteByByte)
        #expect(
            got == [
                ServerSentEvent(type: "state", data: "{\"a\":\n1}", lastEventID: "7"),
                ServerSentEvent(type: "ping", data: "{}", lastEventID: "7"),
                ServerSentEvent(type: "message", data: "", lastEventID: "7"),
                ServerSentEvent(type: "message", data: " two spaces", lastEventID: "8")
            ])
    }

    @Test func aLineOrAnEventBeyondTheLimitIsAnError() {
        var parser = EventStreamParser(limits: .init(maxLine: 16))
        #expect(throws: EventStreamParser.Failure.self) {
            _ = try parser.append(Array(("data: " + String(repeating: "x", count: 20)).utf8))
        }
        var lines = EventStreamParser(limits: .init(maxLine: 16))
        #expect(throws: EventStreamParser.Failure.self) { _ = try lines.append(Array("data: 12345678\ndata: 12345678\n".utf8)) }
    }

    @Test func stateChangesByAccountAndAnythingElseIsAlive() throws {
        var parser = EventStreamParser()
        let events = try parser.append(
            Array(
                ("event: state\ndata: {\"@type\":\"StateChange\",\"changed\":{\"u1\":{\"Email\":\"s9\",\"Mailbox\":\"m2\"}}}\n\n"
                    + "event: ping\ndata: {\"interval\":30}\n\nevent: state\ndata: not json\n\n").utf8))
        #expect(
            events.map(JMAPClient.pushEvent) == [.changed(["u1": ["Email": "s9", "Mailbox": "m2"]]), .alive, .alive])
    }

    static func session(push: PushTestServer?) -> [UInt8] {
        Array(
            ("{\"apiUrl\":\"/jmap/\",\"uploadUrl\":\"/up/{accountId}/\",\"downloadUrl\":\"/down/{blobId}\",\"state\":\"1\","
                + (push.map { "\"eventSourceUrl\":\"\($0.eventSourceURL)\"," } ?? "")
                + "\"primaryAccounts\":{\"urn:ietf:params:jmap:mail\":\"u1\"},"
                + "\"capabilities\":{\"urn:ietf:params:jmap:core\":{},\"urn:ietf:params:jmap:mail\":{}}}").utf8)
    }

    /// Listening on a thread; the events it heard so far.
    final class Heard: @unchecked Sendable {
        let events = Mutex<[JMAPPushEvent]>([])
        let end = Mutex<Result<JMAPPushEnd, Error>?>(nil)
        func wait(_ seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = monotonicSeconds() + seconds
            while !condition() && monotonicSeconds() < deadline { usleep(20_000) }
            return condition()
        }
    }

    @Test func listensUntilTheServerEndsTheStream() throws {
        let server = try PushTestServer()
        defer { server.stop() }
        let client = try JMAPClient(
            sessionBytes: Self.session(push: server), from: WebAddress("http://127.0.0.1:\(server.port)/session")!,
            authorization: "Bearer t")
        let heard = Heard()
        let thread = startThread {
            let result = Result { try client.listen(ping: 7) { e in heard.events.withLock { $0.append(e) } } }
            heard.end.withLock { $0 = result }
        }
        #expect(heard.wait(5) { server.openStreams == 1 })
        #expect(heard.wait(5) { heard.events.withLock { $0 } == [.listening] })
        server.push(account: "u1", ["Email": "s2"])
        server.ping()
        #expect(heard.wait(5) { heard.events.withLock { $0.count } == 3 })
        server.dropStreams()
        thread.join()
        #expect(heard.events.withLock { $0 } == [.listening, .changed(["u1": ["Email": "s2"]]), .alive])
        #expect(try heard.end.withLock { try $0?.get() } == .closed)
        #expect(server.streamTargets == ["/events?types=Email%2CMailbox&closeafter=no&ping=7"])
    }

    @Test func noEventSourceOrA204IsUnsupported() throws {
        let server = try PushTestServer()
        defer { server.stop() }
        let address = WebAddress("http://127.0.0.1:\(server.port)/session")!
        let without = try JMAPClient(sessionBytes: Self.session(push: nil), from: address, authorization: "Bearer t")
        #expect(try without.listen(ping: 7) { _ in } == .unsupported("the session names no eventSourceUrl"))
        server.offer(push: false)
        let cyrus = try JMAPClient(sessionBytes: Self.session(push: server), from: address, authorization: "Bearer t")
        #expect(try cyrus.listen(ping: 7) { _ in } == .unsupported("the server answered HTTP 204 without an event stream"))
    }
}
