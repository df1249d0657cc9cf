import MoCore

/// An incremental parser of server replies: append bytes as they arrive, then take complete replies.
///
/// Pure: no I/O. Bytes that follow the last complete reply stay buffered (`hasBufferedInput`), which the
/// session uses to refuse data pipelined ahead of a STARTTLS handshake (CVE-2011-0411-style injection).
public struct SMTPReplyParser: Sendable {
    /// Hard limits against a hostile or broken server.
    public struct Limits: Sendable, Equatable {
        /// Longest reply line, CRLF included. RFC 5321 §4.5.3.1.5 says 512; servers exceed it in practice.
        public var maxLineLength: Int
        /// Most lines in one multi-line reply.
        public var maxLines: Int
        public init(maxLineLength: Int = 4096, maxLines: Int = 1000) {
            self.maxLineLength = maxLineLength
            self.maxLines = maxLines
        }
    }

    /// Why bytes from the server are not a reply.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    public let limits: Limits
    private var buffer: [UInt8] = []
    private var start = 0  // first unconsumed byte in buffer
    private var scanned = 0  // bytes after `start` known to hold no LF
    private var code: Int?
    private var lines: [String] = []

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Whether bytes were received that are not yet part of a returned reply.
    public var hasBufferedInput: Bool { buffer.count > start || !lines.isEmpty }

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 && start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete reply, or nil when more bytes are needed.
    public mutating func next() throws(ParseError) -> SMTPReply? {
        while true {
            guard let lineEnd = findLF() else {
                if buffer.count - start > limits.maxLineLength {
                    throw ParseError(message: "reply line longer than \(limits.maxLineLength) bytes")
                }
                return nil
            }
            var end = lineEnd
            if end > start && buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            guard lineEnd + 1 - start <= limits.maxLineLength else {
                throw ParseError(message: "reply line longer than \(limits.maxLineLength) bytes")
            }
            let line = buffer[start..<end]
            start = lineEnd + 1
            scanned = 0
            if start > 65536 { buffer.removeFirst(start); start = 0 }
            if let reply = try take(line) { return reply }
        }
    }

    private mutating func findLF() -> Int? {
        var i = start + scanned
        while i < buffer.count {
            if buffer[i] == UInt8(ascii: "\n") { return i }
            i += 1
        }
        scanned = buffer.count - start
        return nil
    }

    // reply-line = *( Reply-code "-" [ textstring ] CRLF ) Reply-code [ SP textstring ] CRLF
    private mutating func take(_ line: ArraySlice<UInt8>) throws(ParseError) -> SMTPReply? {
        let bytes = Array(line)
        func shown() -> String { String(decoding: bytes.prefix(80), as: UTF8.self) }
        guard bytes.count >= 3,
            (UInt8(ascii: "2")...UInt8(ascii: "5")).contains(bytes[0]),
            ASCII.isDigit(bytes[1]),
            ASCII.isDigit(bytes[2])
        else {
            throw ParseError(message: "malformed reply line \"\(shown())\"")
        }
        let lineCode = Int(bytes[0] - 48) * 100 + Int(bytes[1] - 48) * 10 + Int(bytes[2] - 48)
        let separator: UInt8? = bytes.count > 3 ? bytes[3] : nil
        guard separator == nil || separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else {
            throw ParseError(message: "malformed reply line \"\(shown())\"")
        }
        if let code, code != lineCode {
            throw ParseError(message: "reply lines with different codes (\(code), then \(lineCode))")
        }
        code = lineCode
        lines.append(String(decoding: bytes.dropFirst(4), as: UTF8.self))
        if separator == UInt8(ascii: "-") {
            guard lines.count < limits.maxLines else {
                throw ParseError(message: "reply longer than \(limits.maxLines) lines")
            }
            return nil
        }
        let reply = SMTPReply(code: lineCode, lines: lines)
        code = nil
        lines = []
        return reply
    }
}
