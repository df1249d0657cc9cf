import MoCore

/// `application/x-www-form-urlencoded` fields (RFC 6749 Appendix B): the body of every token request, and
/// the query of an authorization URL and of the redirect that brings the code back. Names and values are
/// escaped by MoCore's one URL escaper (`PercentEscape.urlQueryValue`: a space as `%20`, which every form
/// decoder reads as a space); decoding also takes `+` for a space, as browsers send it.
public enum FormEncoding {
    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    public static func escape(_ s: String) -> String { PercentEscape.urlQueryValue(s) }

    /// The fields of a query or form body, in order; nil when a `%` is not followed by two hex digits or a
    /// value is not UTF-8 once decoded.
    public static func decode(_ s: Substring) -> [(String, String)]? {
        var out: [(String, String)] = []
        for pair in s.split(separator: "&", omittingEmptySubsequences: true) {
            let eq = pair.firstIndex(of: "=") ?? pair.endIndex
            let value = eq == pair.endIndex ? "" : pair[pair.index(after: eq)...]
            guard let name = unescape(pair[..<eq]), let value = unescape(value) else { return nil }
            out.append((name, value))
        }
        return out
    }

    static func unescape(_ s: Substring) -> String? {
        PercentEscape.unescape(String(s.map { $0 == "+" ? " " : $0 }))
    }
}
