#if canImport(Glibc)
    import Glibc
#endif
import ClientSettings
import MoNet
import MoTestSupport
import Testing

/// RFC 8620 §2.2: a JMAP account given only by its address finds its session resource from the domain's
/// SRV record `_jmap._tcp`, else the domain's `/.well-known/jmap`.
@Suite struct JMAPDiscoveryTests {
    static func record(_ target: String, _ port: UInt16, priority: UInt16 = 0, weight: UInt16 = 1) -> SRVRecord {
        SRVRecord(priority: priority, weight: weight, port: port, target: target)
    }

    @Test func theRuleTable() {
        // Lowest priority, then highest weight; port 443 left out.
        let records = [
            Self.record("b.example.org", 443, priority: 10), Self.record("a.example.org", 8443, priority: 5, weight: 1),
            Self.record("c.example.org", 443, priority: 5, weight: 9)
        ]
        #expect(JMAPDiscovery.sessionURL(domain: "example.org", records: records) == ("https://c.example.org/.well-known/jmap", .srv))
        #expect(
            JMAPDiscovery.sessionURL(domain: "example.org", records: [Self.record("a.example.org", 8443)]).url
                == "https://a.example.org:8443/.well-known/jmap")
        // No usable record ("." is "no service", port 0 none, a target outside the domain gets no
        // credentials), or DNS gave no answer: the domain itself.
        for records: [SRVRecord]? in [
            [], [Self.record(".", 443)], [Self.record("a.example.org", 0)], [Self.record("jmap.evil.test", 443)], nil
        ] {
            #expect(JMAPDiscovery.sessionURL(domain: "example.org", records: records) == ("https://example.org/.well-known/jmap", .domain))
        }
    }

    @Test(.enabled(if: LocalDNS.isInstalled || getenv("MO_CI") != nil, "dnsmasq is not installed; CI installs it"))
    func fromAPrivateDnsmasq() throws {
        let dns = try LocalDNS(srv: [.init("_jmap._tcp.example.test", "jmap.example.test", 8443)], localDomain: "test")
        defer { dns.stop() }
        let resolver = DNSResolver(host: "127.0.0.1", port: dns.port)
        #expect(
            JMAPDiscovery.lookup(domain: "example.test", resolver: resolver) == ("https://jmap.example.test:8443/.well-known/jmap", .srv))
        #expect(JMAPDiscovery.lookup(domain: "other.test", resolver: resolver) == ("https://other.test/.well-known/jmap", .domain))
    }
}
