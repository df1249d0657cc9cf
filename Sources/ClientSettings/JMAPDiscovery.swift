import MoCore
import MoNet

/// Where an address's JMAP session resource is when its `[jmap]` table gives no `url` (RFC 8620 §2.2): the
/// domain's SRV record `_jmap._tcp` names the host and port, whose `/.well-known/jmap` it is; without one
/// (no record, or no answer from DNS), `https://DOMAIN/.well-known/jmap`.
///
/// | SRV answer                               | session resource                         | reason       |
/// |------------------------------------------|------------------------------------------|--------------|
/// | records with a usable target inside DOMAIN | `https://TARGET[:PORT]/.well-known/jmap` of the lowest priority, highest weight | `.srv` |
/// | none, only "." or port 0, targets outside DOMAIN, or no answer | `https://DOMAIN/.well-known/jmap` | `.domain` |
///
/// The record is not signature-checked, and the session found gets the account's credentials: a target
/// outside the domain (a spoofed answer, or a domain hosted elsewhere) is not followed (RFC 6186 §6's
/// warning); such an account names its `url`. TLS checks the target's certificate against its name.
public enum JMAPDiscovery {
    public enum Reason: Sendable, Equatable {
        case srv, domain
    }

    /// The session resource for `domain` from the answers to `_jmap._tcp.DOMAIN` (nil: DNS failed). Pure.
    public static func sessionURL(domain: String, records: [SRVRecord]?) -> (url: String, reason: Reason) {
        let domain = domain.lowercased()
        let usable = (records ?? []).filter { r in
            let target = r.target.lowercased()
            return r.offersService && (target == domain || target.hasSuffix("." + domain))
        }
        guard let best = usable.min(by: { $0.priority != $1.priority ? $0.priority < $1.priority : $0.weight > $1.weight }) else {
            return ("https://\(domain)/.well-known/jmap", .domain)
        }
        let port = best.port == 443 ? "" : ":\(best.port)"
        return ("https://\(best.target)\(port)/.well-known/jmap", .srv)
    }

    /// Asks `resolver` for `_jmap._tcp.DOMAIN` and answers as `sessionURL(domain:records:)`.
    public static func lookup(domain: String, resolver: DNSResolver) -> (url: String, reason: Reason) {
        sessionURL(domain: domain, records: try? resolver.srv("_jmap._tcp." + domain))
    }
}
