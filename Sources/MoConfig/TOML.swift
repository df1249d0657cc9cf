/// Entry points of the TOML parser (TOML 1.0 without dates and times).
public enum TOML {
    /// Parses a whole document. Pure: no I/O.
    public static func parse(_ text: String) throws(TOMLError) -> TOMLTable {
        var parser = TOMLParser(text)
        return try parser.parseDocument()
    }

    /// A key path as it would be written in TOML: bare segments as they are, others quoted
    /// (`account."my work".imap`).
    public static func dottedKey<S: Sequence>(_ parts: S) -> String where S.Element == String {
        parts.map { part in
            if !part.isEmpty, part.utf8.allSatisfy(isBareKeyByte) { return part }
            return quoted(part)
        }.joined(separator: ".")
    }

    /// `s` as a TOML basic string, quotes included: `"`, `\` and control characters escaped, so any text
    /// (a path, an address, a shell command) reads back as itself.
    public static func quoted(_ s: String) -> String {
        var quoted = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\t": quoted += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    quoted += "\\u" + hex4(scalar.value)
                } else {
                    quoted.unicodeScalars.append(scalar)
                }
            }
        }
        return quoted + "\""
    }

    /// Whether `s` may be written as a bare key (and so names an account): letters, digits, `_`, `-`.
    public static func isBareKey(_ s: String) -> Bool { !s.isEmpty && s.utf8.allSatisfy(isBareKeyByte) }

    static func isBareKeyByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    static func hex4(_ v: UInt32) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
