/// The one home of JSON in the project: every JSON output of every program is written by `JSONWriter`
/// (fields and layout in docs/json.md), whose strings all go through `appendJSONQuoted`.

/// The version of every JSON output (`format_version`). One number for all programs, as notmuch has:
/// a change a careful script could trip over (a field removed, renamed or changing type or meaning, a new
/// top-level shape) makes it 2; new fields and new outputs do not.
public enum JSONFormat {
    public static let version = 1
    public static let supported = [1]

    /// `--format-version N`: nil (not given) or a supported N passes; any other N is a usage error (exit 64).
    public static func check(_ requested: Int?) throws(GenericError) {
        guard let requested, !supported.contains(requested) else { return }
        throw GenericError(
            .usage,
            "--format-version \(requested): not supported (supported: "
                + supported.map(String.init).joined(separator: ", ") + ")")
    }
}

/// Appends the JSON string literal for `s` (RFC 8259), escaping `"`, `\`, every C0 control, and DEL and C1
/// too, so JSON printed on a terminal cannot drive it. Everything else (non-BMP included) stays UTF-8, which
/// a Swift string always is, so working on its bytes is exact: C1 is the two bytes C2 80…C2 9F.
public func appendJSONQuoted(_ s: String, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var previous: UInt8 = 0
    for b in s.utf8 {
        switch b {
        case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "\n"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
        case 0x00..<0x20, 0x7F: appendUnicodeEscape(UInt32(b), to: &out)
        case 0x80...0x9F where previous == 0xC2:
            out.removeLast()  // the lead byte C2 written on the step before
            appendUnicodeEscape(UInt32(b), to: &out)
        default: out.append(b)
        }
        previous = b
    }
    out.append(UInt8(ascii: "\""))
}

private func appendUnicodeEscape(_ value: UInt32, to out: inout [UInt8]) {
    let hex: [UInt8] = Array("0123456789abcdef".utf8)
    out += [0x5C, 0x75, 0x30, 0x30, hex[Int(value >> 4 & 0xF)], hex[Int(value & 0xF)]]
}

/// `appendJSONQuoted` as a String (for tests and messages; outputs use `JSONWriter`).
public func jsonQuoted(_ s: String) -> String {
    var out: [UInt8] = []
    appendJSONQuoted(s, to: &out)
    return String(decoding: out, as: UTF8.self)
}

/// A JSON value: what one output element (a result, a folder's summary) is built as before `JSONWriter`
/// writes it. Objects keep their keys in the order given (outputs are stable, byte for byte).
public indirect enum JSONValue: Equatable, Sendable {
    case object([(String, JSONValue)])
    case array([JSONValue])
    case string(String)
    case int(Int64)
    /// A number that is not a 64-bit integer, as its JSON text (written back unchanged).
    case number(String)
    case bool(Bool)
    case null

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)): x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.array(let x), .array(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.bool(let x), .bool(let y)): x == y
        case (.null, .null): true
        default: false
        }
    }

    public static func int(_ n: Int) -> JSONValue { .int(Int64(n)) }
    public static func strings(_ xs: [String]) -> JSONValue { .array(xs.map { .string($0) }) }

    /// The value on one line, as `JSONWriter` writes it.
    public var text: String {
        var out: [UInt8] = []
        append(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func append(to out: inout [UInt8]) {
        switch self {
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in fields.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                appendJSONQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.append(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.append(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .string(let s): appendJSONQuoted(s, to: &out)
        case .int(let n): out += Array(String(n).utf8)
        case .number(let text): out += Array(text.utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .null: out += Array("null".utf8)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral s: String) { self = .string(s) }
    public init(integerLiteral n: Int64) { self = .int(n) }
    public init(booleanLiteral b: Bool) { self = .bool(b) }
    public init(arrayLiteral items: JSONValue...) { self = .array(items) }
    /// Keys in the order written.
    public init(dictionaryLiteral fields: (String, JSONValue)...) { self = .object(fields) }
}
