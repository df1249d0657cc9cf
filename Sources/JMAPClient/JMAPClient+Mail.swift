import MoCore

/// A mailbox (RFC 8621 §2): the folder it becomes is found from `parentId` and `name`; `role` names the
/// special-use folders (inbox, sent, drafts, trash, junk, archive).
public struct JMAPMailbox: Sendable, Equatable {
    public var id: String
    public var name: String
    public var parentID: String?
    public var role: String?

    public init(id: String, name: String, parentID: String? = nil, role: String? = nil) {
        self.id = id
        self.name = name
        self.parentID = parentID
        self.role = role
    }

    /// The mailboxes of a `Mailbox/get` answer's arguments, and its state.
    public static func list(from args: JSONValue) throws(GenericError) -> (state: String, mailboxes: [JMAPMailbox]) {
        guard case .array(let list)? = args["list"], let state = args["state"]?.stringValue else {
            throw JMAPClient.bad("Mailbox/get", "no list or state")
        }
        let boxes = try list.map { item throws(GenericError) -> JMAPMailbox in
            guard let id = item["id"]?.stringValue, let name = item["name"]?.stringValue else {
                throw JMAPClient.bad("Mailbox/get", "a mailbox without id or name")
            }
            return JMAPMailbox(id: id, name: name, parentID: item["parentId"]?.stringValue, role: item["role"]?.stringValue)
        }
        return (state, boxes)
    }
}

/// What the sync needs of an Email (RFC 8621 §4): its id and blob, its mailboxes and keywords, its size.
public struct JMAPEmail: Sendable, Equatable {
    public var id: String
    public var blobID: String
    public var mailboxIDs: Set<String>
    public var keywords: Set<String>
    public var size: Int
    public var receivedAt: String

    public static let properties = ["id", "blobId", "mailboxIds", "keywords", "size", "receivedAt"]

    public init(id: String, blobID: String, mailboxIDs: Set<String>, keywords: Set<String>, size: Int, receivedAt: String) {
        self.id = id
        self.blobID = blobID
        self.mailboxIDs = mailboxIDs
        self.keywords = keywords
        self.size = size
        self.receivedAt = receivedAt
    }
}

/// An `Email/changes` or `Mailbox/changes` answer (RFC 8620 §5.2).
public struct JMAPChanges: Sendable, Equatable {
    public var oldState: String
    public var newState: String
    public var hasMoreChanges: Bool
    public var created: [String]
    public var updated: [String]
    public var destroyed: [String]

    public init(oldState: String, newState: String, hasMoreChanges: Bool, created: [String], updated: [String], destroyed: [String]) {
        self.oldState = oldState
        self.newState = newState
        self.hasMoreChanges = hasMoreChanges
        self.created = created
        self.updated = updated
        self.destroyed = destroyed
    }

    /// The changes of a `Foo/changes` answer's arguments (`method` names it in the error).
    public static func parse(_ got: JSONValue, method: String) throws(GenericError) -> JMAPChanges {
        guard let old = got["oldState"]?.stringValue, let new = got["newState"]?.stringValue else {
            throw JMAPClient.bad(method, "no oldState or newState")
        }
        func ids(_ key: String) -> [String] { if case .array(let a)? = got[key] { a.compactMap(\.stringValue) } else { [] } }
        return JMAPChanges(
            oldState: old, newState: new, hasMoreChanges: got["hasMoreChanges"] == .bool(true), created: ids("created"),
            updated: ids("updated"), destroyed: ids("destroyed"))
    }
}

/// What an `Email/set` did (RFC 8620 §5.3): the new state, and the ids it refused with the error's type.
public struct JMAPSetResult: Sendable, Equatable {
    /// The state before the change, when the server says (RFC 8620 §5.3: it may be null).
    public var oldState: String?
    public var newState: String
    public var notUpdated: [String: String]
    public var notDestroyed: [String: String]

    public init(oldState: String?, newState: String, notUpdated: [String: String], notDestroyed: [String: String]) {
        self.oldState = oldState
        self.newState = newState
        self.notUpdated = notUpdated
        self.notDestroyed = notDestroyed
    }
}

/// The mail methods the sync uses. Each throws `GenericError` for transport and malformed answers and
/// `JMAPMethodError` for a method's own error (`cannotCalculateChanges`, `stateMismatch`), which callers
/// act on.
extension JMAPClient {
    /// Every mailbox of the account, and the Mailbox state.
    public func mailboxes() throws -> (state: String, mailboxes: [JMAPMailbox]) {
        let answer = try call([JMAPCall("Mailbox/get", .object([("accountId", .string(session.accountID)), ("ids", .null)]), id: "m")])
        return try JMAPMailbox.list(from: try answer.arguments(for: "m"))
    }

