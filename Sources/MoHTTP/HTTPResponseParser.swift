import MoCore

/// Incremental parser of one HTTP/1.1 response (RFC 9112): status line, header fields, then a body by
/// Content-Length, chunked, or up to the end of the stream. Pure: bytes in through `append`, `finish`
/// at the end of the stream. Limits: `maxHead` bytes of status line and fields, `maxBody` bytes of body
/// (checked as they arrive, before anything is buffered beyond them). Interim 1xx responses are skipped.
/// A body streamed to a file is taken out as it arrives (`takeBody`); `maxBody` bounds the whole of it.
public struct HTTPResponseParser {
    public static let maxHead = 16 * 1024
    public let maxBody: Int
    public private(set) var status = 0
    public private(set) var body: [UInt8] = []
    /// The `Location` field (redirects), as sent.
    public private(set) var location: String?
    /// Whether the server closes the connection after this response (`Connection: close`, or HTTP/1.0),
    /// or the body runs to the end of the stream: the connection cannot carry another request.
    public private(set) var closesConnection = false
    /// Bytes after the response (none from a server that waits for the next request).
    public var leftover: ArraySlice<UInt8> { buffer[start...] }
    private var received = 0

    private enum State { case head, fixed(Int), chunkSize, chunkData(Int), chunkEnd, trailers, untilClose, done }
    private var state = State.head
    private var buffer: [UInt8] = []
    private var start = 0
    private var headBytes = 0

    public init(maxBody: Int) { self.maxBody = maxBody }

    public var isComplete: Bool { if case .done = state { true } else { false } }

    public mutating func append(_ bytes: some Collection<UInt8>) throws(GenericError) {
        buffer += bytes
        try advance()
        if start > 4096 { buffer.removeFirst(start); start = 0 }
    }

    /// The end of the stream: fine after a complete response, or a body that runs to the end.
    public mutating func finish() throws(GenericError) {
        switch state {
        case .done: return
        case .untilClose: state = .done
        // The connection ended mid-answer: the network's failure (a cut, a server restart), worth trying again.
        default: throw GenericError(.temporary, "the connection closed before the end of the HTTP response")
        }
    }

    /// The body bytes that arrived since the last call, handed over (a download streamed to a file).
    public mutating func takeBody() -> [UInt8] {
        defer { body = [] }
        return body
    }

    static func bad(_ detail: String) -> GenericError { GenericError(.protocolViolation, "bad HTTP response: \(detail)") }

    /// The next line without its CRLF (a bare LF is accepted), or nil until one has arrived.
    private mutating func line(limit: Int) throws(GenericError) -> ArraySlice<UInt8>? {
        guard let lf = buffer[start...].firstIndex(of: 0x0A) else {
            if buffer.count - start > limit { throw Self.bad("a line longer than \(limit) bytes") }
            return nil
        }
        guard lf - start <= limit else { throw Self.bad("a line longer than \(limit) bytes") }
        var line = buffer[start..<lf]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        start = lf + 1
        return line
    }

    private mutating func take(_ n: Int) -> ArraySlice<UInt8> {
        let got = buffer[start..<min(buffer.count, start + n)]
        start += got.count
        return got
    }

    private mutating func addBody(_ bytes: ArraySlice<UInt8>) throws(GenericError) {
        guard received + bytes.count <= maxBody else { throw Self.bad("the body is larger than \(maxBody) bytes") }
        received += bytes.count
        body += bytes
    }

    private var contentLength: Int?
    private var chunked = false

    private mutating func advance() throws(GenericError) {
        while true {
            switch state {
            case .head:
                let before = start
                guard let line = try line(limit: Self.maxHead) else { return }
                headBytes += start - before
                guard headBytes <= Self.maxHead else { throw Self.bad("the header is larger than \(Self.maxHead) bytes") }
                if status == 0 {
                    // HTTP/1.1 200 OK
                    let parts = line.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
                    guard parts.count >= 2, parts[0].starts(with: Array("HTTP/1.".utf8)), parts[1].count == 3,
                        let code = Int(String(decoding: parts[1], as: UTF8.self)), (100...599).contains(code)
                    else {
                        throw Self.bad("not an HTTP/1 status line")
                    }
                    status = code
                    if parts[0].elementsEqual("HTTP/1.0".utf8) { closesConnection = true }
                } else if line.isEmpty {
                    if status < 200 { status = 0; contentLength = nil; chunked = false; continue }  // 100 Continue
                    state = chunked ? .chunkSize : contentLength.map { .fixed($0) } ?? .untilClose
                    if case .untilClose = state { closesConnection = true }
                } else {
                    try field(line)
                }
            case .fixed(let remaining):
                if remaining == 0 { state = .done; continue }
                let got = take(remaining)
                try addBody(got)
                state = .fixed(remaining - got.count)
                if got.isEmpty { return }
            case .chunkSize:
                guard let line = try line(limit: 64) else { return }
                let digits = line.prefix { $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
                guard (1...8).contains(digits.count), let size = Int(String(decoding: digits, as: UTF8.self), radix: 16) else {
                    throw Self.bad("a bad chunk size")
                }
                guard received + size <= maxBody else { throw Self.bad("the body is larger than \(maxBody) bytes") }
                state = size == 0 ? .trailers : .chunkData(size)
            case .chunkData(let remaining):
                let got = take(remaining)
                try addBody(got)
                if got.count == remaining { state = .chunkEnd } else { state = .chunkData(remaining - got.count); return }
            case .chunkEnd:
                guard let line = try line(limit: 2) else { return }
                guard line.isEmpty else { throw Self.bad("a chunk longer than its size") }
                state = .chunkSize
            case .trailers:
                guard let line = try line(limit: Self.maxHead) else { return }
                if line.isEmpty { state = .done }
            case .untilClose:
                let got = take(buffer.count - start)
                try addBody(got)
                return
            case .done:
                return
            }
        }
    }

    private mutating func field(_ line: ArraySlice<UInt8>) throws(GenericError) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw Self.bad("a header line without a colon") }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        if name == "location" {
            let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
            let value = line[(colon + 1)...].drop(while: blank)
            location = String(decoding: value.prefix(value.count - value.reversed().prefix(while: blank).count), as: UTF8.self)
            return
        }
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self).filter { $0 != " " && $0 != "\t" }.lowercased()
        switch name {
        case "content-length":
            guard let n = Int(value), n >= 0, contentLength == nil || contentLength == n else { throw Self.bad("a bad Content-Length") }
            guard n <= maxBody else { throw Self.bad("the body is larger than \(maxBody) bytes") }
            contentLength = n
        case "connection":
            if value.split(separator: ",").contains("close") { closesConnection = true }
        case "transfer-encoding":
            guard value == "chunked" else { throw Self.bad("transfer coding \(escapedForMessage(value)) is not supported") }
            chunked = true
        default:
            break
        }
    }
}
