import MoCore
import MoHTTP

/// The JMAP session resource (RFC 8620 §2): where to send method calls, upload and download blobs, and
/// listen for pushes; the mail account; the server's limits. Parsed from the bytes of a GET of the session
/// URL, pure. Cyrus gives its URLs relative (`/jmap/`): they are resolved against the session's own
/// address. Only what mo uses is kept; unknown members are ignored, as the RFC asks.
///
///     {"apiUrl": "/jmap/", "downloadUrl": "/jmap/download/{accountId}/{blobId}/{name}?accept={type}",
///      "uploadUrl": "/jmap/upload/{accountId}/", "eventSourceUrl": "/jmap/eventsource/?types={types}…",
///      "state": "0", "primaryAccounts": {"urn:ietf:params:jmap:mail": "mo"},
///      "capabilities": {"urn:ietf:params:jmap:core": {"maxObjectsInGet": 4096, …}, …}, …}
public struct JMAPSession: Sendable, Equatable {
    public static let core = "urn:ietf:params:jmap:core"
    public static let mail = "urn:ietf:params:jmap:mail"
    public static let submission = "urn:ietf:params:jmap:submission"
    public static let blob = "urn:ietf:params:jmap:blob"
    public static let cyrusBlob = "https://cyrusimap.org/ns/jmap/blob"

    /// The core capability's limits (RFC 8620 §2), each defaulting low when the server leaves it out.
    public struct Limits: Sendable, Equatable {
        public var maxSizeUpload = 50_000_000
        public var maxConcurrentUpload = 4
        public var maxSizeRequest = 10_000_000
        public var maxCallsInRequest = 16
        public var maxObjectsInGet = 500
        public var maxObjectsInSet = 500
        public init() {}
    }

    public var apiURL: WebAddress
    public var uploadURL: String
    public var downloadURL: String
    public var eventSourceURL: String?
    /// The session's state: a change means the session (accounts, capabilities) must be fetched again.
    public var state: String
    /// The account whose mail is synced: the primary account for mail.
    public var accountID: String
    public var limits: Limits
    public var canSubmit: Bool
    /// The capability under which the server offers `Blob/get` with `data:asBase64` (RFC 9404; Cyrus 3.6
    /// offers its draft under its own name with `jmap_nonstandard_extensions`): many blobs in one request.
    public var blobCapability: String?

    /// The session from the bytes of its resource, fetched from `base` (which resolves relative URLs).
    public static func parse(_ bytes: [UInt8], base: WebAddress) throws(GenericError) -> JMAPSession {
        let json: JSONValue
        do { json = try JSONReader.parse(bytes) } catch { throw bad("\(error)") }
        guard case .object = json else { throw bad("not a JSON object") }
        guard let capabilities = json["capabilities"], case .object = capabilities, capabilities[core] != nil else {
            throw bad("no \(core) capability")
        }
        guard capabilities[mail] != nil else { throw bad("the server does not offer mail (\(mail))") }
        guard let api = json["apiUrl"]?.stringValue, let apiURL = resolve(api, base: base).flatMap(WebAddress.init) else {
            throw bad("no usable apiUrl")
        }
        guard let upload = json["uploadUrl"]?.stringValue, let download = json["downloadUrl"]?.stringValue else {
            throw bad("no uploadUrl or downloadUrl")
        }
        guard let account = json["primaryAccounts"]?[mail]?.stringValue ?? onlyMailAccount(json["accounts"]) else {
            throw bad("no account for mail")
        }
        var limits = Limits()
        if let c = capabilities[core] {
            func take(_ key: String, _ slot: inout Int) {
                if let n = c[key]?.intValue, n > 0, n <= Int64(Int32.max) { slot = Int(n) }
            }
            take("maxSizeUpload", &limits.maxSizeUpload)
            take("maxConcurrentUpload", &limits.maxConcurrentUpload)
            take("maxSizeRequest", &limits.maxSizeRequest)
            take("maxCallsInRequest", &limits.maxCallsInRequest)
            take("maxObjectsInGet", &limits.maxObjectsInGet)
            take("maxObjectsInSet", &limits.maxObjectsInSet)
        }
        return JMAPSession(
            apiURL: apiURL, uploadURL: resolve(upload, base: base) ?? upload, downloadURL: resolve(download, base: base) ?? download,
            eventSourceURL: json["eventSourceUrl"]?.stringValue.flatMap { resolve($0, base: base) },
            state: json["state"]?.stringValue ?? "", accountID: account, limits: limits,
            canSubmit: capabilities[submission] != nil,
            blobCapability: [blob, cyrusBlob].first { capabilities[$0] != nil })
    }

    /// The upload address for the account (RFC 8620 §6.1).
    public var uploadAddress: WebAddress? { WebAddress(Self.expand(uploadURL, ["accountId": accountID])) }

    /// The download address of one blob (RFC 8620 §6.2), asking for it as `message/rfc822` bytes.
    public func downloadAddress(blobID: String, name: String = "message.eml") -> WebAddress? {
        WebAddress(Self.expand(downloadURL, ["accountId": accountID, "blobId": blobID, "name": name, "type": "message/rfc822"]))
    }

    /// RFC 6570 level-1 expansion: each `{name}` becomes its value, percent-encoded but for unreserved bytes.
    static func expand(_ template: String, _ values: [String: String]) -> String {
        var out = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            out += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            out += PercentEscape.escape(values[name] ?? "", where: { !isUnreserved($0) })
            rest = rest[rest.index(after: close)...]
        }
        return out + rest
    }

    private static func isUnreserved(_ b: UInt8) -> Bool {
        ASCII.isDigit(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
            || "-._~".utf8.contains(b)
    }

    /// `url` made absolute against `base`: an absolute http(s) URL as it is, `/path` on base's origin.
    static func resolve(_ url: String, base: WebAddress) -> String? {
        if url.hasPrefix("https://") || url.hasPrefix("http://") { return url }
        guard url.hasPrefix("/"), !url.hasPrefix("//") else { return nil }
        return base.origin + url
    }

    private static func onlyMailAccount(_ accounts: JSONValue?) -> String? {
        guard case .object(let all)? = accounts else { return nil }
        let mail = all.filter { $0.1["accountCapabilities"]?[Self.mail] != nil }
        return mail.count == 1 ? mail[0].0 : nil
    }

    static func bad(_ detail: String) -> GenericError { GenericError(.protocolViolation, "bad JMAP session: \(detail)") }
}