    /// The ids of every Email of the account (`Email/query`, no filter, oldest first), and the Email state
    /// read before the first page (so `Email/changes` from it may name again what the listing has, never
    /// miss what it lacks). A listing the account's changes cut across is taken again (at most 3 times).
    public func allEmailIDs() throws -> (state: String, ids: [String]) {
        var tries = 0
        while true {
            do {
                return try queryAll(filter: nil, withState: true)
            } catch let error as JMAPMethodError where error.type == "stateMismatch" && tries < 2 {
                tries += 1
            }
        }
    }

    /// Every id an `Email/query` with `filter` answers, page after page: each page as long as the server's
    /// own `limit` allows (RFC 8620 §5.5: it may cut the one asked), until `total`. Every page must answer
    /// from one query state, or the pages may skip or repeat a message (`stateMismatch` is thrown). With
    /// `withState`, the Email state is read in the first request, before the first page.
    public func queryAll(filter: JSONValue?, withState: Bool = false) throws -> (state: String, ids: [String]) {
        var ids: [String] = []
        var queryState: String?
        var emailState = ""
        var total: Int?
        var page = session.limits.maxObjectsInGet
        while total.map({ ids.count < $0 }) ?? true {
            var args: [(String, JSONValue)] = [
                ("accountId", .string(session.accountID)),
                ("sort", .array([.object([("property", "receivedAt"), ("isAscending", true)])])),
                ("position", .int(ids.count)), ("limit", .int(page)), ("calculateTotal", true)
            ]
            if let filter { args.append(("filter", filter)) }
            var calls = [JMAPCall("Email/query", .object(args), id: "q")]
            if withState && queryState == nil {
                calls.insert(
                    JMAPCall("Email/get", .object([("accountId", .string(session.accountID)), ("ids", .array([]))]), id: "s"), at: 0)
            }
            let answer = try call(calls)
            if withState && queryState == nil {
                guard let s = try answer.arguments(for: "s")["state"]?.stringValue else { throw Self.bad("Email/get", "no state") }
                emailState = s
            }
            let got = try answer.arguments(for: "q")
            guard case .array(let found)? = got["ids"], let state = got["queryState"]?.stringValue, let n = got["total"]?.intValue else {
                throw Self.bad("Email/query", "no ids, queryState or total")
            }
            if let queryState, queryState != state {
                throw JMAPMethodError(type: "stateMismatch", detail: "the account changed while it was listed", callName: "Email/query")
            }
            queryState = state
            total = Int(n)
            if let limit = got["limit"]?.intValue, limit > 0 { page = min(page, Int(limit)) }
            if found.isEmpty && ids.count < Int(n) { throw Self.bad("Email/query", "an empty page before the total") }
            ids += found.compactMap(\.stringValue)
        }
        return (emailState, ids)
    }

    /// The Emails of `ids` with `JMAPEmail.properties`, in calls of at most `maxObjectsInGet` ids and
    /// requests of at most `maxCallsInRequest` calls. Ids the server no longer has are left out. Also
    /// returns the Email state the answer is as of (of the last call).
    public func emails(_ ids: [String]) throws -> (state: String, emails: [JMAPEmail]) {
        var out: [JMAPEmail] = []
        out.reserveCapacity(ids.count)
        let state = try get(ids, properties: JMAPEmail.properties) { item throws in out.append(try Self.email(item)) }
        return (state, out)
    }

    /// `Email/get` of `properties` of `ids`, batched as `emails` is, each Email's object handed to `each`;
    /// returns the state of the last answer.
    public func get(_ ids: [String], properties: [String], _ each: (JSONValue) throws -> Void) throws -> String {
        var state = ""
        let per = session.limits.maxObjectsInGet
        let chunks = stride(from: 0, to: ids.count, by: per).map { Array(ids[$0..<min(ids.count, $0 + per)]) }
        for group in stride(from: 0, to: chunks.count, by: session.limits.maxCallsInRequest) {
            let calls = chunks[group..<min(chunks.count, group + session.limits.maxCallsInRequest)].enumerated().map { i, chunk in
                JMAPCall(
                    "Email/get",
                    .object([
                        ("accountId", .string(session.accountID)), ("ids", .strings(chunk)), ("properties", .strings(properties))
                    ]),
                    id: "g\(i)")
            }
            let answer = try call(calls)
            for c in calls {
                let args = try answer.arguments(for: c.id)
                guard case .array(let list)? = args["list"] else { throw Self.bad("Email/get", "no list") }
                state = args["state"]?.stringValue ?? state
                for item in list { try each(item) }
            }
        }
        return state
    }

    /// `Email/changes` since `state` (at most `maxChanges`); throws `JMAPMethodError` `cannotCalculateChanges`
    /// when the server cannot say.
    public func emailChanges(since state: String, maxChanges: Int = 4096) throws -> JMAPChanges {
        try changes("Email/changes", since: state, maxChanges: maxChanges)
    }

