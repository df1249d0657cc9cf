import MailMessage

/// A thread's name: 16 lower-case hex digits, the first 64 bits of the SHA-1 of the thread's
/// *anchor*, the smallest Message-ID (UTF-8 byte order) among its real, i.e. non-ghost, messages.
///
/// Why this anchor:
/// - it depends only on which messages are in the thread, not on arrival order, a counter or
///   the machine, so a rebuild and another machine give the same id;
/// - ghosts are left out because an incremental index keeps ghosts a fresh index would not
///   have (after removals), and they must not make the two disagree.
///
/// The id changes when the anchor does: when a message with a smaller id joins (a reply, or a
/// merge with another thread), or when the anchor message is removed. ``ThreadIndex`` reports
/// every such change as a rename, "thread X became Y" (``ThreadIndexChange/renamed``).
///
/// Two different anchors collide with probability about n²/2⁶⁵ for n threads (3·10⁻⁸ for a
/// million threads).
public struct ThreadID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 16 hex digits.
    public let rawValue: String

    /// Wraps an id read back from storage or typed by a user; no validation.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The id of a thread whose smallest real Message-ID is `anchor`.
    public init(anchor: String) {
        rawValue = String(SHA1.hexDigest(Array(anchor.utf8)).prefix(16))
    }

    public var description: String { rawValue }

    public static func < (a: ThreadID, b: ThreadID) -> Bool { a.rawValue < b.rawValue }
}

/// Byte-wise order on Message-IDs: locale- and normalisation-free, identical everywhere.
@inline(__always)
func precedes(_ a: String, _ b: String) -> Bool {
    a.utf8.lexicographicallyPrecedes(b.utf8)
}
