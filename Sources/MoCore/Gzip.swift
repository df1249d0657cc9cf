import CZlib

/// gzip (RFC 1952) through zlib: the one home for compressed bytes. notmuch reads mail files that were
/// gzipped in place (`msg.gz`) and writes and reads gzipped dumps, so mo does too.
///
/// - A gzip stream starts with 1f 8b; no RFC 5322 message does (its first byte is a header name's), so
///   the content decides, not the file's name, as zlib's `gzopen` does for notmuch.
/// - Members written one after another read as one stream (RFC 1952 §2.2).
/// - Decompression stops at `limit` bytes of output (256 MiB unless a caller says otherwise): a small file
///   cannot become an unbounded allocation on every parser thread.
public enum Gzip {
    public static func isCompressed(_ bytes: [UInt8]) -> Bool { bytes.count >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b }

    /// Whether the file at `path` starts as a gzip stream (its first two bytes read).
    public static func isCompressedFile(_ path: String) -> Bool {
        guard case .success(let reader) = ChunkReader.open(path, chunk: 2), case .success(let head?) = reader.next() else { return false }
        return isCompressed(head)
    }

    /// `bytes` uncompressed when they are a gzip stream, else as they are (a dump, a message).
    public static func uncompressedIfCompressed(_ bytes: [UInt8], limit: Int = 1 << 28) throws(Failure) -> [UInt8] {
        isCompressed(bytes) ? try decompress(bytes, limit: limit) : bytes
    }

    public struct Failure: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The bytes a gzip stream holds.
    public static func decompress(_ bytes: [UInt8], limit: Int = 1 << 28) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        guard bytes.count < Int(UInt32.max) else { throw Failure(description: "too large") }
        // 15 + 16: a gzip header and trailer, not zlib's.
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw Failure(description: "zlib cannot start")
        }
        defer { inflateEnd(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var input = bytes
        var failure: Failure?
        input.withUnsafeMutableBufferPointer { inp in
            stream.next_in = inp.baseAddress
            stream.avail_in = UInt32(inp.count)
            while failure == nil {
                let status = chunk.withUnsafeMutableBufferPointer { buf in
                    stream.next_out = buf.baseAddress
                    stream.avail_out = UInt32(buf.count)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                out += chunk[0..<(chunk.count - Int(stream.avail_out))]
                if out.count > limit { failure = Failure(description: "more than \(limit) bytes uncompressed") }
                switch status {
                case Z_STREAM_END:
                    // Another member may follow; zeros after the last are padding, as gzip(1) reads them.
                    guard stream.avail_in > 0 else { return }
                    let consumed = inp.count - Int(stream.avail_in)
                    if inp[consumed...].allSatisfy({ $0 == 0 }) { return }
                    if inflateReset(&stream) != Z_OK { failure = Failure(description: "zlib cannot restart") }
                case Z_OK: if stream.avail_in == 0 && stream.avail_out > 0 { failure = Failure(description: "truncated gzip data") }
                case Z_BUF_ERROR: failure = Failure(description: "truncated gzip data")
                default: failure = Failure(description: "corrupt gzip data")
                }
            }
        }
        if let failure { throw failure }
        return out
    }

    /// `bytes` as one gzip member (default compression).
    public static func compress(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        var stream = z_stream()
        guard bytes.count < Int(UInt32.max),
            deflateInit2_(
                &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)
            )
                == Z_OK
        else { throw Failure(description: "zlib cannot start") }
        defer { deflateEnd(&stream) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var input = bytes
        input.withUnsafeMutableBufferPointer { inp in
            stream.next_in = inp.baseAddress
            stream.avail_in = UInt32(inp.count)
            var status = Z_OK
            while status != Z_STREAM_END {
                status = chunk.withUnsafeMutableBufferPointer { buf in
                    stream.next_out = buf.baseAddress
                    stream.avail_out = UInt32(buf.count)
                    return deflate(&stream, Z_FINISH)
                }
                out += chunk[0..<(chunk.count - Int(stream.avail_out))]
            }
        }
        return out
    }
}
