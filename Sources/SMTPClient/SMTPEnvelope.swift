/// The envelope of one message: who sends, who receives, and delivery-status wishes.
public struct SMTPEnvelope: Sendable, Equatable {
    /// The reverse path; "" for the null sender `<>`.
    public var sender: String
    public var recipients: [String]
    /// RFC 3461 options, sent only when the server offers DSN (they are wishes, not requirements).
    public var dsn: DSNOptions?

    public init(sender: String, recipients: [String], dsn: DSNOptions? = nil) {
        self.sender = sender
        self.recipients = recipients
        self.dsn = dsn
    }

    /// Addresses go into commands verbatim, so anything that could end or split a command is refused.
    /// Returns a sentence naming the bad address, or nil when all are fine.
    func problem() -> String? {
        if recipients.isEmpty { return "no recipients" }
        for (role, address) in [("sender", sender)] + recipients.map({ ("recipient", $0) }) {
            if role == "recipient" && address.isEmpty { return "empty recipient address" }
            for scalar in address.unicodeScalars {
                if scalar.value < 0x20 || scalar.value == 0x7f || scalar == "<" || scalar == ">" || scalar == " " {
                    return
                        "\(role) address \"\(address.debugDescription.dropFirst().dropLast())\" contains a character not allowed in an address"
                }
            }
        }
        return nil
    }

    /// Whether any address needs SMTPUTF8 (RFC 6531).
    var needsSMTPUTF8: Bool {
        ([sender] + recipients).contains { $0.utf8.contains { $0 >= 0x80 } }
    }
}

/// RFC 3461 delivery status notification options.
public struct DSNOptions: Sendable, Equatable {
    public var notify: DSNNotify?
    public var ret: DSNReturn?
    public var envelopeID: String?

    public init(notify: DSNNotify? = nil, ret: DSNReturn? = nil, envelopeID: String? = nil) {
        self.notify = notify
        self.ret = ret
        self.envelopeID = envelopeID
    }
}

/// How a send ended when it did not throw.
public enum SMTPOutcome: Sendable, Equatable {
    /// The server took responsibility for the message; its reply to the final `.` (often with a queue ID).
    case accepted(SMTPReply)
}
