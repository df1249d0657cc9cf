#if canImport(Glibc)
    import Glibc
#endif

/// notmuch's `new.ignore` under its mail root (`IndexRoot.allFiles`): a file or directory whose name is
/// one of the plain entries, anywhere, or whose path relative to the root matches one of the `/regex/`
/// entries (POSIX extended, unanchored, as notmuch's `regcomp`), is passed over by the walk. A bad entry
/// is notmuch's error line, and nothing is indexed with a list that did not read.
public final class IgnoreList: @unchecked Sendable {
    let names: Set<String>
    private var patterns: [regex_t] = []

    public struct Problem: Error, Equatable { public let message: String }

    public init(_ entries: [String]) throws(Problem) {
        var names = Set<String>()
        for s in entries {
            if s.isEmpty { throw Problem(message: "Error: Empty string in new.ignore list") }
            guard s.hasPrefix("/") else { names.insert(s); continue }
            guard s.count >= 3, s.hasSuffix("/") else { throw Problem(message: "Error: Malformed pattern '\(s)' in new.ignore") }
            let body = String(s.dropFirst().dropLast())
            var re = regex_t()
            let status = regcomp(&re, body, REG_EXTENDED | REG_NOSUB)
            guard status == 0 else {
                var buffer = [CChar](repeating: 0, count: 256)
                regerror(status, &re, &buffer, buffer.count)
                let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                for i in patterns.indices { regfree(&patterns[i]) }
                throw Problem(message: "Error: Invalid regex '\(body)' in new.ignore: \(text)")
            }
            patterns.append(re)
        }
        self.names = names
    }

    deinit { for i in patterns.indices { regfree(&patterns[i]) } }

    public var isEmpty: Bool { names.isEmpty && patterns.isEmpty }

    /// Whether `name`, in the directory `relativeDirectory` of the root ("" for the root), is ignored.
    func ignores(_ name: String, in relativeDirectory: String) -> Bool {
        if names.contains(name) { return true }
        guard !patterns.isEmpty else { return false }
        let path = relativeDirectory.isEmpty ? name : relativeDirectory + "/" + name
        for i in patterns.indices where regexec(&patterns[i], path, 0, nil, 0) == 0 { return true }
        return false
    }
}
