import MoConfig

/// Performs actions the runner cannot do alone: `move` and `flag` need mo-sync's folder state (UID maps,
/// Maildir files), so mo-sync supplies a performer. An action no performer handles stays queued, untouched.
public protocol ActionPerformer: AnyObject {
    /// Performs `action` (a `move` or `flag`). Returns false when this performer does not handle it.
    ///
    /// `resumed` is true when an earlier run journaled `performing` and stopped before `done`: the act may
    /// have happened, so check before redoing (flags are idempotent; a move must look for the message).
    /// Throwing fails this attempt: it is retried with backoff, and marked failed after the last try.
    func perform(_ action: ActionRecord, account: Account, resumed: Bool) throws -> Bool
}

/// What a flush did, as lines for the user, and how many actions ended each way.
public struct FlushReport: Sendable, Equatable {
    /// One line per event worth telling (sent, queued for retry, failed, in doubt, torn record ignored).
    public var lines: [String] = []
    public var performed = 0
    public var retrying = 0
    public var failed = 0
    /// Actions no performer handled (move, flag before mo-sync wires its performer).
    public var unhandled = 0
    /// Set when another process held the flush lock and nothing was done.
    public var skipped: String?

    public init() {}
}

/// How a direct submission (mo-sendmail) ended without an error.
public enum SubmitOutcome: Sendable, Equatable {
    /// The server accepted the message; its reply.
    case sent(id: String, reply: String)
    /// Kept in the queue, durably; `reason` says why it was not sent now.
    case queued(id: String, reason: String)
    /// Kept in the queue for its time (send later, `send-delay`): not tried yet.
    case scheduled(id: String, at: Int)
    /// The reply to the final dot was lost: the server may have accepted it. Kept as `unknown`, not resent.
    case inDoubt(id: String, reason: String)
}
