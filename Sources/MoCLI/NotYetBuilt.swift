import MoCore

/// Raised by commands whose engine is not in this build yet, so a script sees a clear EX_UNAVAILABLE
/// instead of a silent success.
public struct NotYetBuilt: MoError {
    public let feature: String
    public init(_ feature: String) { self.feature = feature }
    public var kind: ErrorKind { .unavailable }
    public var description: String { "\(feature) is not available in this build yet" }
}
