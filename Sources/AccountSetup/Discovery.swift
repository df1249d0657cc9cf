import MoCore
import MoNet
import MoHTTP

/// Thunderbird's autoconfig files for a domain, fetched over verified https (or from `MO_AUTOCONFIG_URL`,
/// a base such as `http://127.0.0.1:PORT` for tests; plain http only to loopback).
public enum AutoconfigLookup {
    /// Where to look, in order: the domain's autoconfig host, then its well-known path.
    public static func urls(address: String, domain: String, base: String?) -> [String] {
        let query = "?emailaddress=" + PercentEscape.urlQueryValue(address)
        if let base, !base.isEmpty {
            let b = base.hasSuffix("/") ? String(base.dropLast()) : base
            return [b + "/mail/config-v1.1.xml" + query, b + "/.well-known/autoconfig/mail/config-v1.1.xml"]
        }
        return [
            "https://autoconfig.\(domain)/mail/config-v1.1.xml" + query,
            "https://\(domain)/.well-known/autoconfig/mail/config-v1.1.xml"
        ]
    }

    /// The first usable file's settings; the failures on the way as one-line notes.
    public static func lookup(address: String, domain: String, base: String?, timeout: Double = 10) -> (
        settings: MailSettings?, problems: [String]
    ) {
        var problems: [String] = []
        for text in urls(address: address, domain: domain, base: base) {
            guard let url = WebAddress(text) else { problems.append("autoconfig: cannot use \(text)"); continue }
            do {
                let (status, body) = try HTTPClient.send(
                    "GET", url, headers: [("Accept", "application/xml, text/xml")], maxBody: AutoconfigXML.maxBytes,
                    timeout: timeout)
                guard status == 200 else { problems.append("autoconfig: \(text): HTTP \(status)"); continue }
                let servers = try AutoconfigXML.parse(body)
                let shown = text.split(separator: "?").first.map(String.init) ?? text
                if let settings = AutoconfigXML.settings(
                    incoming: servers.incoming, outgoing: servers.outgoing,
                    address: address, source: "the autoconfig file \(shown)")
                {
                    return (settings, problems)
                }
                problems.append("autoconfig: \(text): no IMAP server with TLS in it")
            } catch {
                problems.append("autoconfig: \(error.description)")
            }
        }
        return (nil, problems)
    }
}

/// How `mo-sync init` finds an address's servers: the known providers, then DNS SRV records (RFC 6186),
/// then the autoconfig files; the first that names an IMAP server wins.
public struct Discovery: Sendable {
    public var environment: [String: String]
    /// No network: only the table of known providers.
    public var offline = false

    public init(environment: [String: String], offline: Bool = false) {
        self.environment = environment
        self.offline = offline
    }

    /// The settings found (nil: none), and one line per lookup that failed or found nothing.
    public func find(address: String) -> (settings: MailSettings?, log: [String]) {
        guard let domain = mailDomain(of: address) else { return (nil, []) }
        if let provider = KnownProviders.provider(forDomain: domain) { return (provider.settings, []) }
        if offline { return (nil, ["\(domain) is not a known provider, and --offline asks nothing of the network"]) }
        var log: [String] = []
        let srv = SRVDiscovery.lookup(domain: domain, resolver: DNSResolver.system(environment: environment))
        if let found = srv.settings { return (found, log) }
        log += srv.problems
        log.append("DNS: no SRV record names an IMAP server for \(domain)")
        let auto = AutoconfigLookup.lookup(address: address, domain: domain, base: environment["MO_AUTOCONFIG_URL"])
        log += auto.problems
        return (auto.settings, log)
    }
}
