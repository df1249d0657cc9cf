import MailMessage

/// `notmuch address` (notmuch-search.c): the senders and, or, the recipients of the matching messages.
///
/// | `--deduplicate` | printed                                                                         |
/// |-----------------|---------------------------------------------------------------------------------|
/// | `mailbox` (default) | each name and address pair once (addresses compared without case, names with) as it is met; with `count`, all at the end, with their counts |
/// | `no`            | every mailbox as it is met                                                      |
/// | `address`       | per address (without case), its most frequent name and address pair, at the end, with the total count |
///
/// Text prints `name <address>` (`address` output: the address only), after `count\t` when counting;
/// JSON and sexp print `{name, address, name-addr, count?}`. The end-of-run lists come in the order
/// addresses were first met (notmuch's hash order is unspecified).
public struct NotmuchAddress {
    public enum Dedup: String, CaseIterable, Sendable { case no, mailbox, address }

    public var senders = true
    public var recipients = false
    public var count = false
    public var addressOnly = false
    public var dedup = Dedup.mailbox

    public init() {}

    struct Mailbox {
        var name: String?
        var address: String
        var count = 1
    }

    /// Per address (lower-cased), its distinct name and address pairs in the order met.
    private var seen: [String: [Mailbox]] = [:]
    private var order: [String] = []

    /// The headers of one message, in query order.
    public mutating func add(_ h: HeaderBlock, to p: inout Sprinter) {
        var names = senders ? ["From"] : []
        if recipients { names += ["To", "Cc", "Bcc"] }
        for name in names {
            for a in h.fields(named: name).flatMap({ AddressParser.parse($0.rawValue) }) {
                let m = Mailbox(name: a.name.flatMap { $0.isEmpty ? nil : $0 }, address: a.address)
                if dedup != .no && isDuplicate(m) { continue }
                if count || dedup == .address { continue }
                print(m, to: &p)
            }
        }
    }

    /// What had to wait for the whole run: counts, and the address deduplication.
    public func finish(to p: inout Sprinter) {
        guard count || dedup == .address else { return }
        for key in order {
            let list = seen[key]!
            if dedup == .address {
                var best = list[0]
                for m in list.dropFirst() where m.count > best.count { best = m }
                best.count = list.reduce(0) { $0 + $1.count }
                print(best, to: &p)
            } else {
                for m in list { print(m, to: &p) }
            }
        }
    }

    mutating func isDuplicate(_ m: Mailbox) -> Bool {
        let key = m.address.lowercased()
        guard var list = seen[key] else {
            seen[key] = [m]
            order.append(key)
            return false
        }
        defer { seen[key] = list }
        if let i = list.firstIndex(where: { $0.name == m.name && $0.address == m.address }) {
            list[i].count += 1
            return true
        }
        list.append(m)
        return false
    }

    func print(_ m: Mailbox, to p: inout Sprinter) {
        let nameAddr = ShownHeaders.format(MailAddress(name: m.name, address: m.address))
        if p.isText {
            if count { p.raw("\(m.count)\t") }
            p.string(addressOnly ? m.address : nameAddr)
        } else {
            p.beginMap()
            p.mapKey("name")
            p.string(m.name ?? "")
            p.mapKey("address")
            p.string(m.address)
            p.mapKey("name-addr")
            p.string(nameAddr)
            if count {
                p.mapKey("count")
                p.integer(Int64(m.count))
            }
            p.end()
        }
        p.separator()
    }
}
