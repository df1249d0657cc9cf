import MoCore
import MoHTTP

/// What a push connection tells (RFC 8620 §7.3).
public enum JMAPPushEvent: Sendable, Equatable {
    /// The server answered with an event stream: from now on every change is told.
    case listening
    /// A `StateChange`: for each account, the types whose state moved and their new states.
    case changed([String: [String: String]])
    /// A `ping` (or any other event): the connection is alive.
    case alive
}

/// How a push connection ended without an error.
public enum JMAPPushEnd: Sendable, Equatable {
    /// The server offers no push: no `eventSourceUrl`, or it answered without a stream (Debian's Cyrus
    /// answers 204). Polling is left.
    case unsupported(String)
    /// The server ended the stream.
    case closed
}

extension JMAPClient {
    /// Listens for changes of `types` (RFC 8620 §7.3: `closeafter=no`, a `ping` every `ping` seconds, which
    /// keeps the connection's read timeout from firing on a quiet account and notices a dead path) on a
    /// connection of its own, handing each event to `each` until the server ends the stream or `each`
    /// throws (the way to stop). Network failures are thrown.
    public func listen(types: [String] = ["Email", "Mailbox"], ping: Int, _ each: @escaping (JMAPPushEvent) throws -> Void) throws
        -> JMAPPushEnd
    {
        guard let template = session.eventSourceURL else { return .unsupported("the session names no eventSourceUrl") }
        guard
            let address = WebAddress(
                JMAPSession.expand(template, ["types": types.joined(separator: ","), "closeafter": "no", "ping": String(ping)]))
        else { return .unsupported("an unusable eventSourceUrl") }
        trace?("JMAP GET \(escapedForMessage(String(address.target.prefix { $0 != "?" }))) (push)")
        let connection = HTTPConnection(origin: address, tls: tls, timeout: timeout)
        defer { connection.close() }
        var parser = EventStreamParser()
        var opened = false
        var failure: Error?
        let response: HTTPConnection.Response
        do {
            response = try connection.send(
                "GET", address.target, headers: [("Authorization", authorization), ("Accept", "text/event-stream")], maxBody: Int.max / 4,
                close: true
            ) { bytes throws(GenericError) in
                do {
                    if !opened {
                        opened = true
                        try each(.listening)
                    }
                    for event in try parser.append(bytes) { try each(Self.pushEvent(event)) }
                } catch let error as EventStreamParser.Failure {
                    throw GenericError(.protocolViolation, "\(address.origin): \(error)")
                } catch let error as GenericError {
                    throw error
                } catch {
                    // `each` asked to stop: carried out of the sink, thrown on below.
                    failure = error
                    throw GenericError(.software, "stopped")
                }
            }
        } catch {
            throw failure ?? error
        }
        requests += 1
        if !(200..<300).contains(response.status) {
            try Self.check(response, at: address)
        }
        return opened ? .closed : .unsupported("the server answered HTTP \(response.status) without an event stream")
    }

    /// An event as JMAP means it: `state` carries a `StateChange` (`{"@type": "StateChange", "changed":
    /// {accountId: {type: state}}}`); anything else only shows the connection alive.
    static func pushEvent(_ event: ServerSentEvent) -> JMAPPushEvent {
        guard event.type == "state", let json = try? JSONReader.parse(Array(event.data.utf8)), case .object(let accounts)? = json["changed"]
        else { return .alive }
        var changed: [String: [String: String]] = [:]
        for (account, types) in accounts {
            guard case .object(let states) = types else { continue }
            changed[account] = Dictionary(states.compactMap { t, s in s.stringValue.map { (t, $0) } }, uniquingKeysWith: { a, _ in a })
        }
        return .changed(changed)
    }
}
