#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// A Gmail-model IMAP server for the tests (issue 26), answering through `ScriptedIMAPServer`'s script
/// hook: `ScriptedIMAPServer(greeting: GmailModel.greeting, script: model.answer)`. No real Gmail can be
/// had in a test, so this one follows what Google publishes, each behaviour marked with its source:
///
/// - [EXT] developers.google.com/workspace/gmail/imap/imap-extensions ("IMAP Extensions"): X-GM-EXT-1;
///   X-GM-MSGID (one id per message across the account), X-GM-THRID, X-GM-LABELS in FETCH, STORE and
///   SEARCH; system labels written `\Inbox`, `\Sent`, `\Draft`, `\Important`, `\Starred`, `\Trash`, `\Spam`.
/// - [LBL] support.google.com/mail/answer/7126229 ("Check Gmail through other email platforms"; how
///   labels appear in IMAP): every label is a folder and a message is in the folder of each of its labels;
///   `[Gmail]/All Mail` holds every message but Spam and Trash; Starred is the `\Flagged` flag; `\Seen`
///   and `\Flagged` are the message's, so the same in every folder; COPY to a label folder adds the label;
///   deleting (expunging) in a label folder removes that label only; expunged in Trash or Spam, a message
///   is gone; in All Mail, it goes to Trash.
/// - [CAP] Gmail's capabilities as its servers send them (recorded in client transcripts, e.g. MailKit
///   issue 1396): CONDSTORE, no QRESYNC; UIDPLUS, MOVE, SPECIAL-USE, IDLE.
///
/// Per-folder UIDs (each folder its own UIDVALIDITY and UIDNEXT, [LBL]) are given in X-GM-MSGID order when a
/// message enters a folder's view, and never reused. MODSEQ is one counter for the account (CONDSTORE).
public final class GmailModel: Sendable {
    public struct Message: Sendable {
        public var id: UInt64
        public var thread: UInt64
        /// System labels as `\Inbox` etc. (not `\Starred`: that is the `\Flagged` flag), and user labels.
        public var labels: Set<String>
        /// `\Seen`, `\Flagged`, `\Answered`, `\Draft`, keywords: the message's, in every folder.
        public var flags: Set<String>
        public var body: [UInt8]
        public var modSeq: UInt64 = 1
        /// INTERNALDATE, seconds since 1970 (UID SEARCH BEFORE compares its UTC date).
        public var arrived: Int64 = Int64(time(nil))
    }

    /// The folders every account has, with the label (or flag) each is the view of ([LBL]).
    static let systemFolders: [(name: String, label: String?, attributes: String)] = [
        ("INBOX", "\\Inbox", "\\HasNoChildren"),
        ("[Gmail]/All Mail", nil, "\\All \\HasNoChildren"),
        ("[Gmail]/Drafts", "\\Draft", "\\Drafts \\HasNoChildren"),
        ("[Gmail]/Important", "\\Important", "\\Important \\HasNoChildren"),
        ("[Gmail]/Sent Mail", "\\Sent", "\\Sent \\HasNoChildren"),
        ("[Gmail]/Spam", "\\Spam", "\\Junk \\HasNoChildren"),
        ("[Gmail]/Starred", "\\Starred", "\\Flagged \\HasNoChildren"),
        ("[Gmail]/Trash", "\\Trash", "\\Trash \\HasNoChildren")
    ]

    public static let capabilities =
        "IMAP4rev1 UNSELECT IDLE NAMESPACE QUOTA ID XLIST CHILDREN X-GM-EXT-1 UIDPLUS ENABLE MOVE CONDSTORE ESEARCH "
        + "UTF8=ACCEPT LIST-EXTENDED LIST-STATUS LITERAL- SPECIAL-USE APPENDLIMIT=35651584"
    public static let greeting: [ScriptedIMAPServer.Reply] = [.text("* OK Gimap ready for requests from 127.0.0.1\r\n")]

    struct View: Sendable {
        var uidValidity: UInt32
        var uidNext: UInt32 = 1
        var uids: [UInt64: UInt32] = [:]  // message id -> UID
        var deleted: Set<UInt64> = []
    }

    struct State: Sendable {
        var messages: [UInt64: Message] = [:]
        var userLabels: Set<String> = []
        var views: [String: View] = [:]
        var modSeq: UInt64 = 1
        var nextID: UInt64 = 1_278_455_344_230_334_866  // Google's example id [EXT]
        var selected: [Int: String] = [:]  // connection -> folder
        var idling: [Int: String] = [:]  // connection -> the IDLE's tag
        var downloads: [UInt64: Int] = [:]  // message id -> whole bodies sent
    }

    let state: Mutex<State>
    /// Sends news to an idling connection (`attach`).
    let pusher = Mutex<(@Sendable ([UInt8], Int) -> Void)?>(nil)

