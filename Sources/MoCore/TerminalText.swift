/// The one home of escaping outside text (a server's reply, a mailbox name, bytes of a damaged file) for
/// one-line messages on a terminal. Invariant of every result: no C0 control (tab, CR and LF included), no
/// DEL, no C1 control (U+0080–U+009F) and no invalid UTF-8, so the text can neither break the line nor drive
/// the terminal (ESC [ 2 J, OSC title strings, the 8-bit CSI U+009B). Escaping is idempotent: an escaped
/// text has nothing left to escape (backslashes are kept as they are unless asked for).

/// Names for one line of output whatever their number (a server may send 100,000 mailboxes or 9,000
/// keywords on one message): the first `shown` in sorted order, joined, then "and N more".
public func boundedList(_ names: some Collection<String>, shown: Int = 10, separator: String = ", ") -> String {
    let first = names.sorted().prefix(shown)
    return first.joined(separator: separator) + (names.count > first.count ? " and \(names.count - first.count) more" : "")
}

/// `"…"` with quotes, backslashes and control characters escaped, so a hostile name cannot break a
/// one-line message.
public func quotedForMessage(_ s: String) -> String {
    "\"" + escapedForMessage(s, alsoEscaping: ["\"", "\\"]) + "\""
}

/// `s` with control characters (C0, DEL, C1) written `\u{1B}`; `alsoEscaping` characters get a
/// backslash before them.
public func escapedForMessage(_ s: String, alsoEscaping extra: Set<Unicode.Scalar> = []) -> String {
    guard s.unicodeScalars.contains(where: { isTerminalControl($0) || extra.contains($0) }) else { return s }
    var out = ""
    for scalar in s.unicodeScalars {
        if isTerminalControl(scalar) {
            out += escapedScalar(scalar)
        } else {
            if extra.contains(scalar) { out += "\\" }
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

/// Bytes from outside (a file, the wire) as a one-line message: valid UTF-8 is kept (controls escaped as
/// `escapedForMessage` does), each byte of an invalid sequence is written `\xNN`.
public func escapedForMessage(bytes: some Collection<UInt8>, alsoEscaping extra: Set<Unicode.Scalar> = []) -> String {
    let b = Array(bytes)
    var out = ""
    var i = 0
    while i < b.count {
        if let (scalar, length) = utf8Scalar(b, at: i) {
            if isTerminalControl(scalar) {
                out += escapedScalar(scalar)
            } else {
                if extra.contains(scalar) { out += "\\" }
                out.unicodeScalars.append(scalar)
            }
            i += length
        } else {
            out += "\\x" + hex2(b[i])
            i += 1
        }
    }
    return out
}

/// The scalar whose well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, ≤ U+10FFFF) starts at
/// `i`, and its length; nil if the sequence there is not well formed.
private func utf8Scalar(_ b: [UInt8], at i: Int) -> (Unicode.Scalar, Int)? {
    let lead = b[i]
    if lead < 0x80 { return (Unicode.Scalar(lead), 1) }
    let length: Int, minimum: UInt32, initial: UInt32
    switch lead {
    case 0xC2...0xDF: (length, minimum, initial) = (2, 0x80, UInt32(lead & 0x1F))
    case 0xE0...0xEF: (length, minimum, initial) = (3, 0x800, UInt32(lead & 0x0F))
    case 0xF0...0xF4: (length, minimum, initial) = (4, 0x10000, UInt32(lead & 0x07))
    default: return nil
    }
    guard i + length <= b.count else { return nil }
    var value = initial
    for k in 1..<length {
        let c = b[i + k]
        guard c & 0xC0 == 0x80 else { return nil }
        value = value << 6 | UInt32(c & 0x3F)
    }
    guard value >= minimum, let scalar = Unicode.Scalar(value) else { return nil }
    return (scalar, length)
}

/// `bytes` quoted like `quotedForMessage`.
public func quotedForMessage(bytes: some Collection<UInt8>) -> String {
    "\"" + escapedForMessage(bytes: bytes, alsoEscaping: ["\"", "\\"]) + "\""
}

/// C0 controls, DEL and C1 controls: what a terminal may act on.
public func isTerminalControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || scalar.value == 0x7F || (0x80...0x9F).contains(scalar.value)
}

private func escapedScalar(_ scalar: Unicode.Scalar) -> String {
    "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
}

private func hex2(_ b: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String(digits[Int(b >> 4)]) + String(digits[Int(b & 0xF)])
}
