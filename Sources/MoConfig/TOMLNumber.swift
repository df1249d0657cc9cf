/// Integer and float literals, checked against the TOML grammar before conversion
/// (Swift's own parsers accept forms TOML does not, such as `1.` or `0x` with a sign).
enum NumberSyntax {
    struct Failure: Error {
        var message: String
    }

    static func parse(_ token: String) throws(Failure) -> TOMLValue {
        // special-float = [ minus / plus ] ( inf / nan )
        switch token {
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        var body = Substring(token)
        var negative = false
        if let first = body.first, first == "+" || first == "-" {
            negative = first == "-"
            body = body.dropFirst()
        }
        // hex-int = hex-prefix HEXDIG *( HEXDIG / underscore HEXDIG ), likewise oct-int and bin-int
        for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] where body.hasPrefix(prefix) {
            if body.count != token.count { throw Failure(message: "a sign is not allowed on '\(token)'") }
            let digits = body.dropFirst(2)
            guard let clean = digitsWithoutUnderscores(digits, radix: radix) else {
                throw Failure(message: "invalid number '\(token)'")
            }
            guard let value = Int64(clean, radix: radix) else {
                throw Failure(message: "'\(token)' does not fit in a 64-bit integer")
            }
            return .integer(value)
        }
        guard let first = body.first, first.isASCII, first.isNumber else {
            let looksNumeric = token.first.map { $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." } ?? false
            throw Failure(message: looksNumeric ? "invalid number '\(token)'" : "invalid value '\(token)' (strings need quotes)")
        }

        // float = float-int-part ( exp / frac [ exp ] ); frac = "." zero-prefixable-int; exp = "e" float-exp-part
        let expIndex = body.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = body[..<(expIndex ?? body.endIndex)]
        let dotIndex = mantissa.firstIndex(of: ".")
        let intPart = mantissa[..<(dotIndex ?? mantissa.endIndex)]
        guard let intClean = digitsWithoutUnderscores(intPart, radix: 10) else {
            throw Failure(message: "invalid number '\(token)'")
        }
        if intClean.count > 1 && intClean.hasPrefix("0") {
            throw Failure(message: "leading zeros are not allowed in '\(token)'")
        }
        if dotIndex == nil && expIndex == nil {
            guard let value = Int64((negative ? "-" : "") + intClean) else {
                throw Failure(message: "'\(token)' does not fit in a 64-bit integer")
            }
            return .integer(value)
        }
        var text = (negative ? "-" : "") + intClean
        if let dot = dotIndex {
            guard let frac = digitsWithoutUnderscores(mantissa[mantissa.index(after: dot)...], radix: 10) else {
                throw Failure(message: "invalid number '\(token)'")
            }
            text += "." + frac
        }
        if let e = expIndex {
            var exp = body[body.index(after: e)...]
            var sign = ""
            if let s = exp.first, s == "+" || s == "-" { sign = String(s); exp = exp.dropFirst() }
            guard let expClean = digitsWithoutUnderscores(exp, radix: 10) else {
                throw Failure(message: "invalid number '\(token)'")
            }
            text += "e" + sign + expClean
        }
        guard let value = Double(text) else { throw Failure(message: "invalid number '\(token)'") }
        return .float(value)
    }

    /// The digits with underscores removed, or nil unless `s` is 1+ digits of `radix` where every
    /// underscore sits between two digits.
    static func digitsWithoutUnderscores(_ s: Substring, radix: Int) -> String? {
        var out = ""
        var previousWasDigit = false
        for c in s {
            if c == "_" {
                guard previousWasDigit else { return nil }
                previousWasDigit = false
                continue
            }
            guard c.isASCII, let d = c.hexDigitValue, d < radix else { return nil }
            out.append(c)
            previousWasDigit = true
        }
        return previousWasDigit ? out : nil
    }
}
