#if canImport(Glibc)
    import Glibc
#endif
import MailMessage

/// Header chores a sendmail-compatible sender does before handing a message on: complete Date and
/// Message-ID, read recipients from To/Cc/Bcc (`-t`), strip Bcc.
///
/// Each function reads only the header section and returns a new message built with one copy; the body
/// bytes are never inspected or changed.
public enum OutgoingMessage {
    /// The message with `Date:` and `Message-ID:` appended to its header when missing.
    ///
    /// The Message-ID's domain is that of the first From address, else `fallbackDomain`. Inserted lines
    /// use the message's own line ends (`HeaderEdit`).
    public static func addingMissingDateAndMessageID(
        _ message: [UInt8], fallbackDomain: String,
        now: Int = Int(time(nil))
    ) -> [UInt8] {
        let header = HeaderEdit.fields(of: message)
        var added: [String] = []
        if header.first("Date") == nil { added.append("Date: " + rfc5322Date(now)) }
        if header.first("Message-ID") == nil {
            let from = header.first("From").map { addressSpecs(in: $0.rawValue) }?.first
            let domain = from.flatMap(domainOf) ?? fallbackDomain
            added.append("Message-ID: " + newMessageID(domain: domain, now: now))
        }
        return HeaderEdit.adding(added, to: message)
    }

    /// The addresses in every To, Cc and Bcc field, in order, without duplicates (sendmail `-t`).
    public static func recipients(fromHeadersOf message: [UInt8]) -> [String] {
        unique(addresses(in: ["to", "cc", "bcc"], of: message))
    }

    /// The addresses of the Bcc fields.
    public static func bccRecipients(of message: [UInt8]) -> [String] {
        addresses(in: ["bcc"], of: message)
    }

    /// The message without its Bcc and Resent-Bcc fields, continuation lines included.
    public static func removingBcc(_ message: [UInt8]) -> [UInt8] {
        HeaderEdit.removing(["bcc", "resent-bcc"], from: message)
    }

    /// The message without the fields of these names, continuation lines included.
    public static func removing(fields names: Set<String>, from message: [UInt8]) -> [UInt8] {
        HeaderEdit.removing(names, from: message)
    }

    /// The addr-specs of the fields of these (lowercase) names, in order.
    static func addresses(in names: Set<String>, of message: [UInt8]) -> [String] {
        HeaderEdit.fields(of: message).fields.filter { names.contains($0.name.lowercased()) }.flatMap { addressSpecs(in: $0.rawValue) }
    }

    /// The addr-specs of an address-list value (`MailMessage.AddressParser`), in order, without duplicates.
    public static func addressSpecs(in value: [UInt8]) -> [String] {
        unique(AddressParser.parse(value, keepingQuotes: true).map(\.address).filter { !$0.isEmpty })
    }

    /// The addr-specs of an address-list value given as text.
    public static func addressSpecs(in value: String) -> [String] { addressSpecs(in: Array(value.utf8)) }

    static func unique(_ addresses: [String]) -> [String] {
        var seen: Set<String> = []
        return addresses.filter { seen.insert($0.lowercased()).inserted }
    }

    /// A new `<unique@domain>`: time in base 36, then 96 random bits.
    public static func newMessageID(domain: String, now: Int = Int(time(nil))) -> String {
        var rng = SystemRandomNumberGenerator()
        let random = String(rng.next() as UInt64, radix: 36) + String(UInt32.random(in: .min ... .max, using: &rng), radix: 36)
        return "<\(String(now, radix: 36)).\(random)@\(domain)>"
    }

    /// RFC 5322 §3.3 date in local time: `Tue, 3 Mar 2026 10:02:03 +0100`.
    public static func rfc5322Date(_ seconds: Int) -> String {
        var t = time_t(seconds)
        var parts = tm()
        localtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let offset = parts.tm_gmtoff / 60
        let sign = offset < 0 ? "-" : "+"
        let zone = sign + two(Int32(abs(offset) / 60)) + two(Int32(abs(offset) % 60))
        return "\(days[Int(parts.tm_wday)]), \(parts.tm_mday) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) \(zone)"
    }

    static func domainOf(_ address: String) -> String? {
        guard let at = address.lastIndex(of: "@") else { return nil }
        let domain = address[address.index(after: at)...]
        return domain.isEmpty ? nil : String(domain)
    }
}
