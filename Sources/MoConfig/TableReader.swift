/// Reads one TOML table against a schema, producing `ConfigError`s that name file, line and full key.
///
/// Unknown keys are rejected up front (in file order), so a typo is reported before any consequence
/// of the key it failed to set.
struct TableReader {
    let table: TOMLTable
    /// Key path of this table from the root.
    let path: [String]
    let file: String

    init(_ table: TOMLTable, path: [String], file: String, known: [String]) throws(ConfigError) {
        self.table = table
        self.path = path
        self.file = file
        for entry in table.entries where !known.contains(entry.key) {
            let hint = closestMatch(to: entry.key, in: known).map { " (did you mean '\($0)'?)" } ?? ""
            throw error(at: entry.key, "unknown key" + hint)
        }
    }

    /// The full dotted name of `key` in this table (or of the table itself).
    func name(_ key: String? = nil) -> String {
        TOML.dottedKey(path + (key.map { [$0] } ?? []))
    }

    /// An error about `key`, on the line where the key is defined.
    func error(at key: String, _ problem: String) -> ConfigError {
        ConfigError(file: file, line: table.entry(key)?.line ?? table.line, key: name(key), problem: problem)
    }

    /// An error about the table as a whole, on its header line.
    func tableError(_ problem: String) -> ConfigError {
        ConfigError(file: file, line: table.line, key: name(), problem: problem)
    }

    func missing(_ key: String) -> ConfigError { tableError("missing required key '\(key)'") }

    func has(_ key: String) -> Bool { table[key] != nil }

    // MARK: Typed accessors; nil when the key is absent.

    func string(_ key: String) throws(ConfigError) -> String? {
        guard let node = table[key] else { return nil }
        guard case .string(let s) = node.value else { throw typeError(key, "a string", node) }
        return s
    }

    /// A string that must not be empty.
    func nonEmptyString(_ key: String) throws(ConfigError) -> String? {
        guard let s = try string(key) else { return nil }
        if s.isEmpty { throw error(at: key, "must not be empty") }
        return s
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let node = table[key] else { return nil }
        guard case .bool(let b) = node.value else { throw typeError(key, "a boolean", node) }
        return b
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let node = table[key] else { return nil }
        guard case .integer(let n) = node.value else { throw typeError(key, "an integer", node) }
        guard n >= Int64(range.lowerBound), n <= Int64(range.upperBound) else {
            throw error(at: key, "\(n) is out of range \(range.lowerBound)..\(range.upperBound)")
        }
        return Int(n)
    }

    /// An array whose elements are all non-empty strings; element errors name `key[INDEX]`.
    func stringArray(_ key: String) throws(ConfigError) -> [String]? {
        guard let node = table[key] else { return nil }
        guard case .array(let elements) = node.value else { throw typeError(key, "an array of strings", node) }
        var result: [String] = []
        for (n, element) in elements.enumerated() {
            let elementKey = name(key) + "[\(n)]"
            guard case .string(let s) = element.value else {
                throw ConfigError(
                    file: file, line: element.line, key: elementKey,
                    problem: "expected a string, found \(element.value.typeDescription)")
            }
            if s.isEmpty {
                throw ConfigError(file: file, line: element.line, key: elementKey, problem: "must not be empty")
            }
            result.append(s)
        }
        return result
    }

    /// A string naming one case of `E`.
    func choice<E: RawRepresentable & CaseIterable>(_ key: String, _ type: E.Type = E.self) throws(ConfigError) -> E?
    where E.RawValue == String {
        guard let s = try string(key) else { return nil }
        guard let value = E(rawValue: s) else {
            let allowed = E.allCases.map(\.rawValue).joined(separator: ", ")
            throw error(at: key, "'\(s)' is not one of \(allowed)")
        }
        return value
    }

    /// A sub-table, read against its own key list.
    func table(_ key: String, known: [String]) throws(ConfigError) -> TableReader? {
        guard let node = table[key] else { return nil }
        guard case .table(let t) = node.value else { throw typeError(key, "a table", node) }
        return try TableReader(t, path: path + [key], file: file, known: known)
    }

    private func typeError(_ key: String, _ expected: String, _ node: TOMLNode) -> ConfigError {
        error(at: key, "expected \(expected), found \(node.value.typeDescription)")
    }
}
