/// A client command, encoded to its wire form by `bytes` (RFC 5321 §4.1 and extensions).
///
/// Arguments must already be validated (`SMTPEnvelope.validate`): encoding never fails and adds no
/// quoting, so an address holding CR, LF, `<` or `>` must never reach here.
public enum SMTPCommand: Sendable, Equatable {
    case ehlo(String)
    case helo(String)
    case startTLS
    /// `AUTH mech [initial-response]`; the response is already base64 (`=` for an empty one, RFC 4954).
    case auth(mechanism: String, initialResponse: String?)
    /// A reply to a 334 challenge: base64, or `*` to cancel.
    case authResponse(String)
    case mailFrom(String, MailParameters)
    case rcptTo(String, notify: DSNNotify?)
    case data
    case rset
    case noop
    case quit

    /// The command line with CRLF.
    public var bytes: [UInt8] { Array((text + "\r\n").utf8) }

    /// The command without CRLF.
    public var text: String {
        switch self {
        case .ehlo(let name): return "EHLO \(name)"
        case .helo(let name): return "HELO \(name)"
        case .startTLS: return "STARTTLS"
        case .auth(let mechanism, let initial?): return "AUTH \(mechanism) \(initial)"
        case .auth(let mechanism, nil): return "AUTH \(mechanism)"
        case .authResponse(let payload): return payload
        case .mailFrom(let address, let params): return "MAIL FROM:<\(address)>" + params.encoded
        case .rcptTo(let address, let notify?): return "RCPT TO:<\(address)> NOTIFY=\(notify.encoded)"
        case .rcptTo(let address, nil): return "RCPT TO:<\(address)>"
        case .data: return "DATA"
        case .rset: return "RSET"
        case .noop: return "NOOP"
        case .quit: return "QUIT"
        }
    }

    /// The line fit for a protocol trace: SASL payloads are replaced, so secrets never reach a log.
    public var redactedText: String {
        switch self {
        case .auth(let mechanism, _?): return "AUTH \(mechanism) <redacted>"
        case .authResponse: return "<redacted>"
        default: return text
        }
    }
}

/// ESMTP parameters of MAIL FROM.
public struct MailParameters: Sendable, Equatable {
    /// RFC 1870 `SIZE=n`: the message size the client expects to send.
    public var size: Int?
    /// RFC 6152 `BODY=8BITMIME`.
    public var eightBitMIME: Bool
    /// RFC 6531 `SMTPUTF8`.
    public var smtpUTF8: Bool
    /// RFC 3461 `RET=FULL|HDRS`.
    public var ret: DSNReturn?
    /// RFC 3461 `ENVID=`, xtext-encoded on the wire.
    public var envelopeID: String?

    public init(
        size: Int? = nil, eightBitMIME: Bool = false, smtpUTF8: Bool = false,
        ret: DSNReturn? = nil, envelopeID: String? = nil
    ) {
        self.size = size
        self.eightBitMIME = eightBitMIME
        self.smtpUTF8 = smtpUTF8
        self.ret = ret
        self.envelopeID = envelopeID
    }

    var encoded: String {
        var out = ""
        if let size { out += " SIZE=\(size)" }
        if eightBitMIME { out += " BODY=8BITMIME" }
        if smtpUTF8 { out += " SMTPUTF8" }
        if let ret { out += " RET=\(ret.rawValue)" }
        if let envelopeID { out += " ENVID=\(xtext(envelopeID))" }
        return out
    }
}

/// RFC 3461 §4.3: what a bounce carries.
public enum DSNReturn: String, Sendable, Equatable {
    case full = "FULL"
    case headers = "HDRS"
}

/// RFC 3461 §4.1: when the recipient's server should send a delivery status notification.
public enum DSNNotify: Sendable, Equatable {
    case never
    /// Any non-empty combination of success, failure and delay.
    case on(success: Bool, failure: Bool, delay: Bool)

    /// Parses sendmail's `-N` argument: `never` or a comma list of `success`, `failure`, `delay`.
    public init?(sendmailArgument: String) {
        let words = sendmailArgument.lowercased().split(separator: ",").map { $0.trimmingSpaces() }
        if words == ["never"] { self = .never; return }
        var s = false, f = false, d = false
        for w in words {
            switch w {
            case "success": s = true
            case "failure": f = true
            case "delay": d = true
            default: return nil
            }
        }
        guard s || f || d else { return nil }
        self = .on(success: s, failure: f, delay: d)
    }

    /// The NOTIFY parameter's value: `NEVER`, or `SUCCESS,FAILURE,DELAY` (those chosen).
    public var encoded: String {
        switch self {
        case .never: return "NEVER"
        case .on(let s, let f, let d):
            return [s ? "SUCCESS" : nil, f ? "FAILURE" : nil, d ? "DELAY" : nil].compactMap { $0 }.joined(separator: ",")
        }
    }
}

extension Substring {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// RFC 3461 §4: xtext encodes `+`, `=`, controls, space and non-ASCII as `+HH`.
func xtext(_ value: String) -> String {
    var out = ""
    for b in value.utf8 {
        if b > 0x20 && b < 0x7F && b != UInt8(ascii: "+") && b != UInt8(ascii: "=") {
            out.unicodeScalars.append(Unicode.Scalar(b))
        } else {
            let hex = Array("0123456789ABCDEF".utf8)
            out += "+" + String(decoding: [hex[Int(b >> 4)], hex[Int(b & 15)]], as: UTF8.self)
        }
    }
    return out
}
