import Glibc
import IMAPClient
import MailMessage
import Maildir
import MoCore
import MoNet
import SyncEngine

/// A Maildir file sent as an APPEND literal without holding it in memory. One pass over an open descriptor
/// measures what the literal needs first: the wire size (each bare LF gains a CR) and the pairing key
/// (`MessageKeys.key(wire:)`: the Message-ID of the header block, else a SHA-1 of all wire bytes); a second
/// pass streams the CRLF form. Memory: a chunk and the header block, whatever the message's size.
///
/// Both passes read the same descriptor, so a rename in between (a flag change by a mail client) does not
/// matter. A file whose bytes change in between (Maildir files are never rewritten in place) fails the
/// upload before more bytes than announced are sent.
final class WireFile {
    /// Bytes read at a time (a variable for tests of chunk boundaries).
    nonisolated(unsafe) static var chunkSize = 1 << 18

    let path: String
    private let fd: Int32
    /// The literal's size: the file's bytes in CRLF form.
    let wireSize: Int
    let key: MessageKey

    init(path: String) throws {
        self.path = path
        fd = openRetrying(path, O_RDONLY)
        guard fd >= 0 else { throw MaildirError("cannot read", path, code: -fd) }
        var size = 0
        var header: [UInt8] = []  // wire bytes up to and including the blank line
        var headerDone = false
        var hash = SHA1()
        var id: String?
        do {
            try Self.pass(fd, path) { wire in
                size += wire.count
                if !headerDone {
                    let from = max(0, header.count - 3)
                    header.append(contentsOf: wire)
                    // A message that starts with a blank line has no header fields.
                    if let end = header.starts(with: [13, 10]) ? 0 : Self.blankLine(in: header, from: from) {
                        header.removeSubrange(end...)
                        headerDone = true
                        id = MessageKeys.messageID(headerBytes: header[...])
                        header = []
                    }
                }
                if id == nil { hash.update(wire) }
            }
        } catch {
            Glibc.close(fd)
            throw error
        }
        if !headerDone { id = MessageKeys.messageID(headerBytes: header[...]) }  // no blank line: all header
        wireSize = size
        key = MessageKey(messageID: id ?? "sha1:" + hash.finalizeHex(), wireSize: size)
    }

    deinit { Glibc.close(fd) }

    /// Writes the wire form; exactly `wireSize` bytes or an error.
    func write(to connection: Connection) throws {
        try stream { wire in try wire.withUnsafeBytes { try connection.write($0) } }
    }

    /// Hands the wire form to `sink` chunk by chunk: exactly `wireSize` bytes in all, or an error before
    /// the chunk that would exceed it (or at the end, when there were fewer).
    func stream(_ sink: ([UInt8]) throws -> Void) throws {
        var sent = 0
        try Self.pass(fd, path) { wire in
            guard sent + wire.count <= wireSize else { throw Self.changed(path) }
            try sink(wire)
            sent += wire.count
        }
        guard sent == wireSize else { throw Self.changed(path) }
    }

    private static func changed(_ path: String) -> MaildirError {
        MaildirError("cannot upload", path, detail: "the file changed while it was being sent")
    }

    /// Reads the file from its start in chunks and hands each one's CRLF form to `body`.
    private static func pass(_ fd: Int32, _ path: String, _ body: ([UInt8]) throws -> Void) throws {
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var wire: [UInt8] = []
        wire.reserveCapacity(chunkSize + chunkSize / 8)
        var offset: off_t = 0
        var previous: UInt8 = 0
        while true {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, chunkSize, offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MaildirError("cannot read", path, code: errno)
            }
            if n == 0 { return }
            offset += off_t(n)
            wire.removeAll(keepingCapacity: true)
            for b in buffer[0..<n] {
                if b == 10 && previous != 13 { wire.append(13) }
                wire.append(b)
                previous = b
            }
            try body(wire)
        }
    }

    /// The index just past the first CRLF CRLF at or after `from`.
    static func blankLine(in bytes: [UInt8], from: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var i = from
        while i + 3 < bytes.count {
            if bytes[i] == 13, bytes[i + 1] == 10, bytes[i + 2] == 13, bytes[i + 3] == 10 { return i + 4 }
            i += 1
        }
        return nil
    }
}
