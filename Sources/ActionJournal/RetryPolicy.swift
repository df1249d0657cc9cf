import MoConfig
import IMAPClient
import MoCore
import SMTPClient

/// What a failed attempt says about trying again.
public enum FailureClass: Sendable, Equatable, CaseIterable {
    /// The server was never reached: DNS, refused, unreachable, a timeout before its greeting; or the
    /// OAuth2 token endpoint was out. An outage, not a judgement on the message.
    case unreachable
    /// The server said "later" (4xx), or the conversation broke after the greeting.
    case temporary
    /// Refused for good: 5xx, a rejected recipient, a message or envelope the server cannot take.
    case permanent
    /// Needs the user: credentials refused, TLS not trusted, a configuration or protocol problem.
    case needsUser

    public init(_ error: any Error) {
        if (error as? SMTPError)?.unreachable == true || (error as? IMAPError)?.isOutage == true || error is OutageError {
            self = .unreachable
            return
        }
        switch (error as? any MoError)?.kind ?? .software {
        case .temporary: self = .temporary
        case .unavailable, .data, .usage: self = .permanent
        default: self = .needsUser
        }
    }
}

/// When a failed send is tried again, and when it is given up (Postfix's rules, with `queue-lifetime` as
/// its `maximal_queue_lifetime`). Backoff: 30 s after the first counted try, doubling up to 15 min.
///
/// `decide` is the whole rule; "counted" says whether the attempt adds to `tries`, "expired" whether
/// `queue-lifetime` has passed since the message was queued (`since`):
///
/// | failure       | counted | expired | tries ≥ maxTries | verdict                                       | reason      |
/// |---------------|---------|---------|------------------|-----------------------------------------------|-------------|
/// | `permanent`   | yes     | –       | –                | fail with the server's words                  | `.refused`  |
/// | `unreachable` | no      | no      | –                | retry at the next flush, no backoff           | `.outage`   |
/// | `temporary`   | yes     | no      | –                | retry after backoff(tries)                    | `.later`    |
/// | `needsUser`   | yes     | no      | no               | retry after backoff(tries)                    | `.later`    |
/// | `needsUser`   | yes     | no      | yes              | fail: "gave up after N tries"                 | `.outOfTries` |
/// | the others    | as above| yes     | –                | fail: "not sent within queue-lifetime"        | `.expired`  |
///
/// Why: an outage says nothing about the message, so it neither spends a try nor pushes the next attempt
/// into the future (the first flush after the network returns sends everything); only the lifetime ends
/// it. A 4xx is the server asking for patience, so it backs off but is never out of tries. A refusal of
/// credentials or trust will not mend by itself: a few tries, then the user.
public struct RetryPolicy: Sendable, Equatable {
    public var firstDelay: Int
    public var maxDelay: Int
    /// Counted tries after which a `needsUser` failure of a send is final (for appends, moves and flags:
    /// any failure but an outage; they keep the simple rule in `JournalRunner.retryOrFail`).
    public var maxTries: Int
    /// Seconds a message may stay queued (config `general.queue-lifetime`).
    public var queueLifetime: Int

    public init(
        firstDelay: Int = 30, maxDelay: Int = 900, maxTries: Int = 5,
        queueLifetime: Int = Config.defaultQueueLifetime
    ) {
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
        self.maxTries = maxTries
        self.queueLifetime = queueLifetime
    }

    /// Seconds to wait after try number `tries` (1-based) failed.
    public func delay(afterTry tries: Int) -> Int {
        var d = firstDelay
        for _ in 1..<max(1, tries) where d < maxDelay { d *= 2 }
        return min(d, maxDelay)
    }

    public enum Reason: String, Sendable, Equatable {
        case refused, outage, later, outOfTries, expired
    }

    /// The outcome of one failed attempt.
    public struct Verdict: Sendable, Equatable {
        public var reason: Reason
        /// Counted tries after this attempt.
        public var tries: Int
        /// When queued: not before this time; nil means at the next flush.
        public var next: Int?
        /// The error to record: the failure's own text, prefixed with why it is final where that is not obvious.
        public var error: String
        /// Queued again (`true`) or failed for good.
        public var retry: Bool { reason == .outage || reason == .later }
    }

    /// The rule in the table above. `triesBefore`: counted tries before this attempt; `since`: when the
    /// message was queued.
    public func decide(_ failure: FailureClass, error: String, triesBefore: Int, since: Int, now: Int) -> Verdict {
        let tries = failure == .unreachable ? triesBefore : triesBefore + 1
        if failure == .permanent {
            return Verdict(reason: .refused, tries: tries, error: error)
        }
        if now - since >= queueLifetime {
            return Verdict(
                reason: .expired, tries: tries,
                error: "not sent within the queue lifetime (\(DurationText.format(queueLifetime))): \(error)")
        }
        switch failure {
        case .unreachable:
            return Verdict(reason: .outage, tries: tries, next: nil, error: error)
        case .needsUser where tries >= maxTries:
            return Verdict(reason: .outOfTries, tries: tries, error: "gave up after \(tries) tries: \(error)")
        case .temporary, .needsUser, .permanent:
            return Verdict(reason: .later, tries: tries, next: now + delay(afterTry: tries), error: error)
        }
    }
}
