import MoCore
import MoNet

/// An `http://` or `https://` address split into what a request needs.
public struct WebAddress: Sendable, Equatable {
    public var secure: Bool
    public var host: String
    public var port: Int
    /// Path and query, starting with `/`.
    public var target: String

    /// nil for any other scheme, a host that is not a name or an IP literal, a bad port, or a byte outside
    /// printable ASCII (the address is written into a request line).
    public init?(_ text: String) {
        guard text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        let rest: Substring
        if text.hasPrefix("https://") {
            secure = true; rest = text.dropFirst(8)
        } else if text.hasPrefix("http://") {
            secure = false; rest = text.dropFirst(7)
        } else {
            return nil
        }
        let slash = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        var authority = rest[..<slash]
        target = rest[slash...].hasPrefix("/") ? String(rest[slash...]) : "/" + rest[slash...]
        port = secure ? 443 : 80
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            authority = authority[authority.index(after: close)...]
            guard isIPv6Literal(host) else { return nil }
        } else {
            let colon = authority.firstIndex(of: ":") ?? authority.endIndex
            host = String(authority[..<colon]).lowercased()
            authority = authority[colon...]
            guard isHostName(host) else { return nil }
        }
        if !authority.isEmpty {
            guard authority.hasPrefix(":"), let p = Int(authority.dropFirst()), (1...65535).contains(p) else { return nil }
            port = p
        }
    }

    public var isLoopback: Bool { isLoopbackHost(host) }

    /// The address written out again (`scheme://host:port/target`, the port always given).
    public var text: String { "\(origin)\(target)" }
    /// `scheme://host:port`, as messages name a server.
    public var origin: String { "\(secure ? "https" : "http")://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}

/// A bracketless IPv6 literal's characters (hex digits, `:`, and `.` for an embedded IPv4).
public func isIPv6Literal(_ s: String) -> Bool {
    !s.isEmpty && s.contains(":") && s.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
}

/// Letters, digits, `-` and dots, in labels of 1 to 63 bytes: a name safe to write and to connect to.
public func isHostName(_ s: String) -> Bool {
    let labels = s.split(separator: ".", omittingEmptySubsequences: false)
    return !s.isEmpty && s.utf8.count <= 253
        && labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.utf8.allSatisfy(isHostNameByte)
        }
}
