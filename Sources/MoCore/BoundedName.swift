/// The one rule that keeps a file name derived from a server's name (a mailbox level, a state file key)
/// within what the file system allows, whatever the length of that name (NAME_MAX is 255 bytes).
///
/// A name of at most `limit` bytes is kept as it is, so names that always fitted keep their files.
/// A longer one becomes a prefix of at most `keptBytes` bytes (cut where it splits neither a UTF-8
/// sequence nor a `%XX` escape), the marker `%%`, and 32 hex digits of the SHA-256 of the whole name:
/// at most 194 bytes, deterministic, and distinct for distinct names (128 bits of hash).
///
/// Callers escape every `%` of an unshortened name as `%XX`, so `%%` never occurs in one: a shortened
/// name can never equal an unshortened one. It cannot be reversed by itself; a caller that must go back
/// keeps the full name elsewhere (the state file holds the mailbox name).
public enum BoundedName {
    public static let marker: [UInt8] = Array("%%".utf8)
    static let keptBytes = 160
    static let hashDigits = 32

    /// `name` if it has at most `limit` bytes, else its shortened form.
    public static func bounded(_ name: [UInt8], limit: Int) -> [UInt8] {
        guard name.count > limit else { return name }
        var cut = min(keptBytes, name.count)
        while cut > 0 && cut < name.count && name[cut] & 0xC0 == 0x80 { cut -= 1 }  // never inside a UTF-8 sequence
        if let percent = name[max(0, cut - 2)..<cut].lastIndex(of: UInt8(ascii: "%")) { cut = percent }  // nor a %XX
        return Array(name[..<cut]) + marker + Array(SHA256.hex(name).utf8.prefix(hashDigits))
    }

    /// Whether `name` was shortened (holds the marker).
    public static func isShortened(_ name: some Collection<UInt8>) -> Bool {
        var previous: UInt8 = 0
        for b in name {
            if b == UInt8(ascii: "%") && previous == UInt8(ascii: "%") { return true }
            previous = b
        }
        return false
    }
}
