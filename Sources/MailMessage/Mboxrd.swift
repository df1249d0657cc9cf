#if canImport(Glibc)
    import Glibc
#endif

/// Writes messages as mboxrd, the mbox variant that can be read back byte for byte:
///
///     From alice@example.com Tue Nov 24 23:51:22 2026      ← separator: envelope sender, asctime (UTC)
///     From: Alice <alice@example.com>                       ← the message, unchanged except that
///     ...                                                      every line matching ^>*From  gets one
///     >From the start of a body line                           more '>' (a reader removes one)
///                                                           ← an empty line ends each message
///
/// Incremental, no I/O: `encode` takes a message in chunks of any size (a line may be split anywhere) and
/// appends the quoted bytes; `finish` ends the message (a newline if its last line had none, then the
/// empty line). Memory is the few bytes of a line start that could still become `>*From `.
public struct MboxrdEncoder {
    private var atLineStart = true
    /// The start of the current line while it is still a prefix of `>*From `.
    private var held: [UInt8] = []
    private var lastByte: UInt8 = UInt8(ascii: "\n")

    public init() {}

    /// The separator line that starts a message.
    public static func separator(sender: String, date: Int64) -> [UInt8] {
        let cleaned =
            sender.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F } && !sender.isEmpty
            ? sender : "MAILER-DAEMON"
        return Array("From \(cleaned) \(asctime(date))\n".utf8)
    }

    /// `Tue Nov  4 09:05:01 2026`, in UTC (the asctime(3) layout, without its C library's locale).
    static func asctime(_ seconds: Int64) -> String {
        var t = time_t(seconds)
        var tm = Glibc.tm()
        gmtime_r(&t, &tm)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let day = tm.tm_mday < 10 ? " \(tm.tm_mday)" : "\(tm.tm_mday)"
        return
            "\(days[Int(tm.tm_wday)]) \(months[Int(tm.tm_mon)]) \(day) \(two(tm.tm_hour)):\(two(tm.tm_min)):\(two(tm.tm_sec)) \(tm.tm_year + 1900)"
    }

    private static let from = Array("From ".utf8)
    private static let gt = UInt8(ascii: ">"), newline = UInt8(ascii: "\n")

    public mutating func encode(_ chunk: some Collection<UInt8>, into out: inout [UInt8]) {
        for byte in chunk {
            lastByte = byte
            if atLineStart {
                held.append(byte)
                switch classifyHeld() {
                case .undecided: continue
                case .quote: out.append(Self.gt); out += held
                case .plain: out += held
                }
                atLineStart = byte == Self.newline
                held.removeAll(keepingCapacity: true)
                continue
            }
            out.append(byte)
            if byte == Self.newline { atLineStart = true }
        }
    }

    /// Ends the message: what is held, a newline if the message did not end with one, the empty line.
    public mutating func finish(into out: inout [UInt8]) {
        out += held
        if lastByte != Self.newline { out.append(Self.newline) }
        out.append(Self.newline)
        self = MboxrdEncoder()
    }

    private enum Verdict { case undecided, quote, plain }

    /// Whether the held line start is `>*From ` (quote it), cannot become it (plain), or may still.
    private func classifyHeld() -> Verdict {
        var i = 0
        while i < held.count && held[i] == Self.gt { i += 1 }
        let rest = held[i...]
        if rest.count >= Self.from.count { return rest.prefix(Self.from.count).elementsEqual(Self.from) ? .quote : .plain }
        return Self.from.starts(with: rest) && held.last != Self.newline ? .undecided : .plain
    }
}
