#if canImport(Glibc)
    import Glibc
#endif
import COpenSSL
import MoCore
import Synchronization

/// A CA bundle file (`SSL_CERT_FILE`: one PEM file of every trusted CA) read lazily, as OpenSSL reads a
/// hashed directory: its certificates are indexed by the hash of their subject, and one is parsed only
/// when a chain asks for that issuer.
///
/// Why: OpenSSL 3 parses a certificate in about 0.25 ms (its key goes through the provider decoders), so
/// loading Debian's bundle of ~150 whole costs 30–40 ms of CPU at every connection, twice a no-op sync's
/// time. mbsync does not pay it. Containers and Nix set `SSL_CERT_FILE`; a desktop rarely does.
///
/// The index reads each block's subject name alone (a DER walk to the TBSCertificate's sixth field, then
/// `d2i_X509_NAME`, which decodes no key) and hashes it with OpenSSL's own `X509_NAME_hash_ex`, the hash
/// the directory lookup uses. A lookup parses the candidates, keeps those whose subject equals the name
/// asked (`X509_NAME_cmp`), and adds them to the store, so OpenSSL's own verification judges them as if
/// the file had been loaded whole. A bundle this does not read exactly (a block that is not a plain
/// `CERTIFICATE`, such as `TRUSTED CERTIFICATE` with its trust settings, or one that does not decode)
/// gives nil, and the caller loads the file whole as before.
final class CABundle: Sendable {
    /// Subject hash → the certificates (DER) with that subject hash.
    let certificates: [UInt: [[UInt8]]]
    let count: Int

    init?(pem: [UInt8]) {
        var index: [UInt: [[UInt8]]] = [:]
        var count = 0
        let begin = Array("-----BEGIN ".utf8), end = Array("-----END CERTIFICATE-----".utf8)
        let label = Array("-----BEGIN CERTIFICATE-----".utf8)
        var at = 0
        while let start = Self.find(begin, in: pem, from: at) {
            guard pem[start...].starts(with: label), let stop = Self.find(end, in: pem, from: start + label.count) else { return nil }
            guard let der = Base64.decode(String(decoding: pem[(start + label.count)..<stop], as: UTF8.self)),
                let hash = Self.subjectHash(der)
            else { return nil }
            index[hash, default: []].append(der)
            count += 1
            at = stop + end.count
        }
        guard count > 0 else { return nil }
        certificates = index
        self.count = count
    }

