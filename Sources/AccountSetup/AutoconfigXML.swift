import MoConfig
import MoCore
import MoHTTP

/// One `<incomingServer>` or `<outgoingServer>` of a Thunderbird autoconfig file (config-v1.1.xml), with
/// only the elements `mo-sync init` uses.
public struct AutoconfigServer: Sendable, Equatable {
    public var type: String
    public var hostname: String?
    public var port: String?
    public var socketType: String?
    public var authentication: [String] = []
    public var username: String?
}

/// A minimal, bounded XML reader for autoconfig files. It knows elements, attributes, text, comments and
/// the XML declaration; it refuses DOCTYPE (so no entity can be declared, external or not) and CDATA, and
/// knows only the five predefined entities and character references. Pure: bytes in, servers out.
///
/// Limits: `maxBytes` of input, `maxDepth` nesting, `maxElements`, `maxText` bytes of text per element.
public enum AutoconfigXML {
    public static let maxBytes = 64 * 1024
    static let maxDepth = 32
    static let maxElements = 4096
    static let maxText = 1024

    /// The servers of the file, in document order.
    public static func parse(_ bytes: [UInt8]) throws(GenericError) -> (incoming: [AutoconfigServer], outgoing: [AutoconfigServer]) {
        guard bytes.count <= maxBytes else { throw bad("larger than \(maxBytes / 1024) KiB") }
        var incoming: [AutoconfigServer] = [], outgoing: [AutoconfigServer] = []
        var stack: [String] = []
        var current: AutoconfigServer?
        var serverDepth = 0
        var text: [UInt8] = []
        var elements = 0
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0

        func find(_ needle: [UInt8], from start: Int) throws(GenericError) -> Int {
            var j = start
            while j + needle.count <= bytes.count {
                if bytes[j] == needle[0] && bytes[j..<(j + needle.count)].elementsEqual(needle) { return j }
                j += 1
            }
            throw bad("unterminated markup")
        }

        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "<") else {
                let end = bytes[i...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                if text.count + (end - i) > maxText { throw bad("text longer than \(maxText) bytes") }
                text += bytes[i..<end]
                i = end
                continue
            }
            let rest = bytes[i...]
            if rest.starts(with: Array("<?".utf8)) { i = try find(Array("?>".utf8), from: i + 2) + 2; continue }
            if rest.starts(with: Array("<!--".utf8)) { i = try find(Array("-->".utf8), from: i + 4) + 3; continue }
            if rest.starts(with: Array("<!".utf8)) { throw bad("DOCTYPE and CDATA are not accepted") }
            let close = try find([UInt8(ascii: ">")], from: i + 1)
            var tag = Array(bytes[(i + 1)..<close])
            i = close + 1
            if tag.first == UInt8(ascii: "/") {
                let name = localName(tag.dropFirst())
                guard stack.last == name else { throw bad("</\(name)> does not close <\(stack.last ?? "")>") }
                let value = trimmed(try decode(text))
                if var server = current {
                    if stack.count == serverDepth {
                        if name == "incomingServer" { incoming.append(server) } else { outgoing.append(server) }
                        current = nil
                    } else if stack.count == serverDepth + 1 {
                        switch name {
                        case "hostname": server.hostname = value
                        case "port": server.port = value
                        case "socketType": server.socketType = value
                        case "authentication": server.authentication.append(value)
                        case "username": server.username = value
                        default: break
                        }
                        current = server
                    }
                }
                stack.removeLast()
                text = []
                continue
            }
            let selfClosing = tag.last == UInt8(ascii: "/")
            if selfClosing { tag.removeLast() }
            let nameEnd =
                tag.firstIndex {
                    $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r")
                } ?? tag.count
            let name = localName(tag[..<nameEnd])
            guard !name.isEmpty else { throw bad("an element without a name") }
            elements += 1
            guard elements <= maxElements else { throw bad("more than \(maxElements) elements") }
            guard stack.count < maxDepth else { throw bad("nested deeper than \(maxDepth)") }
            let attributes = try parseAttributes(tag[nameEnd...])
            text = []
            if selfClosing { continue }
            stack.append(name)
            if current == nil, name == "incomingServer" || name == "outgoingServer" {
                current = AutoconfigServer(type: attributes["type"] ?? "")
                serverDepth = stack.count
            }
        }
        guard stack.isEmpty else { throw bad("<\(stack.last!)> is not closed") }
        return (incoming, outgoing)
    }

    static func trimmed(_ s: String) -> String {
        let space: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        guard let first = s.firstIndex(where: { !space($0) }), let last = s.lastIndex(where: { !space($0) }) else { return "" }
        return String(s[first...last])
    }

    static func bad(_ detail: String) -> GenericError { GenericError(.protocolViolation, "autoconfig: \(detail)") }

    /// The name without a namespace prefix, letters and digits only kept as they are (others would not
    /// match any element we read anyway).
    static func localName(_ bytes: some Collection<UInt8>) -> String {
        let s = String(decoding: bytes, as: UTF8.self)
        return String(s.split(separator: ":").last ?? "").filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// `name="value"` pairs; values decoded.
    static func parseAttributes(_ bytes: ArraySlice<UInt8>) throws(GenericError) -> [String: String] {
        var result: [String: String] = [:]
        var i = bytes.startIndex
        func skipSpace() {
            while i < bytes.endIndex, [UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[i]) {
                i += 1
            }
        }
        while true {
            skipSpace()
            if i == bytes.endIndex { return result }
            let nameStart = i
            while i < bytes.endIndex, bytes[i] != UInt8(ascii: "="),
                ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r")].contains(bytes[i])
            { i += 1 }
            let name = localName(bytes[nameStart..<i])
            skipSpace()
            guard i < bytes.endIndex, bytes[i] == UInt8(ascii: "=") else { throw bad("an attribute without a value") }
            i += 1
            skipSpace()
            guard i < bytes.endIndex, bytes[i] == UInt8(ascii: "\"") || bytes[i] == UInt8(ascii: "'") else {
                throw bad("an attribute value without quotes")
            }
            let quote = bytes[i]
            i += 1
            guard let end = bytes[i...].firstIndex(of: quote) else { throw bad("an unterminated attribute value") }
            result[name] = try decode(Array(bytes[i..<end]))
            i = end + 1
        }
    }

    /// Text with the predefined entities and character references replaced; any other `&` is an error.
    static func decode(_ bytes: [UInt8]) throws(GenericError) -> String {
        guard bytes.contains(UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            guard bytes[i] == UInt8(ascii: "&") else { out.append(bytes[i]); i += 1; continue }
            guard let semi = bytes[i...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else { throw bad("a bare & in text") }
            let entity = String(decoding: bytes[(i + 1)..<semi], as: UTF8.self)
            i = semi + 1
            switch entity {
            case "amp": out.append(UInt8(ascii: "&"))
            case "lt": out.append(UInt8(ascii: "<"))
            case "gt": out.append(UInt8(ascii: ">"))
            case "quot": out.append(UInt8(ascii: "\""))
            case "apos": out.append(UInt8(ascii: "'"))
            default:
                let value =
                    entity.hasPrefix("#x")
                    ? UInt32(entity.dropFirst(2), radix: 16)
                    : entity.hasPrefix("#") ? UInt32(entity.dropFirst(), radix: 10) : nil
                guard let value, let scalar = Unicode.Scalar(value), value != 0 else {
                    throw bad("unknown entity &\(escapedForMessage(entity));")
                }
                out += Array(String(Character(scalar)).utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension AutoconfigXML {
    /// Settings from parsed servers for `address`: the first IMAP server and the first SMTP server with
    /// a host name, a port and TLS ("SSL" or "STARTTLS"; "plain" is never taken). Placeholders
    /// (`%EMAILADDRESS%`, `%EMAILLOCALPART%`, `%EMAILDOMAIN%`) are filled in. nil without an IMAP server.
    /// Pure.
    public static func settings(
        incoming: [AutoconfigServer], outgoing: [AutoconfigServer], address: String,
        source: String
    ) -> MailSettings? {
        guard let imap = incoming.lazy.filter({ $0.type == "imap" }).compactMap({ endpoint($0, address: address) }).first else {
            return nil
        }
        let smtp = outgoing.lazy.filter { $0.type == "smtp" }.compactMap { endpoint($0, address: address) }.first
        let oauth = imap.auth == .xoauth2
        var notes: [String] = []
        if oauth { notes = ["The server asks for OAuth2: the password-command must print an access token.", KnownProviders.oauthHelpers] }
        return MailSettings(imap: imap, smtp: smtp, source: source, login: oauth ? .oauth2 : .password, notes: notes)
    }

    static func endpoint(_ s: AutoconfigServer, address: String) -> ServerEndpoint? {
        let domain = mailDomain(of: address) ?? ""
        let local = address.lastIndex(of: "@").map { String(address[..<$0]) } ?? address
        func fill(_ v: String) -> String {
            var out = ""
            var rest = Substring(v)
            while let r = rest.firstRange(of: "%") {
                out += rest[..<r.lowerBound]
                let after = rest[r.lowerBound...]
                if after.hasPrefix("%EMAILADDRESS%") {
                    out += address; rest = after.dropFirst(14)
                } else if after.hasPrefix("%EMAILLOCALPART%") {
                    out += local; rest = after.dropFirst(16)
                } else if after.hasPrefix("%EMAILDOMAIN%") {
                    out += domain; rest = after.dropFirst(13)
                } else {
                    out += "%"; rest = after.dropFirst()
                }
            }
            return out + rest
        }
        guard let rawHost = s.hostname, let portText = s.port, let port = Int(portText), (1...65535).contains(port) else { return nil }
        let host = fill(rawHost).lowercased()
        guard isHostName(host) else { return nil }
        let tls: TLSMode
        switch s.socketType?.uppercased() {
        case "SSL", "TLS": tls = .implicit
        case "STARTTLS": tls = .starttls
        default: return nil
        }
        let auth: AuthMethod = s.authentication.contains("password-cleartext") || !s.authentication.contains("OAuth2") ? .auto : .xoauth2
        var user = s.username.map(fill)
        if user == address || user?.isEmpty == true { user = nil }
        // A login name goes into the config and onto the terminal: printable text only.
        if let u = user, u.unicodeScalars.contains(where: { $0.value < 0x20 || isTerminalControl($0) }) { user = nil }
        return ServerEndpoint(host: host, port: port, tls: tls, auth: auth, user: user)
    }
}
