import MoCore
import MoHTTP
import Testing

@testable import JMAPClient

/// The session resource, the request bytes and the answers' parse, on fixtures shaped like Cyrus 3.6's
/// answers (captured from the private Cyrus of scripts/test-cyrus, trimmed) and RFC 8620's examples.
@Suite struct JMAPWireTests {
    static let base = WebAddress("http://127.0.0.1:8080/jmap/")!

    /// Cyrus 3.6's session, with relative URLs.
    static let cyrusSession = """
        {"username":"mo","apiUrl":"/jmap/","downloadUrl":"/jmap/download/{accountId}/{blobId}/{name}?accept={type}",\
        "uploadUrl":"/jmap/upload/{accountId}/","eventSourceUrl":"/jmap/eventsource/?types={types}&closeafter={closeafter}&ping={ping}",\
        "state":"0","capabilities":{"urn:ietf:params:jmap:core":{"maxSizeUpload":1073741824,"maxConcurrentUpload":5,\
        "maxSizeRequest":10485760,"maxConcurrentRequests":5,"maxCallsInRequest":50,"maxObjectsInGet":4096,"maxObjectsInSet":4096,\
        "collationAlgorithms":[]},"urn:ietf:params:jmap:mail":{},"urn:ietf:params:jmap:submission":{}},\
        "accounts":{"mo":{"name":"mo","isPrimary":true,"accountCapabilities":{"urn:ietf:params:jmap:mail":{}}}},\
        "primaryAccounts":{"urn:ietf:params:jmap:mail":"mo","urn:ietf:params:jmap:submission":"mo"}}
        """

    @Test func cyrusSessionResolvesRelativeURLs() throws {
        let s = try JMAPSession.parse(Array(Self.cyrusSession.utf8), base: Self.base)
        #expect(s.apiURL == WebAddress("http://127.0.0.1:8080/jmap/")!)
        #expect(s.accountID == "mo")
        #expect(s.limits.maxObjectsInGet == 4096 && s.limits.maxCallsInRequest == 50 && s.limits.maxSizeUpload == 1_073_741_824)
        #expect(s.canSubmit)
        #expect(s.uploadAddress?.target == "/jmap/upload/mo/")
        #expect(s.downloadAddress(blobID: "G6b0f/1")?.target == "/jmap/download/mo/G6b0f%2F1/message.eml?accept=message%2Frfc822")
        #expect(s.eventSourceURL == "http://127.0.0.1:8080/jmap/eventsource/?types={types}&closeafter={closeafter}&ping={ping}")
    }

    @Test func absoluteURLsAndTheOnlyMailAccount() throws {
        let text = """
            {"apiUrl":"https://api.example.com/jmap/api/","downloadUrl":"https://www.example.com/d/{accountId}/{blobId}/{name}?type={type}",
             "uploadUrl":"https://www.example.com/u/{accountId}/","state":"75128aab4b1b",
             "capabilities":{"urn:ietf:params:jmap:core":{},"urn:ietf:params:jmap:mail":{}},
             "accounts":{"A13824":{"accountCapabilities":{"urn:ietf:params:jmap:mail":{}}},"A97813":{"accountCapabilities":{}}}}
            """
        let s = try JMAPSession.parse(Array(text.utf8), base: WebAddress("https://example.com/.well-known/jmap")!)
        #expect(s.apiURL.host == "api.example.com" && s.apiURL.secure && s.apiURL.target == "/jmap/api/")
        #expect(s.accountID == "A13824")
        #expect(s.limits == JMAPSession.Limits())
        #expect(!s.canSubmit)
        #expect(s.uploadAddress == WebAddress("https://www.example.com/u/A13824/"))
    }

