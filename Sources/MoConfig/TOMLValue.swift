/// A parsed TOML value. Dates and times are not represented: the parser rejects them.
public enum TOMLValue: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case float(Double)
    case bool(Bool)
    case array([TOMLNode])
    case table(TOMLTable)

    /// The type name with an article, as used in messages ("expected an integer, found a string").
    public var typeDescription: String {
        switch self {
        case .string: return "a string"
        case .integer: return "an integer"
        case .float: return "a float"
        case .bool: return "a boolean"
        case .array: return "an array"
        case .table: return "a table"
        }
    }
}

/// A value and where it starts in the document (1-based line and column).
public struct TOMLNode: Sendable, Equatable {
    public var value: TOMLValue
    public var line: Int
    public var column: Int

    public init(_ value: TOMLValue, line: Int, column: Int = 1) {
        self.value = value
        self.line = line
        self.column = column
    }
}

/// A TOML table: keys in the order they were first defined, each with the line of its definition.
///
/// For a sub-table the "definition" is its `[header]` (or, for a table that only exists because a
/// deeper header or a dotted key named it, the first such mention).
public struct TOMLTable: Sendable, Equatable {
    /// One key of the table.
    public struct Entry: Sendable, Equatable {
        public var key: String
        /// Where the key was defined (for a header-defined table: the header).
        public var line: Int
        public var column: Int
        public var node: TOMLNode
    }

    /// The entries in definition order.
    public private(set) var entries: [Entry] = []
    private var positions: [String: Int] = [:]
    /// Line of the table's header, or where it was first mentioned; 1 for the root table.
    public var line: Int

    public init(line: Int = 1) {
        self.line = line
    }

    public var keys: [String] { entries.map(\.key) }
    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }

    /// The entry for `key`, if defined.
    public func entry(_ key: String) -> Entry? {
        positions[key].map { entries[$0] }
    }

    /// The value node for `key`, if defined.
    public subscript(key: String) -> TOMLNode? {
        entry(key)?.node
    }

    /// Appends `key`; the caller guarantees it is new (the parser reports duplicates itself).
    public mutating func append(_ key: String, _ node: TOMLNode, line: Int, column: Int = 1) {
        precondition(positions[key] == nil, "duplicate TOML key \(key)")
        positions[key] = entries.count
        entries.append(Entry(key: key, line: line, column: column, node: node))
    }
}

/// A TOML syntax or structure error, at a 1-based line and column.
public struct TOMLError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    /// One line, no position.
    public var message: String

    public init(line: Int, column: Int, _ message: String) {
        self.line = line
        self.column = column
        self.message = message
    }

    /// `LINE:COL: MESSAGE`
    public var description: String { "\(line):\(column): \(message)" }
}
