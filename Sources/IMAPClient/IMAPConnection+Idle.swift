#if canImport(Glibc)
import Glibc
#endif
import IMAPCodec
import MoCore

/// What IDLE hands to its `stop` test: an untagged response, or a whole FETCH the server sent on its own (a
/// flag change by another client, RFC 3501 §7.4.2; with NOTIFY FlagChange, RFC 5465 §5.4).
public enum IdleEvent: Sendable, Hashable {
    case untagged(UntaggedResponse)
    case fetch(MessageInfo)
}

extension IMAPConnection {
    public var supportsNotify: Bool { capabilities.contains(.notify) }

    /// NOTIFY SET (RFC 5465): from now on the server reports the groups' events on this connection, for
    /// mailboxes that are not selected as STATUS (and LIST for MailboxName) responses. No groups: NOTIFY NONE.
    public func notify(_ groups: [NotifyEventGroup]) throws {
        guard supportsNotify else { throw IMAPError(server: server, .unsupported("the server does not offer NOTIFY")) }
        try run(.notify(groups))
    }

    /// IDLE (RFC 2177) until `onEvent` returns true for an event or `seconds` pass; then DONE. Servers drop
    /// idlers after 30 minutes: callers re-IDLE every 29. Events that arrive while DONE completes go to
    /// `onEvent` too (its answer no longer matters). Nothing is kept here, so a listener may idle for good
    /// at constant memory.
    ///
    /// `interrupted` is polled about once a second; when it returns true the IDLE ends (DONE) as at the
    /// deadline.
    public func idle(seconds: Double, interrupted: () -> Bool = { false }, onEvent: (IdleEvent) -> Bool) throws {
        guard capabilities.contains(.idle) else { throw IMAPError(server: server, .unsupported("the server does not offer IDLE")) }
        var collector = MessageInfoCollector()
        let tag = try send(.idle, untagged: nil, fetch: nil, body: nil)
        // Wait for "+ idling".
        while true {
            let event = try nextEvent()
            if case .continuation = event { break }
            if case .tagged(let t) = event, t.tag == tag {
                throw failure(for: t, command: .idle) ?? IMAPError(server: server, .unexpected("IDLE ended at once"))
            }
            try dispatch(event, untagged: nil, fetch: nil)
        }
        let saved = connection.timeout
        defer { connection.timeout = saved }
        let deadline = monotonicSeconds() + seconds
        waiting: while true {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 || interrupted() { break }
            connection.timeout = min(remaining, 1)
            do {
                let event = try nextEvent()
                try dispatch(event, untagged: nil, fetch: nil)
                let news: IdleEvent?
                switch event {
                case .untagged(let u): news = .untagged(u)
                default: news = collector.feed(event).map(IdleEvent.fetch)
                }
                if let news, onEvent(news) { break waiting }
            } catch let e as IMAPError {
                if case .network(let n) = e.reason, n.code == .timeout { continue }
                throw e
            }
        }
        connection.timeout = saved
        trace?.sentRaw("DONE")
        try write(CommandEncoder.done)
        try withoutActuallyEscaping(onEvent) { onEvent in
            _ = try complete(tag: tag, command: .idle, untagged: { _ = onEvent(.untagged($0)) },
                             fetch: { if let m = collector.feed($0) { _ = onEvent(.fetch(m)) } })
        }
    }
}
