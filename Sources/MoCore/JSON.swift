/// A JSON string literal for `s` (RFC 8259 escaping), for the small JSON outputs of the CLIs.
public func jsonQuoted(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where isTerminalControl(u):   // C0, and DEL and C1 too, so --json on a terminal is safe
            let hex = String(u.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: out.unicodeScalars.append(u)
        }
    }
    return out + "\""
}