    /// Lets the model tell idling clients of `server` about changes (IDLE, RFC 2177: `* N EXISTS` in the
    /// idling folder when its view changed).
    public func attach(_ server: ScriptedIMAPServer) {
        pusher.withLock { $0 = { [weak server] bytes, connection in _ = server?.push(bytes, toConnection: connection) } }
    }

    /// `* N EXISTS` to every idling connection (each told its folder's count).
    func tellIdlers() {
        let news = state.withLock { s in
            s.idling.keys.compactMap { c in s.selected[c].map { (c, "* \(s.views[$0]?.uids.count ?? 0) EXISTS\r\n") } }
        }
        guard let push = pusher.withLock({ $0 }) else { return }
        for (connection, line) in news { push(Array(line.utf8), connection) }
    }

    /// Messages given as (labels, flags, body); user labels become folders.
    public init(_ seed: [(labels: Set<String>, flags: Set<String>, body: [UInt8])] = []) {
        var s = State()
        for (i, m) in seed.enumerated() {
            let id = s.nextID + UInt64(i)
            s.messages[id] = Message(id: id, thread: id, labels: m.labels, flags: m.flags, body: m.body)
            s.userLabels.formUnion(m.labels.filter { !$0.hasPrefix("\\") })
        }
        s.nextID += UInt64(seed.count)
        state = Mutex(s)
        refreshViews()
    }

    /// How many times each message's whole body was sent (a test's "downloaded once").
    public var bodyDownloads: [UInt64: Int] { state.withLock { $0.downloads } }

    /// The messages as the server holds them (for a test's checks).
    public var messages: [Message] { state.withLock { $0.messages.values.sorted { $0.id < $1.id } } }

    /// A change "in the web interface": `change` edits the messages; their MODSEQ moves.
    public func webChange(_ change: (inout [UInt64: Message]) -> Void) {
        state.withLock { s in
            let before = s.messages
            change(&s.messages)
            for (id, m) in s.messages where before[id].map({ $0.labels != m.labels || $0.flags != m.flags }) ?? true {
                s.modSeq += 1
                s.messages[id]!.modSeq = s.modSeq
                s.userLabels.formUnion(m.labels.filter { !$0.hasPrefix("\\") })
            }
        }
        refreshViews()
        tellIdlers()
    }

    /// A message arriving (mail delivered to the account): a new X-GM-MSGID, its MODSEQ the newest;
    /// `arrived`: its INTERNALDATE (default now).
    public func deliver(labels: Set<String>, flags: Set<String> = [], body: [UInt8], arrived: Int64? = nil) {
        state.withLock { s in
            s.modSeq += 1
            s.messages[s.nextID] = Message(
                id: s.nextID, thread: s.nextID, labels: labels, flags: flags, body: body, modSeq: s.modSeq,
                arrived: arrived ?? Int64(time(nil)))
            s.userLabels.formUnion(labels.filter { !$0.hasPrefix("\\") })
            s.nextID += 1
        }
        refreshViews()
        tellIdlers()
    }

    // MARK: - Views

    /// The folders: the system ones, and one per user label ([LBL]).
    func folderNames(_ s: State) -> [String] { Self.systemFolders.map(\.name) + s.userLabels.sorted() }

    /// Whether message `m` is in the view of folder `name` ([LBL]).
    static func inView(_ m: Message, _ name: String) -> Bool {
        let gone = m.labels.contains("\\Trash") || m.labels.contains("\\Spam")
        switch name {
        case "[Gmail]/All Mail": return !gone
        case "[Gmail]/Starred": return m.flags.contains("\\Flagged") && !gone
        case "[Gmail]/Trash": return m.labels.contains("\\Trash")
        case "[Gmail]/Spam": return m.labels.contains("\\Spam") && !m.labels.contains("\\Trash")
        default:
            guard let label = label(of: name) else { return false }
            return m.labels.contains(label) && !gone
        }
    }

    static func label(of folder: String) -> String? {
        if let system = systemFolders.first(where: { $0.name == folder }) { return system.label }
        return folder
    }

    /// Gives UIDs to messages new in a view, in X-GM-MSGID order; drops those that left it.
    func refreshViews() {
        state.withLock { s in
            for (n, name) in folderNames(s).enumerated() {
                var v = s.views[name] ?? View(uidValidity: UInt32(600_000 + n))
                for id in s.messages.keys.sorted() where Self.inView(s.messages[id]!, name) && v.uids[id] == nil {
                    v.uids[id] = v.uidNext
                    v.uidNext += 1
                }
                v.uids = v.uids.filter { s.messages[$0.key].map { Self.inView($0, name) } ?? false }
                s.views[name] = v
            }
        }
    }

    /// The selected folder's messages in UID order, with their UIDs.
    func listing(_ s: State, _ folder: String) -> [(uid: UInt32, message: Message)] {
        guard let v = s.views[folder] else { return [] }
        return v.uids.map { (uid: $0.value, message: s.messages[$0.key]!) }.sorted { $0.uid < $1.uid }
    }
}
