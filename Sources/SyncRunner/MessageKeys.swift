import MailMessage
import MoCore
import SyncEngine

/// The identity of a message across sides without a saved pair: normalised Message-ID plus wire size; for
/// a message without a Message-ID, a SHA-1 of its wire bytes stands in (`sha1:<hex>`), so two different
/// ID-less messages of equal size are never taken for one another.
enum MessageKeys {
    /// The key of a message in wire form (CRLF line ends).
    static func key(wire: [UInt8]) -> MessageKey {
        if let id = messageID(headerBytes: wire[...]) { return MessageKey(messageID: id, wireSize: wire.count) }
        return MessageKey(messageID: "sha1:" + SHA1.hexDigest(wire), wireSize: wire.count)
    }

    static func messageID(headerBytes: ArraySlice<UInt8>) -> String? {
        let header = HeaderBlock.parse(headerBytes)
        guard let field = header.first("Message-ID") else { return nil }
        let id = MessageID.fromHeader(String(decoding: field.unfoldedValue, as: UTF8.self))
        return (id?.isEmpty ?? true) ? nil : id
    }

    /// Keys of local files (streamed, `WireFile`: the wire size counts the CR each bare LF gains). Headers
    /// other syncers add on download (mbsync's `X-TUID`, OfflineIMAP's `X-OfflineIMAP`) are left out of the
    /// key, so a Maildir they made pairs with the server's messages; `tainted` lists the files carrying them.
    static func local(_ files: [PreparedFolder.LocalFile]) throws -> [String: MessageKey] {
        try localWithTaint(files).keys
    }

    static func localWithTaint(_ files: [PreparedFolder.LocalFile]) throws -> (keys: [String: MessageKey], tainted: Set<String>) {
        var keys: [String: MessageKey] = [:]
        var tainted = Set<String>()
        for f in files {
            guard let file = try? WireFile(path: f.path, dropForeignHeaders: true) else { continue }
            if file.hadForeignHeaders { tainted.insert(f.unique) }
            keys[f.unique] = file.key
        }
        return (keys, tainted)
    }

    /// Header lines other syncers add to messages they download. Never sent by servers.
    static let foreignHeaders = ["x-tuid:", "x-offlineimap:"]

    /// The message without `foreignHeaders` lines in its header block (LF or CRLF line ends).
    static func withoutForeignHeaders(_ bytes: [UInt8]) -> [UInt8] {
        let body = headerEnd(bytes, from: 0) ?? bytes.count
        var out: [UInt8] = []
        var i = 0
        var changed = false
        while i < body {
            let end = bytes[i..<body].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? body
            let line = bytes[i..<end]
            let lower = line.prefix(16).map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
            if foreignHeaders.contains(where: { lower.starts(with: Array($0.utf8)) }) {
                changed = true
            } else {
                out.append(contentsOf: line)
            }
            i = end
        }
        guard changed else { return bytes }
        out.append(contentsOf: bytes[body...])
        return out
    }

    /// Where the body starts: just past the first empty line (LF or CRLF) of the header block; 0 when the
    /// message starts with one, nil without one. The search starts at `from`, which must be a line start or
    /// within two bytes before the bytes not searched yet (`WireFile` searches as chunks arrive).
    static func headerEnd(_ bytes: [UInt8], from: Int) -> Int? {
        if bytes.first == UInt8(ascii: "\n") { return 0 }
        if bytes.count >= 2, bytes[0] == UInt8(ascii: "\r"), bytes[1] == UInt8(ascii: "\n") { return 0 }
        var i = from
        while i + 1 < bytes.count {
            if bytes[i] == UInt8(ascii: "\n") {
                if bytes[i + 1] == UInt8(ascii: "\n") { return i + 1 }
                if bytes[i + 1] == UInt8(ascii: "\r"), i + 2 < bytes.count, bytes[i + 2] == UInt8(ascii: "\n") { return i + 1 }
            }
            i += 1
        }
        return nil
    }
}

extension MessageKey {
    var isContentHash: Bool { messageID.hasPrefix("sha1:") }
}
