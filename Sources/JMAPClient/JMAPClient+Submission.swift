import MoCore

/// Who sends: an `Identity` of the account (RFC 8621 §6).
public struct JMAPIdentity: Sendable, Equatable {
    public var id: String
    /// The address, or `*@domain` for any address of a domain; Cyrus gives "" for a user without a domain.
    public var email: String

    public init(id: String, email: String) {
        self.id = id
        self.email = email
    }

    /// The identity to send `sender` as: the one with that address (case ignored), else the one for its
    /// domain (`*@domain`), else the only one, else the first. Nil when the account has none.
    public static func choose(for sender: String, in identities: [JMAPIdentity]) -> JMAPIdentity? {
        let wanted = sender.lowercased()
        let domain = wanted.split(separator: "@").last.map { "*@" + $0 }
        return identities.first { $0.email.lowercased() == wanted }
            ?? identities.first { domain != nil && $0.email.lowercased() == domain }
            ?? identities.first
    }
}

/// The SMTP envelope of a submission (RFC 8621 §7: `Envelope`), with its parameters (DSN: NOTIFY on each
/// recipient, RET and ENVID on the sender).
public struct JMAPEnvelope: Sendable, Equatable {
    public var mailFrom: String
    public var rcptTo: [String]
    public var mailParameters: [(String, String)]
    public var rcptParameters: [(String, String)]

    public init(mailFrom: String, rcptTo: [String], mailParameters: [(String, String)] = [], rcptParameters: [(String, String)] = []) {
        self.mailFrom = mailFrom
        self.rcptTo = rcptTo
        self.mailParameters = mailParameters
        self.rcptParameters = rcptParameters
    }

    public static func == (a: JMAPEnvelope, b: JMAPEnvelope) -> Bool {
        a.mailFrom == b.mailFrom && a.rcptTo == b.rcptTo && a.mailParameters.elementsEqual(b.mailParameters, by: ==)
            && a.rcptParameters.elementsEqual(b.rcptParameters, by: ==)
    }

    var json: JSONValue {
        func address(_ email: String, _ parameters: [(String, String)]) -> JSONValue {
            var fields: [(String, JSONValue)] = [("email", .string(email))]
            if !parameters.isEmpty { fields.append(("parameters", .object(parameters.map { ($0.0, .string($0.1)) }))) }
            return .object(fields)
        }
        return .object([
            ("mailFrom", address(mailFrom, mailParameters)), ("rcptTo", .array(rcptTo.map { address($0, rcptParameters) }))
        ])
    }
}

/// What becomes of the submitted Email once the server has taken it (RFC 8621 §7.5).
public enum JMAPAfterSubmission: Sendable, Equatable {
    /// Out of Drafts into Sent, `$draft` removed: the Sent copy, with no second upload.
    case moveToSent(drafts: String, sent: String)
    /// Destroyed: an account that keeps no Sent copy.
    case destroy
}

/// Sending through the server (RFC 8621 §7): the message imported as a draft, then one `EmailSubmission/set`
/// that names it, whose `onSuccess…` moves it to Sent. Each step is its own request, so the caller can
/// record, between the import and the submission, that only the submission is left (its commit point).
extension JMAPClient {
    /// The account's identities, and its Drafts and Sent mailboxes (made when the account has no mailbox of
    /// that role).
    public func submissionPlaces() throws -> (identities: [JMAPIdentity], drafts: String, sent: String) {
        guard session.canSubmit else {
            throw GenericError(.unavailable, "the JMAP server offers no sending (\(JMAPSession.submission)); add an [smtp] table")
        }
        let account = JSONValue.string(session.accountID)
        let answer = try call([
            JMAPCall("Identity/get", .object([("accountId", account), ("ids", .null)]), id: "i"),
            JMAPCall("Mailbox/get", .object([("accountId", account), ("ids", .null)]), id: "m")
        ])
        var identities: [JMAPIdentity] = []
        if case .array(let list)? = try answer.arguments(for: "i")["list"] {
            for item in list {
                if let id = item["id"]?.stringValue { identities.append(JMAPIdentity(id: id, email: item["email"]?.stringValue ?? "")) }
            }
        }
        var boxes = try JMAPMailbox.list(from: try answer.arguments(for: "m")).mailboxes
        let drafts = try roleMailbox("drafts", name: "Drafts", in: &boxes)
        let sent = try roleMailbox("sent", name: "Sent", in: &boxes)
        return (identities, drafts, sent)
    }

