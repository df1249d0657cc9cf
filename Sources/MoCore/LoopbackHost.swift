#if canImport(Glibc)
    import Glibc
#endif

/// Whether `host` names this machine's loopback interface: `localhost` (any case, with or without the
/// root's dot), an IPv4 address in 127.0.0.0/8 written as four decimal octets, or `::1` in any IPv6
/// spelling, bracketed or not. The one test behind every "plain text only to loopback" rule (the config
/// loader, IMAP, SMTP, HTTP): a looser copy once let `127.attacker.example` through, a name anyone can
/// point anywhere. Addresses are parsed by `inet_pton`, which takes nothing but the strict forms.
public func isLoopbackHost(_ host: String) -> Bool {
    let h = host.lowercased()
    if h == "localhost" || h == "localhost." { return true }
    // Brackets only around an IPv6 address (a URL's `[::1]`), never around a name or an IPv4 address.
    let bare = h.hasPrefix("[") && h.hasSuffix("]") && h.contains(":") ? String(h.dropFirst().dropLast()) : h
    var v4 = in_addr()
    if !bare.contains(":"), inet_pton(AF_INET, bare, &v4) == 1 {
        return UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }
    var v6 = in6_addr()
    guard bare.contains(":"), inet_pton(AF_INET6, bare, &v6) == 1 else { return false }
    return withUnsafeBytes(of: &v6) { b in b.prefix(15).allSatisfy { $0 == 0 } && b[15] == 1 }
}

/// Whether `address` is an `https://` address, or a plain `http://` one to a loopback host (a local test
/// server): the rule for every address mo takes endpoints from or sends a secret to (an OAuth2 issuer,
/// its endpoints). The host is what stands between `//` and the first `/`, `?` or `#`, less a port;
/// userinfo (`@`) is refused, so `http://127.0.0.1@attacker.example` is not loopback.
public func isHTTPSOrLoopbackAddress(_ address: String) -> Bool {
    guard address.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return false }
    if address.hasPrefix("https://") { return address.count > 8 }
    guard address.hasPrefix("http://") else { return false }
    let authority = address.dropFirst(7).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    guard !authority.contains("@") else { return false }
    let host: Substring
    if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
        host = authority[...close]
    } else {
        host = authority.prefix { $0 != ":" }
    }
    return isLoopbackHost(String(host))
}
