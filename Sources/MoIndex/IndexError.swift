import MoCore

/// A failure of the index itself (not of Xapian): wrong format, busy writer, unusable input.
public struct IndexError: MoError, Equatable {
    public let kind: ErrorKind
    public let message: String

    public init(_ kind: ErrorKind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
