/// Selects IMAP folders by LIST-style patterns.
///
/// `*` matches any run of characters including the hierarchy delimiter, `%` any run without it.
/// A pattern starting with `!` excludes. A mailbox is included when it matches some include pattern and
/// no exclude pattern; with no include patterns at all, every mailbox counts as matching one
/// (so `["!Spam"]` means "everything but Spam"). `INBOX` is matched case-insensitively (RFC 3501 §5.1).
public struct FolderFilter: Sendable, Equatable {
    public let patterns: [String]
    private let includes: [[Character]]
    private let excludes: [[Character]]

    public init(patterns: [String]) {
        self.patterns = patterns
        var includes: [[Character]] = [], excludes: [[Character]] = []
        for p in patterns {
            if p.hasPrefix("!") { excludes.append(Array(p.dropFirst())) } else { includes.append(Array(p)) }
        }
        self.includes = includes
        self.excludes = excludes
    }

    /// Whether `mailbox` is selected. `delimiter` is the server's hierarchy delimiter (nil for a flat
    /// server, where `%` behaves like `*`).
    public func includes(_ mailbox: String, delimiter: Character?) -> Bool {
        let name = FolderFilter.canonicalInbox(Array(mailbox), delimiter: delimiter)
        func matches(_ pattern: [Character]) -> Bool {
            FolderFilter.match(FolderFilter.canonicalInbox(pattern, delimiter: delimiter), name, delimiter: delimiter)
        }
        guard includes.isEmpty || includes.contains(where: matches) else { return false }
        return !excludes.contains(where: matches)
    }

    /// Spells a leading `inbox` component (any case) as `INBOX`.
    static func canonicalInbox(_ s: [Character], delimiter: Character?) -> [Character] {
        guard s.count >= 5, String(s[0..<5]).uppercased() == "INBOX",
            s.count == 5 || s[5] == delimiter
        else { return s }
        return Array("INBOX") + s[5...]
    }

    /// Wildcard match by dynamic programming: `reach[j]` says whether the pattern prefix so far can
    /// consume exactly `name[..<j]`. Linear in pattern × name, no backtracking blow-up.
    static func match(_ pattern: [Character], _ name: [Character], delimiter: Character?) -> Bool {
        var reach = [Bool](repeating: false, count: name.count + 1)
        reach[0] = true
        for p in pattern {
            var next = [Bool](repeating: false, count: name.count + 1)
            switch p {
            case "*", "%":
                // Extend any reachable point across characters the wildcard may cover.
                var open = false
                for j in 0...name.count {
                    if reach[j] { open = true }
                    next[j] = open
                    if j < name.count, p == "%", name[j] == delimiter { open = false }
                }
            default:
                for j in 0..<name.count where reach[j] && name[j] == p { next[j + 1] = true }
            }
            reach = next
        }
        return reach[name.count]
    }
}
