/// The flags of a Maildir message: a set of ASCII letters, always rendered in ASCII order without
/// duplicates (uppercase first, then lowercase keyword letters, as the Maildir spec requires).
///
/// Bits 0–25 hold `A`–`Z`, bits 26–51 hold `a`–`z`, so the raw value's bit order is ASCII order.
/// Unknown uppercase letters and all lowercase keyword letters are kept as they are.
public struct MaildirFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue & Self.allMask }

    private static let allMask: UInt64 = (1 << 52) - 1

    /// `D`: the user considers this a draft.
    public static let draft = MaildirFlags(letter: UInt8(ascii: "D"))!
    /// `F`: flagged (IMAP `\Flagged`).
    public static let flagged = MaildirFlags(letter: UInt8(ascii: "F"))!
    /// `P`: passed (resent/forwarded/bounced).
    public static let passed = MaildirFlags(letter: UInt8(ascii: "P"))!
    /// `R`: replied (IMAP `\Answered`).
    public static let replied = MaildirFlags(letter: UInt8(ascii: "R"))!
    /// `S`: seen (IMAP `\Seen`).
    public static let seen = MaildirFlags(letter: UInt8(ascii: "S"))!
    /// `T`: trashed (IMAP `\Deleted`).
    public static let trashed = MaildirFlags(letter: UInt8(ascii: "T"))!

    /// The single flag for an ASCII letter; nil for anything else.
    public init?(letter: UInt8) {
        switch letter {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): rawValue = 1 << UInt64(letter - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): rawValue = 1 << UInt64(letter - UInt8(ascii: "a") + 26)
        default: return nil
        }
    }

    /// Flags from letters in any order; nil if a character is not an ASCII letter or repeats.
    public init?(letters: String) {
        var flags = MaildirFlags()
        for b in letters.utf8 {
            guard let f = MaildirFlags(letter: b), !flags.contains(f) else { return nil }
            flags.insert(f)
        }
        self = flags
    }

    /// The letters in ASCII order, e.g. `"FRSa"`.
    public var letters: String {
        var out: [UInt8] = []
        for bit in 0..<52 where rawValue & (1 << UInt64(bit)) != 0 {
            out.append(bit < 26 ? UInt8(ascii: "A") + UInt8(bit) : UInt8(ascii: "a") + UInt8(bit - 26))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The lowercase keyword letters (`a`–`z`), in order.
    public var keywords: String { MaildirFlags(rawValue: rawValue & ~((1 << 26) - 1)).letters }

    public var description: String { letters }

    public var isSeen: Bool { contains(.seen) }
    public var isReplied: Bool { contains(.replied) }
    public var isFlagged: Bool { contains(.flagged) }
    public var isTrashed: Bool { contains(.trashed) }
    public var isDraft: Bool { contains(.draft) }
    public var isPassed: Bool { contains(.passed) }
}
