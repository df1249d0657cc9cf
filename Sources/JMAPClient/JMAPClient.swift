import MoCore
import MoHTTP
import MoNet

/// A JMAP client over `HTTPConnection`s: the session fetched once, method calls POSTed to its API URL on
/// one kept-alive connection, blobs uploaded and downloaded (streamed) over the connection of their origin.
/// Requests are counted, for the benchmark's "HTTP requests" column. Credentials go in one `Authorization`
/// field, never into a message or a log.
public final class JMAPClient {
    public private(set) var session: JMAPSession
    public private(set) var sessionURL: WebAddress
    let authorization: String
    let tls: TLSOptions
    let timeout: Double
    private var connections: [String: HTTPConnection] = [:]
    /// HTTP requests sent (session, API calls, uploads, downloads).
    public internal(set) var requests = 0
    /// `--debug`: one line per request (its methods and ids count, or a blob's address), never credentials.
    public var trace: (@Sendable (String) -> Void)?
    /// Bytes of a method call's answer at most (the session's own requests are bounded by maxSizeRequest).
    public var maxAnswer = 64 * 1024 * 1024

    /// `Authorization` for Basic authentication (RFC 7617).
    public static func basic(user: String, password: String) -> String { "Basic " + Base64.encode(Array("\(user):\(password)".utf8)) }
    /// `Authorization` for a bearer token (RFC 6750: OAuth2, or an API token such as Fastmail's).
    public static func bearer(_ token: String) -> String { "Bearer " + token }

    /// Fetches the session at `url` (RFC 8620 §2.2). A redirect (a domain's `/.well-known/jmap` leads to the
    /// server's session resource) is followed up to 5 times, to https, or http on loopback only.
    public convenience init(sessionURL url: WebAddress, authorization: String, tls: TLSOptions = TLSOptions(), timeout: Double = 30)
        throws(GenericError)
    {
        let (bytes, address) = try Self.fetchSession(url, authorization: authorization, tls: tls, timeout: timeout)
        try self.init(sessionBytes: bytes, from: address, authorization: authorization, tls: tls, timeout: timeout)
        requests = 1
    }

    /// A client over a session fetched before (`sessionBytes`, from `address`): no request. A run that kept
    /// the session asks nothing for it; `sessionChanged` then says whether to fetch it again.
    public init(
        sessionBytes: [UInt8], from address: WebAddress, authorization: String, tls: TLSOptions = TLSOptions(), timeout: Double = 30
    )
        throws(GenericError)
    {
        self.authorization = authorization
        self.tls = tls
        self.timeout = timeout
        session = try JMAPSession.parse(sessionBytes, base: address)
        sessionURL = address
        self.sessionBytes = sessionBytes
    }

    /// The session resource's bytes as fetched (to keep for the next run).
    public private(set) var sessionBytes: [UInt8] = []
    /// Whether an answer named another session state than the session's: fetch it again (`refreshSession`).
    public private(set) var sessionChanged = false

    /// Fetches the session again from `url` (the configured address: a cached session's own address may
    /// be a redirect's target).
    public func refreshSession(from url: WebAddress) throws(GenericError) {
        let (bytes, address) = try Self.fetchSession(url, authorization: authorization, tls: tls, timeout: timeout)
        requests += 1
        session = try JMAPSession.parse(bytes, base: address)
        sessionURL = address
        sessionBytes = bytes
        sessionChanged = false
        close()
    }

    private static func fetchSession(_ url: WebAddress, authorization: String, tls: TLSOptions, timeout: Double) throws(GenericError) -> (
        [UInt8], WebAddress
    ) {
        var address = url
        for _ in 0..<6 {
            let response = try Self.get(address, authorization: authorization, tls: tls, timeout: timeout)
            if (300..<400).contains(response.status), let location = response.location {
                guard let next = JMAPSession.resolve(location, base: address).flatMap(WebAddress.init), next.secure || next.isLoopback
                else {
                    throw GenericError(.protocolViolation, "\(address.origin): a redirect to an unusable address")
                }
                address = next
                continue
            }
            try Self.check(response, at: address)
            return (response.body, address)
        }
        throw GenericError(.protocolViolation, "\(url.origin): too many redirects")
    }

