#if canImport(Glibc)
    import Glibc
#endif
import MoCore

/// A message larger than `max-size` stands in the Maildir as a placeholder: one header line of ours with
/// the message's size on the server, the message's own header section, and a short body saying how to
/// fetch the message:
///
///     X-Mo-Placeholder: 5242880
///     Return-Path: <ann@example.org>
///     …(the server's header section, LF line ends, then its blank line)
///
///     [mo-sync: this message is 5.0 MB, over max-size (2.0 MB); only its header is here.
///     Fetch it with "mo-sync fetch FILE", or flag it and sync.]
///
/// Invariants:
/// - The first line marks it, so a reader looks at a file's first bytes only (`size(ofFile:)`).
/// - The size is the message's wire size (RFC822.SIZE): the placeholder's key (Message-ID, size) is the
///   server message's, so after lost state it pairs again by key; it is never uploaded.
/// - It is filled in place (`fill`): the message takes the placeholder's path, name and flags at once,
///   so a mail client's open mailbox stays valid, and nothing else is ever overwritten.
public enum Placeholder {
    public static let fieldName = "X-Mo-Placeholder"
    private static let prefix = Array((fieldName + ": ").utf8)

    /// The placeholder's bytes for a message of `size` wire bytes whose header section (as the server
    /// sends it, CRLF or LF) is `header`; `limit`: the `max-size` it is over.
    public static func render(header: [UInt8], size: Int, limit: Int) -> [UInt8] {
        var out = prefix + Array("\(size)\n".utf8)
        var converter = CRLFToLF()
        var section: [UInt8] = []
        converter.convert(header, into: &section)
        converter.finish(into: &section)
        // The section ends with its blank line; one made sure of, for a server that sent it without.
        while section.last == UInt8(ascii: "\n") { section.removeLast() }
        out += section + [UInt8(ascii: "\n"), UInt8(ascii: "\n")]
        out += Array(
            ("[mo-sync: this message is \(SizeText.format(size)), over max-size (\(SizeText.format(limit))); only its header is here.\n"
                + "Fetch it with \"mo-sync fetch FILE\", or flag it and sync.]\n").utf8)
        return out
    }

    /// The server size a placeholder names, read from a file's first bytes; nil: not a placeholder.
    public static func size<Bytes: Collection<UInt8>>(firstBytes: Bytes) -> Int? {
        guard firstBytes.starts(with: prefix) else { return nil }
        var n = 0, digits = 0
        for b in firstBytes.dropFirst(prefix.count) {
            if b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") { break }
            guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9"), digits < 15 else { return nil }
            n = n * 10 + Int(b - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? n : nil
    }

    /// `size(firstBytes:)` of the file at `path` (its first 40 bytes); nil when it cannot be read.
    public static func size(ofFile path: String) -> Int? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 40)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 40) }
        return n > 0 ? size(firstBytes: buffer.prefix(n)) : nil
    }

    /// What `fill` did.
    public enum Filled: Equatable, Sendable {
        /// The message is at the path; the placeholder is gone.
        case filled
        /// Nothing at the path any more (renamed or removed meanwhile): look for the file again.
        case moved
        /// The file at the path is no placeholder (filled already): nothing changed.
        case notAPlaceholder
    }

    /// Puts the sealed message `pending` at `path`, a placeholder of its folder, under the same name:
    /// the two names are exchanged atomically and the placeholder, now under the tmp name, removed, then
    /// the directory synced. A file system that cannot exchange names (renameat2 RENAME_EXCHANGE: NFS,
    /// some FUSE) gets an error and keeps the placeholder: a rename over it could bring back a file a
    /// mail client renamed or removed meanwhile. `pending` is aborted in the end.
    public static func fill(_ path: String, with pending: PendingDelivery) throws(MaildirError) -> Filled {
        guard size(ofFile: path) != nil else {
            pending.abort()
            return access(path, F_OK) == 0 ? .notAPlaceholder : .moved
        }
        try pending.seal()
        switch renameExchange(pending.tmpPath, path) {
        case nil:
            pending.abort()  // the tmp name holds the placeholder now
        case ENOENT?:
            pending.abort()
            return .moved
        case let e? where e == EINVAL || e == ENOSYS || e == EOPNOTSUPP:
            pending.abort()
            throw MaildirError(
                "cannot replace the placeholder", path, detail: "the file system cannot exchange two names atomically (RENAME_EXCHANGE)")
        case let e?:
            pending.abort()
            throw MaildirError("cannot replace the placeholder", path, code: e)
        }
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        try fsyncDirectory(directory)
        return .filled
    }
}
