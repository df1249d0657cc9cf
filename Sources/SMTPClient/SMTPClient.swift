/// The one-call entry point: connect, send one message, quit.
public enum SMTPClient {
    /// Sends `message` to `envelope.recipients` through the server in `settings`.
    ///
    /// Returns `.accepted` only once the server has taken responsibility for the message. Throws `SMTPError`
    /// otherwise; `error.kind == .temporary` means the message should be queued and retried, and
    /// `error.afterFinalDot` means the outcome is unknown (see `SMTPError.afterFinalDot`).
    /// `beforeFinalDot`: see `SMTPSession.send(envelope:message:beforeFinalDot:)`.
    public static func send(
        envelope: SMTPEnvelope, message: [UInt8], settings: SMTPSettings,
        beforeFinalDot: (() throws -> Void)? = nil
    ) throws(SMTPError) -> SMTPOutcome {
        let session = SMTPSession(settings: settings)
        defer { session.close() }
        do throws(SMTPError) {
            try session.open()
            let outcome = try session.send(envelope: envelope, message: message, beforeFinalDot: beforeFinalDot)
            session.quit()
            return outcome
        } catch {
            // Say goodbye when the conversation is still in order (the server refused something); after a
            // transport or protocol failure the connection is just closed.
            if error.network == nil && error.code != .protocolViolation { session.quit() }
            throw error
        }
    }
}
