/// notmuch's structured printer ("sprinter"), byte for byte: the one writer behind every notmuch output
/// format, so `--format=json|sexp|text|text0` print what notmuch 0.37 prints and front ends that parse
/// it (notmuch-emacs reads sexp, others JSON) see no difference. One value at a time, as notmuch's
/// commands call it; the layout lives here, not in the commands.
///
///     json   [{"thread": "0000000000000006", "tags": ["inbox", "unread"]},
///            {"thread": …}]
///     sexp   ((:thread "0000000000000006" :tags ("inbox" "unread"))
///            (:thread …))
///     text   thread:0000000000000006        (prefix, value, separator "\n"; structure not shown)
///     text0  as text, separator NUL
///
/// A value after another in one aggregate is set off by ", " (JSON, after its comma) or " " (sexp),
/// or by a newline instead when `separator` was called since; the outermost aggregate's end adds a
/// newline. Strings are bytes: JSON escapes `"` `\` and `\b \f \n \t` by name and other bytes below 32
/// as `\u00XX`; sexp escapes `"` `\` and `\n`, other bytes below 32 as three octal digits. Not
/// `MoCore.JSONWriter`, whose documents are mo's own (docs/json.md): this is notmuch's layout.
public struct Sprinter {
    public enum Format: String, CaseIterable, Sendable { case json, sexp, text, text0 }

    public let format: Format
    private var buffer: [UInt8] = []
    private let sink: ([UInt8]) -> Void
    /// Per open aggregate: nothing printed in it yet.
    private var first: [Bool] = []
    private var closers: [UInt8] = []
    private var insertSeparator = false
    private var prefix: String?

    public init(_ format: Format, sink: @escaping ([UInt8]) -> Void) {
        self.format = format
        self.sink = sink
    }

    /// The text formats print values bare; commands print their own layout for them where notmuch does
    /// (search's summary lines).
    public var isText: Bool { format == .text || format == .text0 }

    public mutating func beginMap() { beginAggregate(UInt8(ascii: "{"), UInt8(ascii: "}")) }
    public mutating func beginList() { beginAggregate(UInt8(ascii: "["), UInt8(ascii: "]")) }

    public mutating func end() {
        guard !isText else { return }
        buffer.append(closers.removeLast())
        first.removeLast()
        if closers.isEmpty { buffer.append(UInt8(ascii: "\n")) }
        if buffer.count >= 1 << 16 { flush() }
    }

    public mutating func string(_ s: String) {
        switch format {
        case .text, .text0:
            if let prefix { buffer.append(contentsOf: prefix.utf8); buffer.append(UInt8(ascii: ":")) }
            buffer.append(contentsOf: s.utf8)
        case .json:
            quoted(s) { b in
                switch b {
                case 8: [92, UInt8(ascii: "b")]
                case 12: [92, UInt8(ascii: "f")]
                case 10: [92, UInt8(ascii: "n")]
                case 9: [92, UInt8(ascii: "t")]
                default: Array("\\u00".utf8) + [Self.hex[Int(b >> 4)], Self.hex[Int(b & 15)]]
                }
            }
        case .sexp:
            quoted(s) { b in b == 10 ? [92, UInt8(ascii: "n")] : [92, 48 + (b >> 6), 48 + (b >> 3 & 7), 48 + (b & 7)] }
        }
        if buffer.count >= 1 << 16 { flush() }
    }

    public mutating func integer(_ n: Int64) {
        if !isText { beginValue() }
        buffer.append(contentsOf: String(n).utf8)
    }

    public mutating func boolean(_ b: Bool) {
        switch format {
        case .text, .text0: buffer.append(contentsOf: (b ? "true" : "false").utf8)
        case .json: beginValue(); buffer.append(contentsOf: (b ? "true" : "false").utf8)
        case .sexp: beginValue(); buffer.append(contentsOf: (b ? "t" : "nil").utf8)
        }
    }

    public mutating func null() {
        switch format {
        case .text, .text0: return
        case .json: beginValue(); buffer.append(contentsOf: "null".utf8)
        case .sexp: beginValue(); buffer.append(contentsOf: "nil".utf8)
        }
    }

    /// A map's key: `"key": ` (JSON) or `:key` (sexp; letters, digits, `-` and `_` only).
    public mutating func mapKey(_ key: String) {
        switch format {
        case .text, .text0: return
        case .json:
            string(key)
            buffer += [UInt8(ascii: ":"), UInt8(ascii: " ")]
            first[first.count - 1] = true
        case .sexp:
            beginValue()
            buffer.append(UInt8(ascii: ":"))
            buffer.append(contentsOf: key.utf8)
        }
    }

    /// Between results: a newline (text), a NUL (text0), or the next value on a new line (JSON, sexp).
    public mutating func separator() {
        switch format {
        case .text: buffer.append(UInt8(ascii: "\n"))
        case .text0: buffer.append(0)
        case .json, .sexp: insertSeparator = true
        }
        if buffer.count >= 1 << 16 { flush() }
    }

    /// The text formats' prefix before each string (`thread:`, `id:`); nil for none.
    public mutating func setPrefix(_ p: String?) { prefix = p }

    /// Bytes the text formats' commands lay out themselves.
    public mutating func raw(_ s: String) { buffer.append(contentsOf: s.utf8) }
    public mutating func raw(bytes: [UInt8]) { buffer.append(contentsOf: bytes) }

    public mutating func flush() {
        if !buffer.isEmpty { sink(buffer) }
        buffer.removeAll(keepingCapacity: true)
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// A string value in double quotes: `"` and `\` escaped by a backslash, bytes below 32 by `control`.
    private mutating func quoted(_ s: String, control: (UInt8) -> [UInt8]) {
        beginValue()
        buffer.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): buffer += [92, b]
            case 0..<32: buffer += control(b)
            default: buffer.append(b)
            }
        }
        buffer.append(UInt8(ascii: "\""))
    }

    private mutating func beginAggregate(_ open: UInt8, _ close: UInt8) {
        guard !isText else { return }
        beginValue()
        buffer.append(format == .sexp ? UInt8(ascii: "(") : open)
        first.append(true)
        closers.append(format == .sexp ? UInt8(ascii: ")") : close)
    }

    private mutating func beginValue() {
        guard !first.isEmpty else { return }
        if first[first.count - 1] {
            first[first.count - 1] = false
            return
        }
        if format == .json { buffer.append(UInt8(ascii: ",")) }
        if insertSeparator {
            buffer.append(UInt8(ascii: "\n"))
            insertSeparator = false
        } else {
            buffer.append(UInt8(ascii: " "))
        }
    }
}
