import MoCore

/// One method call of a JMAP request (RFC 8620 §3.2): `[name, arguments, call id]`.
public struct JMAPCall: Sendable, Equatable {
    public var name: String
    public var arguments: JSONValue
    public var id: String

    public init(_ name: String, _ arguments: JSONValue, id: String) {
        self.name = name
        self.arguments = arguments
        self.id = id
    }

    /// A back-reference to a result of an earlier call in the same request (RFC 8620 §3.7), as the value of
    /// an argument named `#name`.
    public static func resultOf(_ callID: String, _ name: String, path: String) -> JSONValue {
        .object([("resultOf", .string(callID)), ("name", .string(name)), ("path", .string(path))])
    }
}

/// A method's error answer (`["error", {"type": …}, id]`, RFC 8620 §3.6.2), e.g. `cannotCalculateChanges`,
/// `stateMismatch`, `unknownMethod`.
public struct JMAPMethodError: Error, Sendable, Equatable, CustomStringConvertible {
    public var type: String
    public var detail: String?
    public var callName: String

    public var description: String {
        "JMAP \(callName): \(escapedForMessage(type))" + (detail.map { ": \(escapedForMessage($0))" } ?? "")
    }
}

/// A request's bytes and its answer's parse, pure: `{"using": [...], "methodCalls": [...]}` out, and
/// `{"methodResponses": [[name, arguments, id], ...], "sessionState": "..."}` back, each response checked
/// against the call it answers (RFC 8620 §3.3, §3.4).
public enum JMAPWire {
    public static func request(_ calls: [JMAPCall], using: [String]) -> [UInt8] {
        let value = JSONValue.object([
            ("using", .strings(using)),
            ("methodCalls", .array(calls.map { .array([.string($0.name), $0.arguments, .string($0.id)]) }))
        ])
        return Array(value.text.utf8)
    }

    /// The answers to `calls`, one list per call id in the order of the calls (a call may answer with more
    /// than one response, RFC 8620 §3.4: `Email/copy` with `onSuccessDestroyOriginal`). A method error is
    /// returned as a response named "error"; `arguments(for:)` turns it into a throw.
    public static func responses(_ bytes: [UInt8], to calls: [JMAPCall]) throws(GenericError) -> JMAPAnswer {
        let json: JSONValue
        do { json = try JSONReader.parse(bytes) } catch { throw bad("\(error)") }
        guard case .array(let items)? = json["methodResponses"] else { throw bad("no methodResponses") }
        var byID: [String: [(String, JSONValue)]] = [:]
        for item in items {
            guard case .array(let triple) = item, triple.count == 3, let name = triple[0].stringValue,
                let id = triple[2].stringValue, case .object = triple[1]
            else { throw bad("a method response that is not [name, {arguments}, id]") }
            guard calls.contains(where: { $0.id == id }) else { throw bad("an answer to no call (\(escapedForMessage(id)))") }
            byID[id, default: []].append((name, triple[1]))
        }
        for call in calls where byID[call.id] == nil { throw bad("no answer to \(call.name)") }
        return JMAPAnswer(byID: byID, calls: calls, sessionState: json["sessionState"]?.stringValue)
    }

    /// A request-level error (RFC 8620 §3.6.1): the problem's `type` and `detail`, from a 4xx/5xx body
    /// (RFC 7807 JSON); nil when the body is not one.
    public static func problem(_ bytes: [UInt8]) -> String? {
        guard let json = try? JSONReader.parse(bytes), let type = json["type"]?.stringValue else { return nil }
        let short = type.hasPrefix("urn:ietf:params:jmap:error:") ? String(type.dropFirst(27)) : type
        return escapedForMessage(short) + (json["detail"]?.stringValue.map { ": " + escapedForMessage($0) } ?? "")
    }

    static func bad(_ detail: String) -> GenericError { GenericError(.protocolViolation, "bad JMAP response: \(detail)") }
}

/// The answers to one request, by call.
public struct JMAPAnswer: Sendable {
    let byID: [String: [(String, JSONValue)]]
    let calls: [JMAPCall]
    /// The session's state as of this answer: a change means the session must be fetched again.
    public let sessionState: String?

    /// The arguments of the response named as the call `id` was (or `name`), or the method's error thrown.
    public func arguments(for id: String, name: String? = nil) throws(JMAPMethodError) -> JSONValue {
        let call = calls.first { $0.id == id }
        let callName = call?.name ?? id
        let wanted = name ?? callName
        let answers = byID[id] ?? []
        if let hit = answers.first(where: { $0.0 == wanted }) { return hit.1 }
        if let error = answers.first(where: { $0.0 == "error" }) {
            throw JMAPMethodError(
                type: error.1["type"]?.stringValue ?? "serverFail", detail: error.1["description"]?.stringValue, callName: callName)
        }
        throw JMAPMethodError(type: "no answer named \(wanted)", detail: nil, callName: callName)
    }
}
