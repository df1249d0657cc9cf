import MoCore

/// Makes command tags: `A1`, `A2`, ... Tags are atoms without `+`, unique per connection.
public struct TagGenerator: Sendable {
    public let prefix: String
    private var counter: UInt64 = 0

    /// `prefix` must be non-empty ASCII letters or digits.
    public init(prefix: String = "A") {
        precondition(
            !prefix.isEmpty
                && prefix.utf8.allSatisfy {
                    ASCII.isDigit($0)
                        || (($0 | 0x20) >= UInt8(ascii: "a") && ($0 | 0x20) <= UInt8(ascii: "z"))
                })
        self.prefix = prefix
    }

    public mutating func next() -> String {
        counter += 1
        return prefix + String(counter)
    }
}
