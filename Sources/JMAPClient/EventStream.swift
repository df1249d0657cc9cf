/// One event of a `text/event-stream` (WHATWG HTML, "Server-sent events" §9.2): its type (`event:`, default
/// `message`), its data (the `data:` lines joined by LF), and the last event id seen.
public struct ServerSentEvent: Sendable, Equatable {
    public var type: String
    public var data: String
    public var lastEventID: String

    public init(type: String, data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}

/// An incremental parser of `text/event-stream`, with no I/O: bytes in as they arrive (any split), events
/// out as each blank line ends one. JMAP push (RFC 8620 §7.3) arrives this way.
///
///     stream        = [ bom ] *event
///     event         = *( comment / field ) end-of-line
///     comment       = colon *any-char end-of-line
///     field         = 1*name-char [ colon [ space ] *any-char ] end-of-line
///     end-of-line   = ( cr lf / cr / lf )
///
/// Interpreted as the standard says: `event` sets the type, `data` appends its value and a LF, `id` sets
/// the last event id (unless it holds NUL), `retry` (digits only) is kept in `retry` (mo's listener keeps
/// its own backoff); other fields
/// and comments are ignored. A blank line dispatches: no data, no event; the data's last LF removed. A
/// stream that ends mid-event drops that event. Limits as options: a line of more than `maxLine` bytes
/// (the data of one event counts as one line) is an error, so a hostile server cannot grow memory.
public struct EventStreamParser: Sendable {
    public struct Limits: Sendable, Equatable {
        public var maxLine: Int
        public init(maxLine: Int = 1 << 20) { self.maxLine = maxLine }
    }

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public let limits: Limits
    /// Milliseconds the server asked to wait before reconnecting (`retry:`), if it did.
    public private(set) var retry: Int?
    private var line: [UInt8] = []
    private var afterCR = false
    private var atStart = true
    private var type = ""
    private var data: [UInt8] = []
    private var hasData = false
    private var lastEventID = ""

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Feeds bytes; returns the events they completed, in order.
    public mutating func append<C: Collection>(_ bytes: C) throws(Failure) -> [ServerSentEvent] where C.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for b in bytes {
            if afterCR {
                afterCR = false
                if b == 0x0A { continue }  // CR LF is one end of line
            }
            switch b {
            case 0x0D, 0x0A:
                afterCR = b == 0x0D
                if let event = try endOfLine() { events.append(event) }
            default:
                guard line.count < limits.maxLine else {
                    throw Failure(description: "an event-stream line longer than \(limits.maxLine) bytes")
                }
                line.append(b)
            }
        }
        return events
    }

    /// One line ended: a field taken, or (blank) the event dispatched.
    private mutating func endOfLine() throws(Failure) -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if atStart {
            atStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
        }
        if line.isEmpty { return dispatch() }
        if line[0] == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[($0 + 1)...] } ?? []
        if value.first == 0x20 { value = value.dropFirst() }
        switch name {
        case "event": type = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count < limits.maxLine else {
                throw Failure(description: "an event's data longer than \(limits.maxLine) bytes")
            }
            data += value
            data.append(0x0A)
            hasData = true
        case "id" where !value.contains(0): lastEventID = String(decoding: value, as: UTF8.self)
        case "retry" where !value.isEmpty && value.allSatisfy({ (0x30...0x39).contains($0) }):
            retry = Int(String(decoding: value, as: UTF8.self))
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            type = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(
            type: type.isEmpty ? "message" : type, data: String(decoding: data.dropLast(), as: UTF8.self), lastEventID: lastEventID)
    }
}
