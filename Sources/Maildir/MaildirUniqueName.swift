#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// Unique parts for new Maildir files, in the classic form
/// `SECONDS.M<usec>P<pid>Q<counter>R<16 hex digits>.<hostname>`.
///
/// Unique across deliveries: within a process the atomic counter differs; across processes on a host
/// the pid differs (and a recycled pid would need the same microsecond and the same 64 random bits);
/// across hosts the hostname differs. Delivery still never overwrites (link fails with EEXIST).
///
/// For the tests that force a name collision (a sibling of `CrashPoint`): with `MO_FAULT_UNIQUE=<name>`,
/// the process's first unique part is `<name>`; the ones after it are fresh as usual.
public enum MaildirUniqueName {
    private static let counter = Atomic<UInt64>(0)
    private static let forcedFirst: String? = {
        guard let raw = getenv("MO_FAULT_UNIQUE") else { return nil }
        let s = String(cString: raw)
        return s.isEmpty ? nil : s
    }()

    /// A fresh unique part. `separator` (the info separator) is escaped in the hostname too.
    public static func generate(separator: Character = ":") -> String {
        let q = counter.wrappingAdd(1, ordering: .relaxed).newValue
        if q == 1, let forcedFirst { return forcedFirst }
        var tv = timeval()
        gettimeofday(&tv, nil)
        var rng = SystemRandomNumberGenerator()
        let random = UInt64.random(in: .min ... .max, using: &rng)
        var hex = String(random, radix: 16)
        hex = String(repeating: "0", count: 16 - hex.count) + hex
        return "\(tv.tv_sec).M\(tv.tv_usec)P\(getpid())Q\(q)R\(hex).\(sanitizedHostname(hostname(), separator: separator))"
    }

    /// The host's name, or "localhost" if it cannot be read.
    static func hostname() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        guard gethostname(&buf, buf.count - 1) == 0 else { return "localhost" }
        let name = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "localhost" : name
    }

    /// Escapes `/` as `\057` and `:` as `\072` (the Maildir convention), and likewise the info
    /// separator, `,` (fields such as `,U=`), `\`, and control or non-ASCII bytes, so the hostname can
    /// never split or confuse the name.
    public static func sanitizedHostname(_ host: String, separator: Character = ":") -> String {
        let sep = separator.utf8.count == 1 ? separator.utf8.first! : UInt8(ascii: ":")
        var out: [UInt8] = []
        for b in host.utf8 {
            if b == UInt8(ascii: "/") || b == UInt8(ascii: ":") || b == sep || b == UInt8(ascii: ",")
                || b == UInt8(ascii: "\\") || b < 0x21 || b > 0x7E
            {
                out.append(UInt8(ascii: "\\"))
                let octal = String(b, radix: 8)
                out.append(contentsOf: (String(repeating: "0", count: 3 - octal.count) + octal).utf8)
            } else {
                out.append(b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
