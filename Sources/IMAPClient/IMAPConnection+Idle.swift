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
    /// idlers after 30 minutes: callers re-IDLE every 29. Every response the server sends while the command
    /// runs goes to `onEvent`: also those before its `+` (a server may flush news it held since the last
    /// command there, as Dovecot does with NOTIFY) and those while DONE completes; a true answer before the
    /// `+` ends the IDLE as soon as it starts, after DONE it no longer matters. Nothing is kept here, so a
    /// listener may idle for good at constant memory.
    ///
    /// `interrupted` is polled about once a second; when it returns true the IDLE ends (DONE) as at the
    /// deadline.
    public func idle(seconds: Double, interrupted: () -> Bool = { false }, onEvent: (IdleEvent) -> Bool) throws {
        guard capabilities.contains(.idle) else { throw IMAPError(server: server, .unsupported("the server does not offer IDLE")) }
        var collector = MessageInfoCollector()
        /// Hands an untagged response or a completed FETCH to `onEvent`; returns its answer.
        func deliver(_ event: ResponseEvent) throws -> Bool {
            try dispatch(event, untagged: nil, fetch: nil)
            switch event {
            case .untagged(let u): return onEvent(.untagged(u))
            default: return collector.feed(event).map { onEvent(.fetch($0)) } ?? false
            }
        }
        let tag = try send(.idle, untagged: nil, fetch: nil, body: nil)
        var done = false
        // Wait for "+ idling".
        while true {
            let event = try nextEvent()
            if case .continuation = event { break }
            if case .tagged(let t) = event, t.tag == tag {
                throw failure(for: t, command: .idle) ?? IMAPError(server: server, .unexpected("IDLE ended at once"))
            }
            if try deliver(event) { done = true }
        }
        let saved = connection.timeout
        timeoutEndsSession = false
        defer { connection.timeout = saved; timeoutEndsSession = true }
        let deadline = monotonicSeconds() + seconds
        while !done {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 || interrupted() { break }
            connection.timeout = min(remaining, 1)
            do {
                done = try deliver(try nextEvent())
            } catch let e as IMAPError {
                if case .network(let n) = e.reason, n.code == .timeout { continue }
                throw e
            }
        }
        connection.timeout = saved
        timeoutEndsSession = true
        trace?.sentRaw("DONE")
        try write(CommandEncoder.done)
        while true {
            let event = try nextEvent()
            if case .tagged(let t) = event {
                guard t.tag == tag else { throw IMAPError(server: server, .unexpected("completion for unknown tag \(t.tag)")) }
                if let failure = failure(for: t, command: .idle) { throw failure }
                return
            }
            if case .continuation = event { throw IMAPError(server: server, .unexpected("continuation request after DONE")) }
            _ = try deliver(event)
        }
    }
}