    @Test(arguments: [
        (#"{"apiUrl":"/jmap/","capabilities":{"urn:ietf:params:jmap:core":{}}}"#, "the server does not offer mail"),
        (#"{"capabilities":{"urn:ietf:params:jmap:mail":{}}}"#, "no urn:ietf:params:jmap:core capability"),
        (#"{"capabilities":{"urn:ietf:params:jmap:core":{},"urn:ietf:params:jmap:mail":{}},"apiUrl":"//evil/"}"#, "no usable apiUrl"),
        (#"[1]"#, "not a JSON object"),
        (#"{"#, "invalid JSON")
    ])
    func badSessions(text: String, reason: String) {
        #expect {
            _ = try JMAPSession.parse(Array(text.utf8), base: Self.base)
        } throws: { error in
            (error as? GenericError)?.message.contains(reason) == true && (error as? GenericError)?.kind == .protocolViolation
        }
    }

    @Test func requestBytes() {
        let calls = [
            JMAPCall("Email/query", .object([("accountId", "mo"), ("limit", .int(2))]), id: "q"),
            JMAPCall("Email/get", .object([("accountId", "mo"), ("#ids", JMAPCall.resultOf("q", "Email/query", path: "/ids"))]), id: "g")
        ]
        let text = String(decoding: JMAPWire.request(calls, using: [JMAPSession.core, JMAPSession.mail]), as: UTF8.self)
        #expect(
            text
                == ##"{"using":["urn:ietf:params:jmap:core","urn:ietf:params:jmap:mail"],"methodCalls":[["Email/query",{"accountId":"mo","limit":2},"q"],"##
                + ##"["Email/get",{"accountId":"mo","#ids":{"resultOf":"q","name":"Email/query","path":"/ids"}},"g"]]}"##)
    }

    static let calls = [
        JMAPCall("Email/changes", .object([]), id: "c"),
        JMAPCall("Email/set", .object([]), id: "s")
    ]

    @Test func answersByCallAndMethodErrors() throws {
        let text = """
            {"methodResponses":[["error",{"type":"cannotCalculateChanges"},"c"],
             ["Email/set",{"accountId":"mo","oldState":"5","newState":"6","updated":null,"notUpdated":{"M1":{"type":"notFound"}}},"s"]],
             "sessionState":"0"}
            """
        let answer = try JMAPWire.responses(Array(text.utf8), to: Self.calls)
        #expect(answer.sessionState == "0")
        #expect(throws: JMAPMethodError(type: "cannotCalculateChanges", detail: nil, callName: "Email/changes")) {
            _ = try answer.arguments(for: "c")
        }
        let set = try answer.arguments(for: "s")
        #expect(set["newState"] == "6")
        #expect(JMAPClient.errorTypes(set["notUpdated"]) == ["M1": "notFound"])
        #expect(JMAPClient.errorTypes(set["updated"]).isEmpty)
    }

    @Test(arguments: [
        (#"{"methodResponses":[["Email/changes",{},"c"]]}"#, "no answer to Email/set"),
        (#"{"methodResponses":[["Email/changes",{},"c"],["Email/set",{},"s"],["Email/get",{},"x"]]}"#, "an answer to no call"),
        (#"{"methodResponses":[["Email/changes",[],"c"]]}"#, "not [name, {arguments}, id]"),
        (#"{"sessionState":"0"}"#, "no methodResponses")
    ])
    func badAnswers(text: String, reason: String) {
        #expect {
            _ = try JMAPWire.responses(Array(text.utf8), to: Self.calls)
        } throws: { error in
            (error as? GenericError)?.message.contains(reason) == true
        }
    }

    @Test func problemDetails() {
        let body = #"{"type":"urn:ietf:params:jmap:error:unknownCapability","status":400,"detail":"No \u001b[31mcapability"}"#
        let problem = JMAPWire.problem(Array(body.utf8))
        #expect(problem?.hasPrefix("unknownCapability: No ") == true && problem?.contains("\u{1B}") == false)
        #expect(JMAPWire.problem(Array("<html>".utf8)) == nil)
    }

    @Test func emailParsing() throws {
        let item: JSONValue = .object([
            ("id", "Mf1"), ("blobId", "Gf1"), ("size", .int(1234)), ("receivedAt", "2026-11-28T04:00:00Z"),
            ("mailboxIds", .object([("P1", .bool(true)), ("P2", .bool(true))])),
            ("keywords", .object([("$seen", .bool(true)), ("work", .bool(true))]))
        ])
        let email = try JMAPClient.email(item)
        #expect(
            email
                == JMAPEmail(
                    id: "Mf1", blobID: "Gf1", mailboxIDs: ["P1", "P2"], keywords: ["$seen", "work"], size: 1234,
                    receivedAt: "2026-11-28T04:00:00Z"))
        #expect(throws: GenericError.self) { _ = try JMAPClient.email(.object([("id", "Mf1")])) }
    }

    /// The response parser's fields a kept-alive connection needs, and a body taken as it arrives, fed whole
    /// and byte by byte.
    @Test func keepAliveFieldsAndStreamedBody() throws {
        let redirect = Array(
            "HTTP/1.1 301 Moved Permanently\r\nLocation:  /jmap/ \r\nContent-Length: 0\r\nConnection: Upgrade\r\n\r\n".utf8)
        let chunked = Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n".utf8)
        let closing = Array("HTTP/1.0 200 OK\r\n\r\nto the end".utf8)
        for whole in [true, false] {
            var p = HTTPResponseParser(maxBody: 100)
            for piece in whole ? [redirect[...]] : redirect.map({ [$0][...] }) { try p.append(piece) }
            #expect(p.isComplete && p.status == 301 && p.location == "/jmap/" && !p.closesConnection && p.leftover.isEmpty)

            var q = HTTPResponseParser(maxBody: 11)
            var streamed: [UInt8] = []
            for piece in whole ? [chunked[...]] : chunked.map({ [$0][...] }) {
                try q.append(piece)
                streamed += q.takeBody()
            }
            #expect(q.isComplete && q.body.isEmpty && String(decoding: streamed, as: UTF8.self) == "hello world")

            var r = HTTPResponseParser(maxBody: 100)
            for piece in whole ? [closing[...]] : closing.map({ [$0][...] }) { try r.append(piece) }
            try r.finish()
            #expect(r.closesConnection && String(decoding: r.body, as: UTF8.self) == "to the end")
        }
        // The limit counts what was taken out too.
        var small = HTTPResponseParser(maxBody: 10)
        try small.append(chunked[0..<57])  // the head and "5\r\nhello\r\n"
        #expect(small.takeBody() == Array("hello".utf8))
        #expect(throws: GenericError.self) { try small.append(chunked[57...]) }
    }
}