    /// The id of the mailbox with `role` in `boxes`; else a top-level mailbox called `name` without a role
    /// is given the role, else one is made (`Mailbox/set`), and `boxes` read again.
    public func roleMailbox(_ role: String, name: String, in boxes: inout [JMAPMailbox]) throws -> String {
        if let id = boxes.first(where: { $0.role == role })?.id { return id }
        let account = JSONValue.string(session.accountID)
        var args: [(String, JSONValue)] = [("accountId", account)]
        let same = boxes.first { $0.parentID == nil && $0.name == name && $0.role == nil }
        if let same {
            args.append(("update", .object([(same.id, .object([("role", .string(role))]))])))
        } else {
            args.append(("create", .object([("m", .object([("name", .string(name)), ("role", .string(role))]))])))
        }
        let answer = try call([
            JMAPCall("Mailbox/set", .object(args), id: "b"),
            JMAPCall("Mailbox/get", .object([("accountId", account), ("ids", .null)]), id: "g")
        ])
        let set = try answer.arguments(for: "b")
        if let refused = set["notCreated"]?["m"] ?? same.flatMap({ set["notUpdated"]?[$0.id] }) {
            throw GenericError(
                .unavailable, "the server refused to make a \(name) mailbox (\(escapedForMessage(refused["type"]?.stringValue ?? "?")))")
        }
        boxes = try JMAPMailbox.list(from: try answer.arguments(for: "g")).mailboxes
        guard let id = boxes.first(where: { $0.role == role })?.id else {
            throw GenericError(.unavailable, "the \(name) mailbox made has no role \(role)")
        }
        return id
    }

    /// Submits the Email `emailID` as `identity` with `envelope`; returns the submission's id. A refusal
    /// (`notCreated`: `forbiddenFrom`, `invalidRecipients`, `tooLarge` …) is `SubmissionRefused`; nothing
    /// was sent then.
    public func submit(emailID: String, identity: String, envelope: JMAPEnvelope, then after: JMAPAfterSubmission) throws -> String {
        let answer = try call([
            JMAPCall(
                "EmailSubmission/set",
                Self.submission(account: session.accountID, emailID: emailID, identity: identity, envelope: envelope, then: after), id: "s")
        ])
        let got = try answer.arguments(for: "s")
        if let id = got["created"]?["s"]?["id"]?.stringValue { return id }
        if let failure = got["notCreated"]?["s"] {
            let refused: [String] =
                if case .array(let list)? = failure["invalidRecipients"] { list.compactMap(\.stringValue) } else { [] }
            throw SubmissionRefused(
                type: failure["type"]?.stringValue ?? "notCreated",
                detail: failure["description"]?.stringValue ?? (refused.isEmpty ? nil : refused.joined(separator: ", ")))
        }
        throw GenericError(.protocolViolation, "JMAP EmailSubmission/set: neither created nor notCreated")
    }

    /// The arguments of the `EmailSubmission/set` that sends `emailID` (pure, for tests).
    public static func submission(
        account: String, emailID: String, identity: String, envelope: JMAPEnvelope, then after: JMAPAfterSubmission
    ) -> JSONValue {
        var args: [(String, JSONValue)] = [
            ("accountId", .string(account)),
            (
                "create",
                .object([
                    ("s", .object([("identityId", .string(identity)), ("emailId", .string(emailID)), ("envelope", envelope.json)]))
                ])
            )
        ]
        switch after {
        case .moveToSent(let drafts, let sent):
            let patch: JSONValue = .object([
                ("mailboxIds/" + drafts, .null), ("mailboxIds/" + sent, .bool(true)), ("keywords/$draft", .null)
            ])
            args.append(("onSuccessUpdateEmail", .object([("#s", patch)])))
        case .destroy:
            args.append(("onSuccessDestroyEmail", .array([.string("#s")])))
        }
        return .object(args)
    }
}

/// The server refused a submission (`notCreated`, RFC 8621 §7.5): it sent nothing. Every type RFC 8621
/// names is about the message, the sender or the recipients, so it fails the same way again (`.unavailable`);
/// only `rateLimit`, `serverUnavailable` and `serverFail` ask for patience.
public struct SubmissionRefused: MoError, Equatable {
    public var type: String
    public var detail: String?

    public init(type: String, detail: String?) {
        self.type = type
        self.detail = detail
    }

    public var kind: ErrorKind { ["rateLimit", "serverUnavailable", "serverFail"].contains(type) ? .temporary : .unavailable }
    public var description: String {
        "the server refused to send it: \(escapedForMessage(type))" + (detail.map { " (\(escapedForMessage($0)))" } ?? "")
    }
}
