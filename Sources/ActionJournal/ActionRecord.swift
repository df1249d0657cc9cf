import MoCore

/// What an action does. `send` and `append` are performed here; `move` and `flag` need mo-sync's folder
/// state and are performed by an `ActionPerformer` it supplies (without one they stay queued).
public enum ActionKind: String, Sendable, Equatable, CaseIterable {
    /// Submit an outbox message over SMTP.
    case send
    /// Store an outbox message in the account's Sent folder over IMAP.
    case append
    /// Move one server message to another folder.
    case move
    /// Add or remove flags of one server message.
    case flag
}

/// Where an action stands. Intent states (`sending`, `committing`, `appending`, `performing`) are
/// journaled before the act; finding one after a crash means the act may have started (see
/// docs/action-journal.md for how each is resolved).
public enum ActionState: String, Sendable, Equatable, CaseIterable {
    /// Waiting: never tried, or to be retried at `next`.
    case queued
    /// send: the SMTP conversation is under way; the message's final dot has not been written.
    case sending
    /// send: everything but the final dot is written; the next byte lets the server accept it.
    case committing
    /// send: the server accepted the message. Finished.
    case sent
    /// append: the APPEND is under way.
    case appending
    /// move, flag: the performer is under way.
    case performing
    /// append, move, flag: finished.
    case done
    /// Given up (refused for good, or out of tries); kept and shown until retried or dropped.
    case failed
    /// send: the server's reply to the final dot was lost; it may have accepted the message. Kept and
    /// shown, never resent by itself.
    case unknown
    /// Withdrawn (by the user, or refused while the sender was still waiting). Finished.
    case dropped

    /// States an action of `kind` may be in.
    static func allowed(for kind: ActionKind) -> Set<ActionState> {
        switch kind {
        case .send: [.queued, .sending, .committing, .sent, .failed, .unknown, .dropped]
        case .append: [.queued, .appending, .done, .failed, .dropped]
        case .move, .flag: [.queued, .performing, .done, .failed, .dropped]
        }
    }

    /// Finished states: compaction drops these records.
    public var isFinished: Bool { self == .sent || self == .done || self == .dropped }
    /// States that need the user (`status` shows them as problems).
    public var needsAttention: Bool { self == .failed || self == .unknown }
}

/// One action as of its latest record. Every journal line is a full snapshot, so the last line for an id
/// is the whole truth about it.
public struct ActionRecord: Sendable, Equatable {
    public var id: String
    public var kind: ActionKind
    public var state: ActionState
    /// The message file, relative to the state directory (`outbox/ID.eml`); nil for move and flag.
    public var payload: String?
    /// The account name (a key of the config's `[account]` table).
    public var account: String
    /// Kind-specific fields (see `ActionRecord.fieldKeys`), values unescaped.
    public var fields: [String: String]
    /// Attempts begun so far.
    public var tries: Int
    /// Not before this time (Unix seconds) when queued for a retry.
    public var next: Int?
    /// The last failure, one line.
    public var error: String?
    /// When this record was written (Unix seconds).
    public var time: Int

    public init(
        id: String, kind: ActionKind, state: ActionState = .queued, payload: String?, account: String,
        fields: [String: String] = [:], tries: Int = 0, next: Int? = nil, error: String? = nil, time: Int
    ) {
        self.id = id
        self.kind = kind
        self.state = state
        self.payload = payload
        self.account = account
        self.fields = fields
        self.tries = tries
        self.next = next
        self.error = error
        self.time = time
    }

    /// Keys each kind may carry, and which of them are required.
    static func fieldKeys(_ kind: ActionKind) -> (allowed: Set<String>, required: Set<String>) {
        switch kind {
        case .send: (["from", "to", "since", "due", "notify", "ret", "envid", "msgid", "reply"], ["from", "to"])
        case .append: (["mailbox", "msgid", "flags", "uid"], [])
        case .move: (["folder", "uidvalidity", "uid", "to", "file"], ["folder", "uidvalidity", "uid", "to"])
        case .flag: (["folder", "uidvalidity", "uid", "add", "remove", "file"], ["folder", "uidvalidity", "uid"])
        }
    }

    /// Common keys every record carries or may carry.
    static let commonKeys: Set<String> = ["account", "tries", "next", "error", "at"]

    /// Whether the message file is needed by this record (so the file must not be deleted).
    var holdsPayload: Bool { payload != nil && !state.isFinished }
}

// MARK: - Typed views of the fields

