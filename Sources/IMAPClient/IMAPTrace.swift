import IMAPCodec
import MoCore

/// The `--debug` protocol trace: what we send (`C:`) and what the server sends (`S:`), one line each.
///
/// Invariant: no credential reaches the sink. Commands are traced from their structure, not their bytes,
/// so LOGIN's password and every SASL payload (initial response and continuation answers) are written as
/// `<redacted>`; message bodies (APPEND, FETCH literals) appear only as their size. Lines are escaped
/// (`escapedForMessage`), so server bytes cannot drive the terminal the trace goes to.
public struct IMAPTrace: Sendable {
    public let sink: @Sendable (String) -> Void
    /// Longest server line shown; the rest is summarised, so a body literal never floods the trace.
    public var maxLine = 300

    public init(sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    func sent(_ tag: String, _ command: Command) {
        sink("C: \(tag) \(escapedForMessage(Self.redacted(command)))")  // may quote mailbox names from the server
    }

    func sentRaw(_ text: String) { sink("C: \(escapedForMessage(text))") }

    func received(_ bytes: ArraySlice<UInt8>) {
        var start = bytes.startIndex
        while start < bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.endIndex
            var line = bytes[start..<end]
            while let last = line.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.count > maxLine {
                sink("S: \(escapedForMessage(bytes: line.prefix(maxLine)))… (\(line.count) bytes)")
            } else {
                sink("S: \(escapedForMessage(bytes: line))")  // server bytes: escaped for the terminal
            }
            start = end
        }
    }

    /// A command as the trace shows it.
    static func redacted(_ command: Command) -> String {
        switch command {
        case .login(let user, _): return "LOGIN \(user) <redacted>"
        case .authenticate(let mechanism, let initial): return "AUTHENTICATE \(mechanism)\(initial == nil ? "" : " <redacted>")"
        case .append(let mailbox, let flags, _, let size):
            return "APPEND \(mailbox) (\(flags.map(\.description).joined(separator: " "))) {\(size)} <message>"
        default:
            var encoder = CommandEncoder(tags: TagGenerator(prefix: "T"))
            guard let encoded = try? encoder.encode(command) else { return "\(command)" }
            var text = String(decoding: encoded.bytes, as: UTF8.self)
            // Drop the dummy tag and the final CRLF.
            if let space = text.firstIndex(of: " ") { text = String(text[text.index(after: space)...]) }
            while text.hasSuffix("\r\n") { text.removeLast() }  // "\r\n" is one Character
            return text.replacingOccurrences(of: "\r\n", with: " ")
        }
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
