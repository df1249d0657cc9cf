/// A CONDSTORE mod-sequence (RFC 7162): a positive 63-bit value (`mod-sequence-value`, 0 allowed where the
/// grammar says `mod-sequence-valzer`).
public struct ModSequence: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let value: UInt64
    /// The largest value RFC 7162 allows (2^63 - 1).
    public static let max = ModSequence(unchecked: UInt64(Int64.max))

    /// Nil when `value` does not fit in 63 bits.
    public init?(_ value: UInt64) {
        guard value <= UInt64(Int64.max) else { return nil }
        self.value = value
    }
    init(unchecked value: UInt64) { self.value = value }

    public static func < (a: ModSequence, b: ModSequence) -> Bool { a.value < b.value }
    public var description: String { String(value) }
}
