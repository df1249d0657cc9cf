import MoCore
import MoNet
import MoConfig

/// RFC 6186 (with RFC 8314's implicit-TLS names): a domain's IMAP and submission servers from its SRV
/// records `_imaps._tcp`, `_imap._tcp`, `_submissions._tcp`, `_submission._tcp`.
public enum SRVDiscovery {
    /// The four names asked for `domain`, in the order `settings` takes their answers.
    public static func names(domain: String) -> [String] {
        ["_imaps._tcp.", "_imap._tcp.", "_submissions._tcp.", "_submission._tcp."].map { $0 + domain }
    }

    /// The server to use from the records of an implicit-TLS and a STARTTLS service name: the lowest
    /// priority across both (RFC 6186 §3.4), implicit TLS on a tie (RFC 8314 §5.1), then the highest
    /// weight (chosen, not drawn at random: one config is written once). A "." target or port 0 is no
    /// server. Pure.
    static func choose(implicit: [SRVRecord], starttls: [SRVRecord]) -> ServerEndpoint? {
        let candidates = implicit.map { ($0, TLSMode.implicit) } + starttls.map { ($0, TLSMode.starttls) }
        let usable = candidates.filter { $0.0.offersService }
        let best = usable.min { a, b in
            if a.0.priority != b.0.priority { return a.0.priority < b.0.priority }
            if a.1 != b.1 { return a.1 == .implicit }
            return a.0.weight > b.0.weight
        }
        return best.map { ServerEndpoint(host: $0.0.target, port: Int($0.0.port), tls: $0.1) }
    }

    /// Settings from the answers to `names(domain:)` (in that order); nil when there is no IMAP server.
    /// Pure.
    public static func settings(domain: String, answers: [[SRVRecord]]) -> MailSettings? {
        guard answers.count == 4, let imap = choose(implicit: answers[0], starttls: answers[1]) else { return nil }
        let smtp = choose(implicit: answers[2], starttls: answers[3])
        var notes = [
            "These hosts come from DNS records that were not signature-checked: make sure they are your provider's before the first sync."
        ]
        for host in [imap.host] + (smtp.map { [$0.host] } ?? []) where !isWithin(host, domain) {
            notes.append("\(host) is outside \(domain); TLS checks the certificate against \(host).")
        }
        return MailSettings(imap: imap, smtp: smtp, source: "the DNS SRV records of \(domain) (RFC 6186)", notes: notes)
    }

    /// `host` is `domain` or a name under it.
    static func isWithin(_ host: String, _ domain: String) -> Bool {
        host == domain || host.hasSuffix("." + domain)
    }

    /// Asks `resolver` the four names. A lookup that fails counts as no records, and after a network
    /// failure the rest are not asked; the failures are returned as one-line notes.
    public static func lookup(domain: String, resolver: DNSResolver) -> (settings: MailSettings?, problems: [String]) {
        var answers: [[SRVRecord]] = []
        var problems: [String] = []
        for name in names(domain: domain) {
            do { answers.append(try resolver.srv(name)) } catch {
                answers.append([])
                problems.append(error.description)
                // A server that does not answer will not answer the next name either: no waiting 4 times.
                if error.code == .network { break }
            }
        }
        answers += Array(repeating: [], count: 4 - answers.count)
        return (settings(domain: domain, answers: answers), problems)
    }
}
