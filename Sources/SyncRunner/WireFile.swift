import MailMessage
import Maildir
import MoCore
import SyncEngine

/// A Maildir file uploaded (`ServerStore.upload`: an APPEND literal) without holding it in memory. One
/// pass over an open descriptor measures what the literal needs first: the wire size (each bare LF gains
/// a CR) and the pairing key (`MessageKeys.key(wire:)`: the Message-ID of the header block, else a SHA-1
/// of all wire bytes); a second pass streams the CRLF form. Memory: a chunk and the header block, whatever the message's size.
///
/// Both passes read the same descriptor, so a rename in between (a flag change by a mail client) does not
/// matter. A file whose size changes in between (Maildir files are never rewritten in place) fails the
/// upload before more bytes than announced are sent (IMAP then closes the connection); a
/// same-size rewrite is not detected. A file without an empty line is all header, held whole.
final class WireFile {
    static let defaultChunkSize = 1 << 18

    var path: String { file.path }
    /// The open file (Maildir reads it; both passes go through its one descriptor).
    private let file: MessageFile
    /// Bytes read at a time (at most: a small file gets a buffer of its size).
    private let chunkSize: Int
    /// The literal's size: the file's bytes in CRLF form.
    let wireSize: Int
    /// The pairing key (its `wireSize` leaves out foreign headers with `dropForeignHeaders`).
    let key: MessageKey
    /// With `dropForeignHeaders`: the file had such lines (they are not in `key`).
    let hadForeignHeaders: Bool
    /// The server size a placeholder names (`Maildir.Placeholder`, `max-size`); nil: a message. A
    /// placeholder's key has that size, so it pairs with its server message; it is never uploaded.
    let placeholderSize: Int?

    /// `dropForeignHeaders`: the key is that of the file without `MessageKeys.foreignHeaders` lines, as
    /// `MessageKeys.local` pairs files; what `stream` sends is always the file as it is.
    init(path: String, dropForeignHeaders: Bool = false, chunkSize: Int = WireFile.defaultChunkSize) throws {
        file = try MessageFile(path: path)
        let fileSize = file.size ?? chunkSize
        let bufferSize = max(1, min(chunkSize, fileSize + 1))
        self.chunkSize = bufferSize
        var keySize = 0, dropped = 0
        var hash = SHA1()
        var id: String?
        var header: [UInt8] = []  // file bytes of the header block, until its end is found
        var inHeader = true
        var converter = LFToCRLF()
        var wire: [UInt8] = []
        var tainted = false
        var placeholder: Int?
        func feed(_ bytes: ArraySlice<UInt8>) {
            wire.removeAll(keepingCapacity: true)
            converter.convert(bytes, into: &wire)
            keySize += wire.count
            if id == nil { hash.update(wire) }
        }
        // The header block ends at its first empty line (`MessageKeys.headerEnd`, as for foreign headers).
        func headerDone(end: Int) {
            placeholder = Placeholder.size(firstBytes: header.prefix(40))
            var head = Array(header[..<end])
            if dropForeignHeaders {
                let clean = MessageKeys.withoutForeignHeaders(head)
                if clean.count != head.count {
                    tainted = true
                    // Whole lines go (each ends in LF), so the wire forms differ by those lines' wire bytes.
                    dropped = LineEndings.toCRLF(head).count - LineEndings.toCRLF(clean).count
                    head = clean
                }
            }
            id = MessageKeys.messageID(headerBytes: LineEndings.toCRLF(head)[...])
            feed(head[...])
            feed(header[end...])
            header = []
            inHeader = false
        }
        try file.forEachChunk(of: bufferSize) { chunk in
            guard inHeader else { return feed(chunk[...]) }
            let from = max(0, header.count - 2)
            header.append(contentsOf: chunk)
            if let end = MessageKeys.headerEnd(header, from: from) { headerDone(end: end) }
        }
        if inHeader { headerDone(end: header.count) }  // no empty line: all header
        wireSize = keySize + dropped
        key = MessageKey(messageID: id ?? "sha1:" + hash.finalizeHex(), wireSize: placeholder ?? keySize)
        hadForeignHeaders = tainted
        placeholderSize = placeholder
    }

    /// Hands the wire form to `sink` chunk by chunk: exactly `wireSize` bytes in all, or an error before
    /// the chunk that would exceed it (or at the end, when there were fewer).
    func stream(_ sink: ([UInt8]) throws -> Void) throws {
        var sent = 0
        var converter = LFToCRLF()
        var wire: [UInt8] = []
        try file.forEachChunk(of: chunkSize) { chunk in
            wire.removeAll(keepingCapacity: true)
            converter.convert(chunk[...], into: &wire)
            guard sent + wire.count <= wireSize else { throw Self.changed(path) }
            try sink(wire)
            sent += wire.count
        }
        guard sent == wireSize else { throw Self.changed(path) }
    }

    private static func changed(_ path: String) -> MaildirError {
        MaildirError("cannot upload", path, detail: "the file changed while it was being sent")
    }
}
