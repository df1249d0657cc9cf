import Foundation

/// The name a listing shows for a message's From ("Name <addr>" as indexed): the name, else the bare
/// address, as notmuch shows authors. One home for mo-index's summaries and the notmuch command line.
public enum AuthorName {
    /// "Alice Smith <a@x>" → "Alice Smith"; a bare address stays.
    public static func of(_ from: String) -> String {
        if let lt = from.lastIndex(of: "<"), lt > from.startIndex {
            let name = from[..<lt].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { return name.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        return from.trimmingCharacters(in: CharacterSet(charactersIn: "<> "))
    }
}