    /// The method calls answered, in one HTTP request, or in several of at most `maxCallsInRequest` calls
    /// (the calls never refer to each other's results). Capabilities: core and mail, and submission when a
    /// call is one of its methods.
    public func call(_ calls: [JMAPCall]) throws(GenericError) -> JMAPAnswer {
        precondition(!calls.isEmpty, "at least one call")
        let most = max(1, session.limits.maxCallsInRequest)
        guard calls.count <= most else {
            var merged: [String: [(String, JSONValue)]] = [:]
            var state: String?
            for start in stride(from: 0, to: calls.count, by: most) {
                let part = try call(Array(calls[start..<min(calls.count, start + most)]))
                merged.merge(part.byID) { a, _ in a }
                state = part.sessionState ?? state
            }
            return JMAPAnswer(byID: merged, calls: calls, sessionState: state)
        }
        var using = [JMAPSession.core, JMAPSession.mail]
        if calls.contains(where: { $0.name.hasPrefix("EmailSubmission/") || $0.name.hasPrefix("Identity/") }) {
            using.append(JMAPSession.submission)
        }
        if let blob = session.blobCapability, calls.contains(where: { $0.name.hasPrefix("Blob/") }) { using.append(blob) }
        let body = JMAPWire.request(calls, using: using)
        trace?(
            "JMAP POST \(session.apiURL.target): "
                + calls.map { c in
                    if case .array(let ids)? = c.arguments["ids"] { return "\(c.name) (\(ids.count) ids)" }
                    return c.name
                }.joined(separator: ", "))
        // Sent again on a new connection only when no call creates anything (a repeated create would make
        // a second copy on a server that does not key Emails by content).
        let creates = calls.contains { c in
            c.name == "Email/import" || c.name.hasPrefix("EmailSubmission/") || (c.name.hasSuffix("/set") && c.arguments["create"] != nil)
        }
        let response = try send(
            "POST", session.apiURL, headers: [("Content-Type", "application/json")], body: body, maxBody: maxAnswer, idempotent: !creates)
        try Self.check(response, at: session.apiURL)
        let answer = try JMAPWire.responses(response.body, to: calls)
        if let state = answer.sessionState, state != session.state { sessionChanged = true }
        return answer
    }

    /// Uploads `bytes` (RFC 8620 §6.1); returns the blob id. Servers that store blobs by content (Cyrus,
    /// Fastmail, Stalwart) give the same id for the same bytes, so an upload repeated after a crash makes
    /// nothing new.
    public func upload(_ bytes: [UInt8], type: String = "message/rfc822") throws(GenericError) -> String {
        guard let address = session.uploadAddress else { throw GenericError(.protocolViolation, "bad JMAP session: an unusable uploadUrl") }
        guard bytes.count <= session.limits.maxSizeUpload else {
            throw GenericError(
                .data, "a message of \(bytes.count) bytes is larger than the server's upload limit (\(session.limits.maxSizeUpload))")
        }
        trace?("JMAP POST \(escapedForMessage(address.target)): \(bytes.count) bytes")
        let response = try send("POST", address, headers: [("Content-Type", type)], body: bytes, maxBody: 64 * 1024, idempotent: true)
        try Self.check(response, at: address)
        guard let json = try? JSONReader.parse(response.body), let blob = json["blobId"]?.stringValue else {
            throw GenericError(.protocolViolation, "bad JMAP upload response: no blobId")
        }
        return blob
    }

    /// Downloads a blob (RFC 8620 §6.2), handing its bytes to `sink` as they arrive; at most `maxBytes`.
    /// Returns false, having handed nothing, when the server has no such blob (404: the message was
    /// destroyed since it was listed).
    @discardableResult
    public func download(blobID: String, maxBytes: Int, sink: @escaping ([UInt8]) throws(GenericError) -> Void) throws(GenericError) -> Bool
    {
        guard let address = session.downloadAddress(blobID: blobID) else {
            throw GenericError(.protocolViolation, "bad JMAP session: an unusable downloadUrl")
        }
        trace?("JMAP GET \(escapedForMessage(String(address.target.prefix { $0 != "?" })))")
        let response = try send("GET", address, headers: [], body: nil, maxBody: maxBytes, sink: sink)
        if response.status == 404 { return false }
        try Self.check(response, at: address)
        return true
    }

    /// Connections opened for requests after the session's (one per origin while the server keeps them).
    public var connectionsOpened: Int { connections.values.reduce(0) { $0 + $1.connectionsOpened } }

