/// The mutable table tree the parser fills in; frozen into `TOMLTable` values at the end.
///
/// TOML's "define once" rules depend on how a table came to exist, so each table remembers its origin.
/// Inline tables and static arrays are stored as finished `TOMLNode` values: nothing may extend them.
final class MutableTable {
    enum Origin {
        /// The document root.
        case root
        /// Defined by a `[header]`, or an element of a `[[header]]` array.
        case header
        /// Named as a parent by a header (`[a.b]` makes `a`); a later `[a]` may still define it.
        case implicit
        /// Made by a dotted key (`a.b = 1` makes `a`); only more dotted keys in the same place extend it.
        case dotted
    }

    enum Item {
        case value(TOMLNode)
        case table(MutableTable)
        /// An array of tables made by `[[header]]`; unlike a static array it may grow.
        case tableArray([MutableTable])
    }

    struct Slot {
        var line: Int
        var column: Int
        var item: Item
    }

    var origin: Origin
    /// Full key path from the root, for messages.
    let path: [String]
    var line: Int
    var column: Int
    private(set) var order: [String] = []
    private(set) var slots: [String: Slot] = [:]

    init(origin: Origin, path: [String], line: Int, column: Int) {
        self.origin = origin
        self.path = path
        self.line = line
        self.column = column
    }

    subscript(key: String) -> Slot? {
        get { slots[key] }
        set {
            if slots[key] == nil { order.append(key) }
            slots[key] = newValue
        }
    }

    func freeze() -> TOMLTable {
        var table = TOMLTable(line: line)
        for key in order {
            let slot = slots[key]!
            let node: TOMLNode
            switch slot.item {
            case .value(let n):
                node = n
            case .table(let t):
                node = TOMLNode(.table(t.freeze()), line: t.line, column: t.column)
            case .tableArray(let tables):
                let elements = tables.map { TOMLNode(.table($0.freeze()), line: $0.line, column: $0.column) }
                node = TOMLNode(.array(elements), line: slot.line, column: slot.column)
            }
            table.append(key, node, line: slot.line, column: slot.column)
        }
        return table
    }
}