    /// The hash OpenSSL gives the certificate's subject, nil when the DER does not read as a certificate.
    static func subjectHash(_ der: [UInt8]) -> UInt? {
        var outer = DER(der)
        guard var certificate = outer.sequence(), var tbs = certificate.sequence() else { return nil }
        if tbs.peekTag == 0xA0 { guard tbs.skip() else { return nil } }  // [0] EXPLICIT version
        for _ in 0..<4 { guard tbs.skip() else { return nil } }  // serial, signature, issuer, validity
        guard let subject = tbs.element(), subject.first == 0x30 else { return nil }
        return subject.withUnsafeBufferPointer { buffer -> UInt? in
            var p: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let name = d2i_X509_NAME(nil, &p, buffer.count) else { return nil }
            defer { X509_NAME_free(name) }
            var ok: Int32 = 0
            let hash = X509_NAME_hash_ex(name, nil, nil, &ok)
            return ok == 1 ? hash : nil
        }
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard let first = needle.first, needle.count <= bytes.count else { return nil }
        var i = from
        while i + needle.count <= bytes.count {
            if bytes[i] == first && bytes[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    // MARK: One index per file, kept for the process

    private static let kept = Mutex<[String: (stamp: [Int], bundle: CABundle?)]>([:])

    /// The file's index, made once and again only when the file changed (device, inode, size, time).
    static func shared(_ path: String) -> CABundle? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        let stamp = [Int(st.st_dev), Int(st.st_ino), Int(st.st_size), st.st_mtim.tv_sec, st.st_mtim.tv_nsec]
        if let hit = kept.withLock({ $0[path] }), hit.stamp == stamp { return hit.bundle }
        let bundle = (try? readWholeFile(path).get()).flatMap { CABundle(pem: $0) }
        kept.withLock { $0[path] = (stamp, bundle) }
        return bundle
    }

    // MARK: The lookup

    /// Adds the lazy lookup of this bundle to a context's store. The lookup holds the bundle until OpenSSL
    /// frees it with the store (a bundle `shared` replaced after the file changed stays alive for the
    /// connections that use it).
    func addLookup(to ctx: OpaquePointer) -> Bool {
        guard let store = SSL_CTX_get_cert_store(ctx), let method = Self.method,
            let lookup = X509_STORE_add_lookup(store, method)
        else { return false }
        // A store has one lookup per method: one added before (another bundle) gives its place to this one.
        if let old = X509_LOOKUP_get_method_data(lookup) { Unmanaged<CABundle>.fromOpaque(old).release() }
        X509_LOOKUP_set_method_data(lookup, Unmanaged.passRetained(self).toOpaque())
        return true
    }

    /// Made once; OpenSSL only reads it.
    nonisolated(unsafe) private static let method: OpaquePointer? = {
        guard let m = X509_LOOKUP_meth_new("mo-ca-bundle") else { return nil }
        _ = X509_LOOKUP_meth_set_free(m) { lookup in
            if let lookup, let data = X509_LOOKUP_get_method_data(lookup) { Unmanaged<CABundle>.fromOpaque(data).release() }
        }
        _ = X509_LOOKUP_meth_set_get_by_subject(
            m,
            { lookup, type, name, ret in
                guard type == X509_LU_X509, let lookup, let name, let ret, let data = X509_LOOKUP_get_method_data(lookup),
                    let store = X509_LOOKUP_get_store(lookup)
                else { return 0 }
                let bundle = Unmanaged<CABundle>.fromOpaque(data).takeUnretainedValue()
                var ok: Int32 = 0
                let hash = X509_NAME_hash_ex(name, nil, nil, &ok)
                guard ok == 1 else { return 0 }
                var added = false
                for der in bundle.certificates[hash] ?? [] {
                    der.withUnsafeBufferPointer { buffer in
                        var p: UnsafePointer<UInt8>? = buffer.baseAddress
                        guard let x = d2i_X509(nil, &p, buffer.count) else { return }
                        defer { X509_free(x) }
                        guard X509_NAME_cmp(X509_get_subject_name(x), name) == 0 else { return }
                        if X509_STORE_add_cert(store, x) == 1 { added = true }
                    }
                }
                ERR_clear_error()  // a block that did not decode leaves nothing on the handshake's error queue
                guard added, X509_STORE_lock(store) == 1 else { return 0 }
                defer { X509_STORE_unlock(store) }
                // As OpenSSL's directory lookup answers: the store's own object, lent (the caller takes a
                // reference of its own). `set1` takes one, given back at once: the store holds the certificate.
                guard let object = X509_OBJECT_retrieve_by_subject(X509_STORE_get0_objects(store), X509_LU_X509, name),
                    let certificate = X509_OBJECT_get0_X509(object), X509_OBJECT_set1_X509(ret, certificate) == 1
                else { return 0 }
                X509_free(certificate)
                return 1
            })
        return m
    }()
}

/// Just enough DER (X.690) to walk to a certificate's subject: definite lengths, tags of one byte.
struct DER {
    private let bytes: [UInt8]
    private var at: Int
    private let end: Int

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        at = 0
        end = bytes.count
    }

    private init(_ bytes: [UInt8], at: Int, end: Int) {
        self.bytes = bytes
        self.at = at
        self.end = end
    }

    var peekTag: UInt8? { at < end ? bytes[at] : nil }

    /// The next element's header: where its content starts and ends.
    private func header() -> (content: Int, next: Int)? {
        guard at + 2 <= end else { return nil }
        var i = at + 1
        var length = Int(bytes[i])
        i += 1
        if length & 0x80 != 0 {
            let n = length & 0x7F
            guard (1...4).contains(n), i + n <= end else { return nil }
            length = 0
            for _ in 0..<n {
                length = length << 8 | Int(bytes[i])
                i += 1
            }
        }
        guard length <= end - i else { return nil }
        return (i, i + length)
    }

    mutating func skip() -> Bool {
        guard let h = header() else { return false }
        at = h.next
        return true
    }

    /// The next element whole (tag, length and content).
    mutating func element() -> [UInt8]? {
        guard let h = header() else { return nil }
        defer { at = h.next }
        return Array(bytes[at..<h.next])
    }

    /// The next element's content, when it is a SEQUENCE.
    mutating func sequence() -> DER? {
        guard peekTag == 0x30, let h = header() else { return nil }
        at = h.next
        return DER(bytes, at: h.content, end: h.next)
    }
}
