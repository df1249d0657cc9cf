/// notmuch's configuration file (a GLib key file), as notmuch 0.37 reads and writes it: for a notmuch
/// user's setup, and notmuch's own tests, when notmuch's command line is given one (`--config=FILE`,
/// `$NOTMUCH_CONFIG`).
///
///     # comment
///     [database]
///     path=/home/me/mail
///     [user]
///     name=Me
///     other_email=me@work.example;me@home.example
///
/// Lists are `;`-separated (a `;` at the end is allowed). `\s`, `\t`, `\n`, `\r`, `\\` and `\;` are
/// escapes in values. `set` rewrites only the line of its key (or adds one, or a section), so comments
/// and order stay.
public struct NotmuchConfig: Sendable, Equatable {
    /// The file's lines, as read.
    public private(set) var lines: [String]

    public init(text: String) {
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
    }

    public var text: String { lines.map { $0 + "\n" }.joined() }

    /// The values of `section.key` as written, nil when the file does not have it.
    public func values(_ key: String) -> [String]? {
        guard let (section, name) = Self.split(key), let i = line(section, name) else { return nil }
        return Self.list(String(lines[i].drop { $0 != "=" }.dropFirst()))
    }

    /// The value of `section.key` as the file writes it (escapes and `;` kept), nil when absent.
    public func rawValue(_ key: String) -> String? {
        guard let (section, name) = Self.split(key), let i = line(section, name) else { return nil }
        return String(lines[i].drop { $0 != "=" }.dropFirst().drop { $0 == " " || $0 == "\t" })
    }

    /// Every `section.key` of the file, in file order.
    public var keys: [String] {
        var section = ""
        var out: [String] = []
        for l in lines {
            let t = Self.trimmed(l)
            if t.hasPrefix("[") && t.hasSuffix("]") { section = String(t.dropFirst().dropLast()); continue }
            if t.isEmpty || t.hasPrefix("#") { continue }
            if let eq = t.firstIndex(of: "=") { out.append(section + "." + Self.trimmed(String(t[..<eq]))) }
        }
        return out
    }

    /// Sets `section.key` to `values` (one: a string; several: a list); none removes the key.
    public mutating func set(_ key: String, _ values: [String]) {
        guard let (section, name) = Self.split(key) else { return }
        // One value is a string (its `;` kept: read as a list it splits there, as GLib's does).
        let rendered = values.count > 1 ? values.map { Self.escaped($0) + ";" }.joined() : Self.escaped(values.first ?? "", list: false)
        if let i = line(section, name) {
            if values.isEmpty { lines.remove(at: i) } else { lines[i] = "\(name)=\(rendered)" }
            return
        }
        guard !values.isEmpty else { return }
        if let header = lines.firstIndex(where: { Self.trimmed($0) == "[\(section)]" }) {
            var end = header + 1
            while end < lines.count, !Self.trimmed(lines[end]).hasPrefix("[") { end += 1 }
            while end > header + 1, Self.trimmed(lines[end - 1]).isEmpty { end -= 1 }
            lines.insert("\(name)=\(rendered)", at: end)
        } else {
            if let last = lines.last, !Self.trimmed(last).isEmpty { lines.append("") }
            lines += ["[\(section)]", "\(name)=\(rendered)"]
        }
    }

    // MARK: Parts

    static func split(_ key: String) -> (String, String)? {
        guard let dot = key.firstIndex(of: "."), dot != key.startIndex, key.index(after: dot) != key.endIndex else { return nil }
        return (String(key[..<dot]), String(key[key.index(after: dot)...]))
    }

    func line(_ section: String, _ name: String) -> Int? {
        var current = ""
        for (i, l) in lines.enumerated() {
            let t = Self.trimmed(l)
            if t.hasPrefix("[") && t.hasSuffix("]") { current = String(t.dropFirst().dropLast()); continue }
            guard current == section, !t.hasPrefix("#"), let eq = t.firstIndex(of: "=") else { continue }
            if Self.trimmed(String(t[..<eq])) == name { return i }
        }
        return nil
    }

    /// Spaces and tabs off both ends. Over the UTF-8 bytes: every notmuch command reads its keys through
    /// this, and the generic `reversed()` of Characters it replaced cost a third of `notmuch count`'s
    /// CPU (the runtime building its types' metadata at each start).
    static func trimmed(_ s: String) -> String {
        let u = s.utf8
        guard let first = u.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }), let last = u.lastIndex(where: { $0 != 0x20 && $0 != 0x09 })
        else { return "" }
        // Both ends fall between scalars: the bytes beside them are ASCII, or the string's ends.
        return String(s[first..<u.index(after: last)])
    }

    /// A value's items: split at unescaped `;`, escapes undone, a last empty item dropped.
    static func list(_ raw: String) -> [String] {
        var items: [String] = [], current = ""
        let chars = Array(raw.drop { $0 == " " || $0 == "\t" })
        if chars.isEmpty { return [] }
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "\\", i + 1 < chars.count {
                switch chars[i + 1] {
                case "s": current.append(" ")
                case "t": current.append("\t")
                case "n": current.append("\n")
                case "r": current.append("\r")
                default: current.append(chars[i + 1])
                }
                i += 2
                continue
            }
            if c == ";" {
                items.append(current)
                current = ""
            } else {
                current.append(c)
            }
            i += 1
        }
        if !current.isEmpty || chars.last != ";" { items.append(current) }
        return items
    }

    static func escaped(_ s: String, list: Bool = true) -> String {
        var out = ""
        for c in s {
            switch c {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case ";" where list: out += "\\;"
            default: out.append(c)
            }
        }
        return out
    }
}
