/// Turns a path from the config file into an absolute, lexically normalized one:
/// `~` and `~/…` → home, `$HOME` / `${HOME}` → home, relative → relative to the config file's directory.
struct PathExpander {
    var home: String
    /// The directory of the config file (absolute).
    var baseDirectory: String

    /// The expanded path, or a problem description.
    func expand(_ raw: String) -> Result<String, PathProblem> {
        guard !raw.isEmpty else { return .failure(PathProblem(message: "the path is empty")) }
        var path = raw.replacingHome(with: home)
        if path == "~" {
            path = home
        } else if path.hasPrefix("~/") {
            path = PathExpander.join(home, String(path.dropFirst(2)))
        } else if path.hasPrefix("~") {
            return .failure(PathProblem(message: "'\(raw)': only '~' and '~/' are expanded; write the full path"))
        }
        if !path.hasPrefix("/") { path = PathExpander.join(baseDirectory, path) }
        return .success(PathExpander.normalize(path))
    }

    struct PathProblem: Error {
        var message: String
    }

    static func join(_ a: String, _ b: String) -> String {
        if b.hasPrefix("/") { return b }
        if a.hasSuffix("/") { return a + b }
        return a + "/" + b
    }

    /// Removes empty and `.` segments and resolves `..` lexically. `path` is absolute.
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch segment {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(segment)
            }
        }
        return "/" + parts.joined(separator: "/")
    }

    /// The directory part of an absolute path.
    static func directory(of path: String) -> String {
        let normalized = normalize(path)
        guard let slash = normalized.lastIndex(of: "/"), slash != normalized.startIndex else { return "/" }
        return String(normalized[..<slash])
    }
}

private extension String {
    /// Replaces `$HOME` (not `$HOMEDIR`) and `${HOME}`.
    func replacingHome(with home: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            if after.hasPrefix("{HOME}") {
                out += home
                rest = after.dropFirst(6)
            } else if after.hasPrefix("HOME"), !(after.dropFirst(4).first.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false) {
                out += home
                rest = after.dropFirst(4)
            } else {
                out += "$"
                rest = after
            }
        }
        return out + rest
    }
}
