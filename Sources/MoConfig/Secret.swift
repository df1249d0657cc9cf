/// A password or token. It prints as `<redacted>` everywhere (interpolation, `debugPrint`, `dump`), so it
/// cannot leak into logs or error messages by accident; `reveal()` is the one way to the text.
public struct Secret: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let value: String

    public init(_ value: String) {
        self.value = value
    }

    /// The secret text, for the one place that must send it.
    public func reveal() -> String { value }

    public var isEmpty: Bool { value.isEmpty }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