    /// `Mailbox/changes` since `state`.
    public func mailboxChanges(since state: String) throws -> JMAPChanges {
        try changes("Mailbox/changes", since: state, maxChanges: 4096)
    }

    /// One `Email/set` of `update` patches (id → patch object: `keywords/$seen: true`, `mailboxIds/ID: null`…)
    /// and `destroy`, guarded by `ifInState` when given (a `stateMismatch` is thrown: someone else changed
    /// the account since the caller looked).
    public func setEmails(update: [(String, JSONValue)] = [], destroy: [String] = [], ifInState: String? = nil) throws -> JMAPSetResult {
        var args: [(String, JSONValue)] = [("accountId", .string(session.accountID))]
        if let ifInState { args.append(("ifInState", .string(ifInState))) }
        if !update.isEmpty { args.append(("update", .object(update))) }
        if !destroy.isEmpty { args.append(("destroy", .strings(destroy))) }
        let answer = try call([JMAPCall("Email/set", .object(args), id: "s")])
        let got = try answer.arguments(for: "s")
        guard let newState = got["newState"]?.stringValue else { throw Self.bad("Email/set", "no newState") }
        return JMAPSetResult(
            oldState: got["oldState"]?.stringValue, newState: newState, notUpdated: Self.errorTypes(got["notUpdated"]),
            notDestroyed: Self.errorTypes(got["notDestroyed"]))
    }

    /// Imports an uploaded blob as an Email in `mailboxIDs` with `keywords` (`Email/import`, RFC 8621 §4.8).
    /// A message the account already has (`alreadyExists`: servers that key Emails by content) gives the
    /// existing id (`existed`), so a repeated import after a crash makes no second copy.
    public func importEmail(blobID: String, mailboxIDs: Set<String>, keywords: Set<String>, receivedAt: String? = nil) throws -> (
        id: String, existed: Bool
    ) {
        var email: [(String, JSONValue)] = [
            ("blobId", .string(blobID)),
            ("mailboxIds", .object(mailboxIDs.sorted().map { ($0, .bool(true)) })),
            ("keywords", .object(keywords.sorted().map { ($0, .bool(true)) }))
        ]
        if let receivedAt { email.append(("receivedAt", .string(receivedAt))) }
        let answer = try call([
            JMAPCall(
                "Email/import", .object([("accountId", .string(session.accountID)), ("emails", .object([("e", .object(email))]))]), id: "i")
        ])
        let got = try answer.arguments(for: "i")
        if let id = got["created"]?["e"]?["id"]?.stringValue { return (id, false) }
        if let failure = got["notCreated"]?["e"] {
            if failure["type"]?.stringValue == "alreadyExists", let id = failure["existingId"]?.stringValue { return (id, true) }
            throw JMAPMethodError(
                type: failure["type"]?.stringValue ?? "notCreated", detail: failure["description"]?.stringValue, callName: "Email/import")
        }
        throw Self.bad("Email/import", "neither created nor notCreated")
    }

    // MARK: Parsing

    public static func email(_ item: JSONValue) throws(GenericError) -> JMAPEmail {
        guard let id = item["id"]?.stringValue, let blob = item["blobId"]?.stringValue, let size = item["size"]?.intValue,
            case .object = item["mailboxIds"]
        else { throw bad("Email/get", "an Email without id, blobId, size or mailboxIds") }
        return JMAPEmail(
            id: id, blobID: blob, mailboxIDs: trueKeys(item["mailboxIds"]), keywords: trueKeys(item["keywords"]), size: Int(size),
            receivedAt: item["receivedAt"]?.stringValue ?? "")
    }

    /// The keys of a `String[Boolean]` map (`mailboxIds`, `keywords`) whose value is true; none for anything else.
    public static func trueKeys(_ value: JSONValue?) -> Set<String> {
        guard case .object(let fields)? = value else { return [] }
        return Set(fields.filter { $0.1 == .bool(true) }.map(\.0))
    }

    private func changes(_ method: String, since state: String, maxChanges: Int) throws -> JMAPChanges {
        let answer = try call([
            JMAPCall(
                method,
                .object([("accountId", .string(session.accountID)), ("sinceState", .string(state)), ("maxChanges", .int(maxChanges))]),
                id: "c")
        ])
        return try JMAPChanges.parse(try answer.arguments(for: "c"), method: method)
    }

    /// `notUpdated`/`notDestroyed`: id → SetError type. Cyrus answers `null` for an empty map (quirk 7).
    static func errorTypes(_ value: JSONValue?) -> [String: String] {
        guard case .object(let fields)? = value else { return [:] }
        var out: [String: String] = [:]
        for (id, error) in fields { out[id] = error["type"]?.stringValue ?? "unknown" }
        return out
    }

    static func bad(_ method: String, _ detail: String) -> GenericError {
        GenericError(.protocolViolation, "bad JMAP \(method) answer: \(detail)")
    }
}
