import MoCore
import MoNet
import Testing
@testable import AccountSetup
import MoHTTP
import MoConfig

/// The pure decisions of discovery: which SRV record, which autoconfig server, which flag value.
func rec(_ priority: UInt16, _ weight: UInt16, _ port: UInt16, _ target: String) -> SRVRecord {
    SRVRecord(priority: priority, weight: weight, port: port, target: target)
}

@Suite struct DiscoveryRulesTests {

    @Test(
        arguments: [
            // (implicit, starttls, expected host, port, tls)
            ([rec(0, 1, 993, "a.example.org")], [], "a.example.org", 993, TLSMode.implicit),
            ([], [rec(0, 1, 143, "b.example.org")], "b.example.org", 143, .starttls),
            ([rec(10, 1, 993, "a.example.org")], [rec(0, 1, 143, "b.example.org")], "b.example.org", 143, .starttls),  // priority first
            ([rec(0, 1, 993, "a.example.org")], [rec(0, 9, 143, "b.example.org")], "a.example.org", 993, .implicit),  // tie: implicit TLS
            ([rec(0, 1, 993, "a.example.org"), rec(0, 5, 993, "c.example.org")], [], "c.example.org", 993, .implicit),  // then weight
            ([rec(0, 0, 0, "."), rec(5, 0, 993, "d.example.org")], [], "d.example.org", 993, .implicit)  // "." is no server
        ] as [([SRVRecord], [SRVRecord], String, Int, TLSMode)])
    func srvChoice(implicit: [SRVRecord], starttls: [SRVRecord], host: String, port: Int, tls: TLSMode) {
        #expect(SRVDiscovery.choose(implicit: implicit, starttls: starttls) == ServerEndpoint(host: host, port: port, tls: tls))
    }

    @Test func srvSettings() throws {
        #expect(SRVDiscovery.choose(implicit: [rec(0, 0, 0, ".")], starttls: []) == nil)
        #expect(SRVDiscovery.settings(domain: "example.org", answers: [[], [], [rec(0, 0, 465, "smtp.example.org")], []]) == nil)
        let s = try #require(
            SRVDiscovery.settings(
                domain: "example.org",
                answers: [
                    [rec(0, 0, 993, "imap.example.org")], [], [], [rec(0, 0, 587, "mx.provider.net")]
                ]))
        #expect(s.smtp == ServerEndpoint(host: "mx.provider.net", port: 587, tls: .starttls))
        #expect(s.notes.contains("mx.provider.net is outside example.org; TLS checks the certificate against mx.provider.net."))
        #expect(
            SRVDiscovery.names(domain: "example.org") == [
                "_imaps._tcp.example.org", "_imap._tcp.example.org",
                "_submissions._tcp.example.org", "_submission._tcp.example.org"
            ])
    }

    @Test(
        arguments: [
            ("mail.example.org", false, "mail.example.org", 993, TLSMode.implicit),
            ("mail.example.org:143", false, "mail.example.org", 143, .starttls),
            ("Mail.Example.org", true, "mail.example.org", 465, .implicit),
            ("mail.example.org:587", true, "mail.example.org", 587, .starttls),
            ("127.0.0.1:1143", false, "127.0.0.1", 1143, .starttls),
            ("[::1]:993", false, "::1", 993, .implicit)
        ] as [(String, Bool, String, Int, TLSMode)])
    func endpointFlags(text: String, smtp: Bool, host: String, port: Int, tls: TLSMode) {
        #expect(ServerEndpoint.parse(text, smtp: smtp) == ServerEndpoint(host: host, port: port, tls: tls))
    }

    @Test(arguments: [
        "", "mail example.org", "mail.example.org:0", "mail.example.org:70000", "a:b:c", "mail/x", "-bad.org",
        "[::1", "[zz]:1", "mail.example.org:", "\u{1B}[2J"
    ])
    func badEndpointFlags(text: String) {
        #expect(ServerEndpoint.parse(text, smtp: false) == nil)
    }

    @Test(arguments: [
        ("me@example.org", true), ("a@b", true), ("no-at", false), ("@example.org", false), ("me@", false),
        ("me @example.org", false), ("me@exa\u{1B}mple.org", false), ("me@example.org\n", false), ("me\u{85}@x.org", false)
    ])
    func addresses(address: String, ok: Bool) {
        #expect((StarterConfig.addressProblem(address) == nil) == ok)
    }

    @Test func autoconfigURLs() {
        #expect(
            AutoconfigLookup.urls(address: "a+b&c@example.org", domain: "example.org", base: nil) == [
                "https://autoconfig.example.org/mail/config-v1.1.xml?emailaddress=a%2Bb%26c@example.org",
                "https://example.org/.well-known/autoconfig/mail/config-v1.1.xml"
            ])
        #expect(
            AutoconfigLookup.urls(address: "me@example.org", domain: "example.org", base: "http://127.0.0.1:8080/").first
                == "http://127.0.0.1:8080/mail/config-v1.1.xml?emailaddress=me@example.org")
    }

    @Test(
        arguments: [
            (
                "https://autoconfig.example.org/mail/config-v1.1.xml?emailaddress=a@b", true, "autoconfig.example.org", 443,
                "/mail/config-v1.1.xml?emailaddress=a@b"
            ),
            ("http://127.0.0.1:8080", false, "127.0.0.1", 8080, "/"),
            ("http://[::1]:81/x", false, "::1", 81, "/x"),
            ("https://Example.ORG?q", true, "example.org", 443, "/?q")
        ] as [(String, Bool, String, Int, String)])
    func webAddresses(text: String, secure: Bool, host: String, port: Int, target: String) throws {
        let url = try #require(WebAddress(text))
        #expect(url.secure == secure && url.host == host && url.port == port && url.target == target)
    }

    @Test(arguments: [
        "ftp://example.org/", "https://exa mple.org/", "https://example.org:0/", "https://ex\u{1B}.org/",
        "https://user@example.org/", "https:///x", "http://[::1/"
    ])
    func badWebAddresses(text: String) {
        #expect(WebAddress(text) == nil)
    }
}