extension ActionRecord {
    /// send: the envelope sender ("" for `<>`).
    public var sender: String? { fields["from"] }
    /// send: when the message was queued (Unix seconds; reset by `--retry`); `queue-lifetime` counts from it.
    /// Always set once parsed (a record from before the key existed reads its `at`).
    public var since: Int? { fields["since"].flatMap { Int($0) } }
    /// send: not before this time (Unix seconds): send later, or `send-delay`'s window to cancel in. Unlike
    /// `next`, `--flush` does not override it.
    public var due: Int? { fields["due"].flatMap { Int($0) } }
    /// send: whether it waits for its time (`due` still ahead of `now`).
    public func isScheduled(now: Int) -> Bool { state == .queued && (due ?? 0) > now }
    /// send: the envelope recipients.
    public var recipients: [String] { ListField.split(fields["to"] ?? "") }
    /// send, append: the Message-ID of the message (with angle brackets).
    public var messageID: String? { fields["msgid"] }
    /// append: the target mailbox; nil means the account's `\Sent` folder.
    public var mailbox: String? { fields["mailbox"] }

    /// A `send` action in state `queued`.
    public static func send(
        id: String, payload: String, account: String, sender: String, recipients: [String],
        messageID: String?, dsn: (notify: String?, ret: String?, envelopeID: String?) = (nil, nil, nil),
        due: Int? = nil, time: Int
    ) -> ActionRecord {
        var fields = ["from": sender, "to": ListField.join(recipients), "since": String(time)]
        fields["due"] = due.map(String.init)
        fields["msgid"] = messageID
        fields["notify"] = dsn.notify
        fields["ret"] = dsn.ret
        fields["envid"] = dsn.envelopeID
        return ActionRecord(id: id, kind: .send, payload: payload, account: account, fields: fields, time: time)
    }

    /// An `append` action (to `mailbox`, or to the `\Sent` folder when nil) in state `queued`.
    public static func append(
        id: String, payload: String, account: String, mailbox: String? = nil,
        messageID: String?, flags: [String] = ["\\Seen"], time: Int
    ) -> ActionRecord {
        var fields: [String: String] = ["flags": ListField.join(flags)]
        fields["mailbox"] = mailbox
        fields["msgid"] = messageID
        return ActionRecord(id: id, kind: .append, payload: payload, account: account, fields: fields, time: time)
    }

    /// A `move` action: the message UID `uid` (in `folder` at `uidValidity`) to folder `destination`.
    /// `file` optionally names the local Maildir file (unique part) for mo-sync.
    public static func move(
        id: String, account: String, folder: String, uidValidity: UInt32, uid: UInt32,
        destination: String, file: String? = nil, time: Int
    ) -> ActionRecord {
        var fields = ["folder": folder, "uidvalidity": String(uidValidity), "uid": String(uid), "to": destination]
        fields["file"] = file
        return ActionRecord(id: id, kind: .move, payload: nil, account: account, fields: fields, time: time)
    }

    /// A `flag` action: add and remove IMAP flags (`\Seen`, `$Label`) of one message.
    public static func flag(
        id: String, account: String, folder: String, uidValidity: UInt32, uid: UInt32,
        add: [String], remove: [String], file: String? = nil, time: Int
    ) -> ActionRecord {
        var fields = [
            "folder": folder, "uidvalidity": String(uidValidity), "uid": String(uid),
            "add": ListField.join(add), "remove": ListField.join(remove)
        ]
        fields["file"] = file
        return ActionRecord(id: id, kind: .flag, payload: nil, account: account, fields: fields, time: time)
    }

    /// The same action in `state` at `time`, with the given changes.
    public func moved(
        to state: ActionState, at time: Int, tries: Int? = nil, next: Int?? = .none,
        error: String?? = .none, fields extra: [String: String] = [:]
    ) -> ActionRecord {
        var r = self
        r.state = state
        r.time = time
        if let tries { r.tries = tries }
        if let next { r.next = next }
        if let error { r.error = error }
        for (k, v) in extra { r.fields[k] = v }
        return r
    }
}

/// Lists inside one field value: items joined by ",", each item escaped so it holds no ",".
enum ListField {
    static func join(_ items: [String]) -> String {
        items.map { $0.replacingComma() }.joined(separator: ",")
    }

    static func split(_ value: String) -> [String] {
        value.isEmpty ? [] : value.split(separator: ",", omittingEmptySubsequences: false).map { String($0).restoringComma() }
    }
}

private extension String {
    // Inside a list item "," is written "%2C" and "%" "%25" before the whole value is escaped again.
    func replacingComma() -> String {
        var out = ""
        for ch in self {
            switch ch {
            case "%": out += "%25"
            case ",": out += "%2C"
            default: out.append(ch)
            }
        }
        return out
    }

    func restoringComma() -> String { PercentEscape.unescape(self) ?? self }
}
