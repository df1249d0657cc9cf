import MoCore
import Testing

@Suite struct LoopbackHostTests {
    @Test(arguments: [
        ("localhost", true), ("LocalHost", true), ("localhost.", true),
        ("127.0.0.1", true), ("127.1.2.3", true), ("127.255.255.255", true),
        ("::1", true), ("[::1]", true), ("0:0:0:0:0:0:0:1", true),
        ("127.attacker.example", false), ("127.0.0.1.example", false), ("127.0.0.256", false), ("127.0.0", false),
        ("128.0.0.1", false), ("10.0.0.1", false), ("::2", false), ("::", false), ("[::1", false), ("[127.0.0.1]", false),
        ("[localhost]", false),
        ("::ffff:127.0.0.1", false), ("localhost.example", false), ("", false), (" 127.0.0.1", false)
    ])
    func loopback(host: String, expected: Bool) {
        #expect(isLoopbackHost(host) == expected, "\(host)")
    }
}

/// The one rule for addresses endpoints come from: https, or http to a loopback host.
@Suite struct HTTPSOrLoopbackAddressTests {
    @Test(arguments: [
        ("https://id.example", true), ("https://id.example/x?y", true), ("http://127.0.0.1:9/t", true),
        ("http://[::1]/t", true), ("http://localhost", true), ("https://", false), ("ftp://x", false),
        ("http://id.example", false), ("http://127.0.0.1.attacker.example/", false),
        ("http://127.attacker.example/t", false), ("http://127.0.0.1@attacker.example/", false),
        ("http://127.0.0.1 /", false)
    ])
    func rule(_ address: String, _ expected: Bool) {
        #expect(isHTTPSOrLoopbackAddress(address) == expected, "\(address)")
    }
}