    /// Downloads many blobs over one connection, their requests pipelined (`HTTPConnection.pipeline`): each
    /// blob's bytes go to `sink` with its index as they arrive, then `done(index, found)` (found false: the
    /// server has no such blob, 404). Every blob must be at the download URL's one origin.
    public func download(
        blobIDs: [String], maxBytes: Int, sink: ([UInt8], Int) throws(GenericError) -> Void,
        done: (Int, Bool) throws(GenericError) -> Void
    ) throws(GenericError) {
        guard !blobIDs.isEmpty else { return }
        var addresses: [WebAddress] = []
        for blob in blobIDs {
            guard let a = session.downloadAddress(blobID: blob) else {
                throw GenericError(.protocolViolation, "bad JMAP session: an unusable downloadUrl")
            }
            addresses.append(a)
        }
        requests += blobIDs.count
        trace?("JMAP GET \(blobIDs.count) blob(s), pipelined")
        var status = 0
        var failure: [UInt8] = []
        try connection(for: addresses[0]).pipeline(
            addresses.map(\.target), headers: [("Authorization", authorization)], maxBody: maxBytes
        ) { (i: Int, event: HTTPConnection.PipelinedEvent) throws(GenericError) in
            switch event {
            case .status(let s):
                status = s
                failure = []
            case .bytes(let b):
                if (200..<300).contains(status) { try sink(b, i) } else if failure.count < 4096 { failure += b }
            case .end:
                if status == 404 { return try done(i, false) }
                try Self.check(HTTPConnection.Response(status: status, body: failure, location: nil), at: addresses[i])
                try done(i, true)
            }
        }
    }

    /// Many blobs in one request (`Blob/get` with `data:asBase64`, where `session.blobCapability` says the
    /// server has it): each blob's bytes handed to `each` with its index, in the order of `blobIDs`; blobs
    /// the server does not have are passed over.
    public func blobs(_ blobIDs: [String], each: ([UInt8], Int) throws -> Void) throws {
        guard !blobIDs.isEmpty else { return }
        let answer = try call([
            JMAPCall(
                "Blob/get",
                .object([
                    ("accountId", .string(session.accountID)), ("ids", .strings(blobIDs)),
                    ("properties", .strings(["data:asBase64", "size"]))
                ]),
                id: "b")
        ])
        guard case .array(let list)? = try answer.arguments(for: "b")["list"] else { throw Self.bad("Blob/get", "no list") }
        var byID: [String: String] = [:]
        for item in list {
            if let id = item["id"]?.stringValue, let data = item["data:asBase64"]?.stringValue { byID[id] = data }
        }
        for (i, id) in blobIDs.enumerated() {
            guard let text = byID[id] else { continue }
            guard let bytes = Base64.decode(text) else { throw Self.bad("Blob/get", "data that is not base64") }
            try each(bytes, i)
        }
    }

    /// Closes every connection.
    public func close() {
        for connection in connections.values { connection.close() }
        connections = [:]
    }

    // MARK: HTTP

    private func connection(for address: WebAddress) -> HTTPConnection {
        let key = address.origin
        if let existing = connections[key] { return existing }
        let made = HTTPConnection(origin: address, tls: tls, timeout: timeout)
        connections[key] = made
        return made
    }

    /// One request with the account's credentials; with `sink`, a 2xx body streams to it.
    private func send(
        _ method: String, _ address: WebAddress, headers: [(String, String)], body: [UInt8]?, maxBody: Int,
        idempotent: Bool = true, sink: (([UInt8]) throws(GenericError) -> Void)? = nil
    ) throws(GenericError) -> HTTPConnection.Response {
        requests += 1
        let all = [("Authorization", authorization), ("Accept", "application/json")] + headers
        return try connection(for: address).send(
            method, address.target, headers: all, body: body, maxBody: maxBody, idempotent: idempotent, sink: sink)
    }

    private static func get(_ address: WebAddress, authorization: String, tls: TLSOptions, timeout: Double) throws(GenericError)
        -> HTTPConnection.Response
    {
        let connection = HTTPConnection(origin: address, tls: tls, timeout: timeout)
        defer { connection.close() }
        return try connection.send(
            "GET", address.target, headers: [("Authorization", authorization), ("Accept", "application/json")], maxBody: 4 * 1024 * 1024)
    }

    /// A status other than 2xx as a one-line error: 401/403 are authentication, others name the problem.
    static func check(_ response: HTTPConnection.Response, at address: WebAddress) throws(GenericError) {
        guard !(200..<300).contains(response.status) else { return }
        let place = address.origin + address.target.prefix { $0 != "?" }
        if response.status == 401 || response.status == 403 {
            throw GenericError(.authentication, "\(place): the server refused the credentials (HTTP \(response.status))")
        }
        let why = JMAPWire.problem(response.body).map { ": \($0)" } ?? ""
        // 5xx: the server (or a proxy before it) failing now, as a restart does: worth trying again.
        throw GenericError(response.status >= 500 ? .temporary : .protocolViolation, "\(place): HTTP \(response.status)\(why)")
    }

}
