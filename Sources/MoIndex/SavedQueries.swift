/// notmuch's saved infix queries: `query:NAME` replaced by the text of `query.NAME` (itself expanded,
/// to a depth of 8), in parentheses; an unknown name matches nothing, as in notmuch. Only the field
/// itself is replaced, never `myquery:` inside a word. A query that refers to itself stops growing at
/// 64 KiB: what is left unexpanded then fails as an unknown field, by name.
public enum SavedQueries {
    static let maxLength = 65536

    public static func expand(_ text: String, saved: (String) -> String?, depth: Int = 0) -> String {
        guard depth < 8, text.utf8.count < maxLength, text.contains("query:") else { return text }
        var out = "", rest = Substring(text)
        while let r = rest.range(of: "query:") {
            let before = rest[..<r.lowerBound]
            guard before.last.map({ $0 == " " || $0 == "(" || $0 == "-" }) ?? true else {
                out += rest[..<r.upperBound]
                rest = rest[r.upperBound...]
                continue
            }
            out += before
            let name = rest[r.upperBound...].prefix { !$0.isWhitespace && $0 != "(" && $0 != ")" && $0 != "\"" }
            guard out.utf8.count < maxLength else { return out + rest[r.lowerBound...] }
            out += saved("query." + name).map { "(\(expand($0, saved: saved, depth: depth + 1)))" } ?? "(NOT *)"
            rest = rest[r.upperBound...].dropFirst(name.count)
        }
        return out + rest
    }
}
