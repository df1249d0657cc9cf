/// Headers a notmuch configuration asks to index (`index.header.NAME=Header`, notmuch 0.37): each
/// header's text as words under the prefix "XU" + NAME + ":" (the colon ends the name, so `List` and
/// `Listing` never share terms), searched as `NAME:words` (and `(NAME …)`).
///
/// The list the index was written with is in its metadata (`mo-index-user-headers`, NAME TAB Header
/// lines): queries read the fields from there, and an update with another list rebuilds the index from
/// the mail (tags live in file names and the local tag store, so none is lost), as notmuch's `reindex`
/// would after such a change.
public struct UserHeader: Sendable, Equatable, Hashable {
    public let name: String
    public let header: String

    public init(name: String, header: String) {
        self.name = name
        self.header = header
    }

    public var prefix: String { "XU" + name + ":" }

    /// A header name as RFC 5322 allows it (printable ASCII but the colon), so the stored list (NAME TAB
    /// Header lines) reads back as written.
    public static func isHeaderName(_ header: String) -> Bool {
        !header.isEmpty && header.utf8.allSatisfy { $0 >= 33 && $0 <= 126 && $0 != UInt8(ascii: ":") }
    }
    public var field: IndexField { IndexField(name: name, prefixes: [prefix], kind: .text, summary: header) }

    /// notmuch's rule for NAME, as its error line; nil when NAME is allowed. A lower-case first letter is
    /// kept for notmuch's own fields, and NAME must be a word (letters, digits, `_`).
    public static func problem(withName name: String) -> String? {
        if name.isEmpty { return "Empty prefix name: index.header." }
        if name.unicodeScalars.contains(where: { !($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_") }) {
            return "Non-word character in prefix name: \(name)"
        }
        if let first = name.unicodeScalars.first, first.properties.isLowercase {
            return "Prefix names starting with lower case letters are reserved: \(name)"
        }
        return nil
    }

    public static func encode(_ headers: [UserHeader]) -> String {
        headers.map { $0.name + "\t" + $0.header + "\n" }.joined()
    }

    public static func decode(_ text: String) -> [UserHeader] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "\t", maxSplits: 1)
            return parts.count == 2 ? UserHeader(name: String(parts[0]), header: String(parts[1])) : nil
        }
    }
}
