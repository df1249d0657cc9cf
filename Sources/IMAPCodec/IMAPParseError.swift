import MoCore

/// A server response could not be parsed, or crossed one of `ResponseParser.Options`' limits.
/// Always `.protocolViolation`: the connection must be closed (the parser refuses further input).
public struct IMAPParseError: MoError, Equatable {
    /// Which limit was crossed, when the error is a limit violation; nil for a grammar error.
    public enum Limit: String, Sendable, Equatable {
        case literalSize, inlineLiteralSize, lineLength, nestingDepth, listLength, fetchAttributes, atomLength, number
    }
    public let message: String
    public let limit: Limit?
    /// Offset of the offending byte in the stream (bytes consumed before the failing unit + position inside it).
    public let offset: Int

    public init(_ message: String, limit: Limit? = nil, offset: Int = 0) {
        self.message = message
        self.limit = limit
        self.offset = offset
    }

    public var kind: ErrorKind { .protocolViolation }
    public var description: String { message }
}
