#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import MoCore
import MoTestSupport
import Testing

/// Issue 27, push: `mo-sync --watch` on a JMAP account whose session offers an EventSource. Debian's
/// Cyrus has none (it answers 204), so the session is served by the tests' own endpoint
/// (`PushTestServer`): Cyrus's session with absolute URLs and an `eventSourceUrl` pointing there. The
/// poll interval is an hour: only a push can bring a server change.
@Suite(.serialized, .enabled(if: CyrusTestServer.usable)) struct JMAPPushWatchTests {
    /// Cyrus's session resource with its URLs made absolute and push offered by `push`.
    static func session(_ a: JMAPSyncTests.Account, push: PushTestServer) throws -> [UInt8] {
        let origin = "http://127.0.0.1:\(a.server.httpPort)"
        guard case .object(let fields) = try JSONReader.parse(a.client.sessionBytes) else { throw GenericError(.software, "session") }
        var out = fields.filter { $0.0 != "eventSourceUrl" }.map { key, value -> (String, JSONValue) in
            guard ["apiUrl", "uploadUrl", "downloadUrl"].contains(key), let url = value.stringValue, url.hasPrefix("/") else {
                return (key, value)
            }
            return (key, .string(origin + url))
        }
        out.append(("eventSourceUrl", .string(push.eventSourceURL)))
        return Array(JSONValue.object(out).text.utf8)
    }

    static func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = monotonicSeconds() + seconds
        while monotonicSeconds() < end {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    /// The account's session served by `push`, one message in Inbox, and `mo-sync --watch -v` started; its
    /// standard error read by `err`.
    static func watching(_ a: JMAPSyncTests.Account, _ push: PushTestServer) throws -> (BackgroundProcess, err: () -> String) {
        push.serve(session: try session(a, push: push))
        let config = a.dir.path + "/mo.toml"
        let text = try #require(a.dir.read(config))
        try text.replacingOccurrences(of: "url = \"\(a.server.sessionURL)\"", with: "url = \"\(push.sessionURL)\"").write(
            toFile: config, atomically: true, encoding: .utf8)
        try a.seed(0, in: ["Inbox"])
        let log = a.dir.path + "/watch"
        let watch = try BackgroundProcess([
            "/bin/sh", "-c", "exec \"$0\" \"$@\" >\(log).out 2>\(log).err", TestPaths.binDirectory + "/mo-sync", "--config", config,
            "--watch", "-v"
        ])
        return (watch, { a.dir.read(log + ".err") ?? "" })
    }

    @Test func aPushBringsAServerChangeAndALostStreamIsOpenedAgain() throws {
        let a = try JMAPSyncTests.Account(sync: "poll-interval = 3600")
        let push = try PushTestServer()
        defer { push.stop() }
        let (watch, err) = try Self.watching(a, push)
        defer { _ = watch.kill() }
        #expect(Self.waitFor(15) { a.local()["test 0"] != nil && push.openStreams == 1 }, "\(err())")
        // The listening sync (what changed before the stream opened) passes; then a change and its push.
        #expect(Self.waitFor(10) { err().components(separatedBy: "syncing (listening)").count == 2 }, "\(err())")
        try a.seed(1, in: ["Inbox"])
        push.push(account: a.client.session.accountID, ["Email": "changed"])
        #expect(Self.waitFor(10) { a.local()["test 1"] != nil }, "\(err())")
        #expect(err().contains("syncing (pushed)"))
        // The stream is lost (a server restart, a dead path): opened again, and a push is heard again.
        push.dropStreams()
        #expect(Self.waitFor(20) { push.openStreams == 1 && push.streamTargets.count == 2 }, "\(err())")
        try a.seed(2, in: ["Inbox"])
        push.push(account: a.client.session.accountID, ["Email": "changed again"])
        #expect(Self.waitFor(10) { a.local()["test 2"] != nil }, "\(err())")
        // The server pings every half timeout (60 s: 30 s), so a quiet stream outlives the read timeout.
        #expect(push.streamTargets.first == "/events?types=Email%2CMailbox&closeafter=no&ping=30")
        #expect(err().contains("cy: listening with JMAP push"))
        #expect(!err().contains("polling every"))
        _ = watch.kill()
        try a.check()
    }

    /// Push lost for good (the stream closed, then the endpoint answers 204): the account is polled every
    /// `poll-interval` again, so a server change still arrives.
    @Test func pushLostForGoodFallsBackToPolling() throws {
        let a = try JMAPSyncTests.Account(sync: "poll-interval = 10")
        let push = try PushTestServer()
        defer { push.stop() }
        let (watch, err) = try Self.watching(a, push)
        defer { _ = watch.kill() }
        #expect(Self.waitFor(15) { a.local()["test 0"] != nil && push.openStreams == 1 }, "\(err())")
        push.offer(push: false)
        push.dropStreams()
        #expect(Self.waitFor(20) { err().contains("no push (the server answered HTTP 204") }, "\(err())")
        try a.seed(1, in: ["Inbox"])
        #expect(Self.waitFor(20) { a.local()["test 1"] != nil }, "\(err())")
    }
}
