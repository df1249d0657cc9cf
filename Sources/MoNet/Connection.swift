#if canImport(Glibc)
    import Glibc
#endif
import COpenSSL
import MoCore

/// How a connection verifies the server and which TLS it speaks.
public struct TLSOptions: Sendable, Equatable {
    /// PEM file with extra trusted CAs (the account's `ca-file`); system CAs are always trusted too.
    public var caFile: String?
    /// A CA bundle in place of `SSL_CERT_FILE` (the tests').
    var systemBundle: String?
    public init(caFile: String? = nil) { self.caFile = caFile }
}

/// A blocking TCP connection that may be upgraded to TLS (implicit or STARTTLS), with one timeout for every
/// wait. Not thread-safe: one connection belongs to one thread at a time.
///
/// Invariants: certificate verification and the hostname check are always on; there is no way to turn them
/// off. Every wait goes through `poll` on a non-blocking socket so that connect, handshake, read and write
/// all honour `timeout`.
public final class Connection {
    public let host: String
    public let port: Int
    /// Seconds any single wait (connect, handshake step, read, write) may take.
    public var timeout: Double

    private var fd: Int32
    private var ssl: OpaquePointer?
    private var ctx: OpaquePointer?

    public var isTLS: Bool { ssl != nil }

    init(host: String, port: Int, fd: Int32, timeout: Double) {
        self.host = host
        self.port = port
        self.fd = fd
        self.timeout = timeout
    }

    deinit { close() }

    /// Opens a TCP connection, trying every address `host` resolves to (IPv6 and IPv4) in order.
    public static func connect(host: String, port: Int, timeout: Double = 30) throws(NetError) -> Connection {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        if rc != 0 {
            // AI_ADDRCONFIG hides loopback-only families on hosts without a configured address; retry plainly.
            hints.ai_flags = 0
            let rc2 = getaddrinfo(host, String(port), &hints, &list)
            if rc2 != 0 {
                throw NetError(.resolve, host: host, port: port, detail: String(cString: gai_strerror(rc2)))
            }
        }
        defer { freeaddrinfo(list) }

        var lastError = NetError(.connect, host: host, port: port, detail: "no usable address")
        var cursor = list
        while let ai = cursor {
            cursor = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, ai.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), ai.pointee.ai_protocol)
            if fd < 0 { lastError = NetError(.connect, host: host, port: port, detail: errnoDescription(errno)); continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 {
                return Connection(host: host, port: port, fd: fd, timeout: timeout)
            }
            guard errno == EINPROGRESS else {
                lastError = NetError(.connect, host: host, port: port, detail: errnoDescription(errno))
                Glibc.close(fd)
                continue
            }
            switch waitFor(fd: fd, events: Int16(POLLOUT), timeout: timeout) {
            case .ready:
                var soError: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len)
                if soError == 0 { return Connection(host: host, port: port, fd: fd, timeout: timeout) }
                lastError = NetError(.connect, host: host, port: port, detail: errnoDescription(soError))
            case .timedOut:
                lastError = NetError(.timeout, host: host, port: port, detail: "connecting after \(formatSeconds(timeout))")
            case .failed(let code):
                lastError = NetError(.connect, host: host, port: port, detail: errnoDescription(code))
            }
            Glibc.close(fd)
        }
        throw lastError
    }

    /// Opens a connection and performs the TLS handshake at once (IMAPS 993, SMTPS 465).
    public static func connectTLS(
        host: String, port: Int, options: TLSOptions = TLSOptions(),
        timeout: Double = 30
    ) throws(NetError) -> Connection {
        let connection = try connect(host: host, port: port, timeout: timeout)
        try connection.startTLS(options: options)
        return connection
    }

    /// Upgrades this connection to TLS (after the protocol's STARTTLS exchange, or at once for implicit TLS).
    /// The server certificate must chain to a trusted CA and match `host` (DNS name or IP address).
    public func startTLS(options: TLSOptions = TLSOptions()) throws(NetError) {
        precondition(ssl == nil, "TLS already started")
        ERR_clear_error()
        guard let ctx = SSL_CTX_new(TLS_client_method()) else {
            throw NetError(.tlsSetup, host: host, port: port, detail: "cannot create a TLS context: \(Self.opensslErrors())")
        }
        self.ctx = ctx
        _ = mo_SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION)
        _ = SSL_CTX_set_options(ctx, UInt64(mo_SSL_OP_NO_COMPRESSION()))
        _ = mo_SSL_CTX_set_mode(ctx, mo_SSL_MODE_ENABLE_PARTIAL_WRITE() | mo_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER())
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        // System CAs (honours SSL_CERT_FILE / SSL_CERT_DIR), plus the account's own.
        SystemTrust.load(into: ctx, file: options.systemBundle)
        if let caFile = options.caFile {
            if SSL_CTX_load_verify_locations(ctx, caFile, nil) != 1 {
                throw NetError(
                    .tlsSetup, host: host, port: port,
                    detail: "cannot load ca-file \(caFile): \(Self.opensslErrors())")
            }
        }
        guard let ssl = SSL_new(ctx) else {
            throw NetError(.tlsSetup, host: host, port: port, detail: "cannot create a TLS session: \(Self.opensslErrors())")
        }
        self.ssl = ssl
        SSL_set_fd(ssl, fd)
        if isIPAddress(host) {
            // IP literals are checked against IP SANs; SNI carries names only (RFC 6066 §3).
            _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = SSL_set1_host(ssl, host)
            _ = mo_SSL_set_tlsext_host_name(ssl, host)
        }
        while true {
            ERR_clear_error()
            let rc = SSL_connect(ssl)
            if rc == 1 { break }
            let err = SSL_get_error(ssl, rc)
            if err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE {
                let events = Int16(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT)
                switch Self.waitFor(fd: fd, events: events, timeout: timeout) {
                case .ready: continue
                case .timedOut:
                    throw NetError(.timeout, host: host, port: port, detail: "during the TLS handshake after \(formatSeconds(timeout))")
                case .failed(let code): throw NetError(.tlsHandshake, host: host, port: port, detail: errnoDescription(code))
                }
            }
            // The verify result names the reason precisely; the error queue is vaguer.
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                let reason = String(cString: X509_verify_cert_error_string(verify))
                throw NetError(.untrustedCertificate, host: host, port: port, detail: reason)
            }
            let queued = Self.opensslErrors()
            // The peer vanishing mid-handshake is a network failure (retry later), not a TLS verdict.
            if (err == SSL_ERROR_SYSCALL && queued.isEmpty) || queued.contains("unexpected eof") {
                throw NetError(
                    .closed, host: host, port: port,
                    detail: "during the TLS handshake" + (errno != 0 ? " (\(errnoDescription(errno)))" : ""))
            }
            throw NetError(.tlsHandshake, host: host, port: port, detail: queued.isEmpty ? "error \(err)" : queued)
        }
    }

    /// The negotiated protocol, e.g. "TLSv1.3", or nil before TLS.
    public var tlsVersion: String? {
        guard let ssl else { return nil }
        return String(cString: SSL_get_version(ssl))
    }

    /// Reads at most `buffer.count` bytes; returns 0 at end of stream. Waits at most `timeout` for data.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(NetError) -> Int {
        guard fd >= 0 else { throw NetError(.closed, host: host, port: port, detail: "") }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            if let ssl {
                ERR_clear_error()
                var got = 0
                let rc = SSL_read_ex(ssl, base, buffer.count, &got)
                if rc == 1 { return got }
                let err = SSL_get_error(ssl, rc)
                switch err {
                case SSL_ERROR_ZERO_RETURN: return 0
                case SSL_ERROR_WANT_READ: try wait(Int16(POLLIN), what: "waiting for the server")
                case SSL_ERROR_WANT_WRITE: try wait(Int16(POLLOUT), what: "waiting for the server")
                case SSL_ERROR_SYSCALL where errno == 0 || errno == ECONNRESET:
                    return 0
                default:
                    // OpenSSL 3 reports a close without close_notify as an SSL error; to the protocol layer it
                    // is the end of the stream, which it judges itself (e.g. a truncated literal).
                    let queued = Self.opensslErrors()
                    if queued.contains("unexpected eof") { return 0 }
                    throw NetError(.io, host: host, port: port, detail: "TLS read failed: \(queued)")
                }
            } else {
                let n = Glibc.read(fd, base, buffer.count)
                if n >= 0 { return n }
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { try wait(Int16(POLLIN), what: "waiting for the server"); continue }
                if errno == ECONNRESET { return 0 }
                throw NetError(.io, host: host, port: port, detail: "read failed: \(errnoDescription(errno))")
            }
        }
    }

    /// Writes all of `bytes`, waiting at most `timeout` for each chunk to leave.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(NetError) {
        guard fd >= 0 else { throw NetError(.closed, host: host, port: port, detail: "") }
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            if let ssl {
                ERR_clear_error()
                var written = 0
                let rc = SSL_write_ex(ssl, base + offset, bytes.count - offset, &written)
                if rc == 1 { offset += written; continue }
                let err = SSL_get_error(ssl, rc)
                switch err {
                case SSL_ERROR_WANT_READ: try wait(Int16(POLLIN), what: "sending")
                case SSL_ERROR_WANT_WRITE: try wait(Int16(POLLOUT), what: "sending")
                case SSL_ERROR_SYSCALL where errno == EPIPE || errno == ECONNRESET || errno == 0:
                    throw NetError(.closed, host: host, port: port, detail: "while sending")
                default:
                    throw NetError(.io, host: host, port: port, detail: "TLS write failed: \(Self.opensslErrors())")
                }
            } else {
                let n = Glibc.send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if n >= 0 { offset += n; continue }
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { try wait(Int16(POLLOUT), what: "sending"); continue }
                if errno == EPIPE || errno == ECONNRESET { throw NetError(.closed, host: host, port: port, detail: "while sending") }
                throw NetError(.io, host: host, port: port, detail: "write failed: \(errnoDescription(errno))")
            }
        }
    }

    public func write(_ bytes: [UInt8]) throws(NetError) {
        var failure: NetError?
        bytes.withUnsafeBytes { raw in
            do throws(NetError) { try write(raw) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Closes the connection (sending TLS close_notify when possible). Idempotent.
    public func close() {
        if let ssl {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            SSL_free(ssl)
            self.ssl = nil
        }
        if let ctx { SSL_CTX_free(ctx); self.ctx = nil }
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }

    // MARK: - Waiting

    enum WaitResult { case ready, timedOut, failed(Int32) }

    static func waitFor(fd: Int32, events: Int16, timeout: Double) -> WaitResult {
        var pfd = pollfd(fd: fd, events: events, revents: 0)
        let millis = Int32(min(timeout * 1000, Double(Int32.max)))
        while true {
            let rc = poll(&pfd, 1, millis)
            if rc > 0 { return .ready }  // errors and hang-ups surface in the following call
            if rc == 0 { return .timedOut }
            if errno != EINTR { return .failed(errno) }
        }
    }

    private func wait(_ events: Int16, what: String) throws(NetError) {
        switch Self.waitFor(fd: fd, events: events, timeout: timeout) {
        case .ready: return
        case .timedOut: throw NetError(.timeout, host: host, port: port, detail: "\(what) after \(formatSeconds(timeout))")
        case .failed(let code): throw NetError(.io, host: host, port: port, detail: errnoDescription(code))
        }
    }

    /// Drains OpenSSL's (per-thread) error queue into one line.
    static func opensslErrors() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            let full = String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // "error:0A000086:SSL routines::certificate verify failed" -> the reason after the last ':'
            parts.append(full.split(separator: ":", omittingEmptySubsequences: false).last.map(String.init) ?? full)
        }
        return parts.joined(separator: "; ")
    }
}

func isIPAddress(_ host: String) -> Bool {
    var v4 = in_addr(), v6 = in6_addr()
    return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
}

func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
}

/// Where the system's trusted CAs come from. OpenSSL's default paths parse the whole CA bundle file
/// (about 150 certificates: 30–40 ms of CPU, at every connection) even when the directory beside it holds
/// the same certificates under hash names that OpenSSL looks up lazily, only for the issuer it needs. So
/// the directory alone is used when it has such hash links (Debian and derivatives do); the bundle
/// otherwise. When SSL_CERT_FILE names a bundle, it is read lazily too (`CABundle`), with the default
/// directory beside it, as OpenSSL's defaults take both.
enum SystemTrust {
    /// `file`: a bundle in place of `SSL_CERT_FILE` (the tests').
    static func load(into ctx: OpaquePointer, file: String? = nil) {
        let env = getenv("SSL_CERT_FILE").map { String(cString: $0) }
        if let file = file ?? env, !file.isEmpty {
            // The bundle read lazily (`CABundle`), beside OpenSSL's default directory as its defaults have
            // it; the whole file when it does not read as plain certificates.
            // The bundle's lookup first: loaded whole, its certificates would be found before the directory's.
            guard let bundle = CABundle.shared(file), let store = SSL_CTX_get_cert_store(ctx), bundle.addLookup(to: ctx),
                let directory = X509_STORE_add_lookup(store, X509_LOOKUP_hash_dir()),
                X509_LOOKUP_ctrl(directory, X509_L_ADD_DIR, nil, Int(X509_FILETYPE_DEFAULT), nil) == 1
            else {
                if file == env { _ = SSL_CTX_set_default_verify_paths(ctx) } else { _ = SSL_CTX_load_verify_locations(ctx, file, nil) }
                return
            }
            return
        }
        if let dir = hashedDirectory {
            _ = SSL_CTX_load_verify_locations(ctx, nil, dir)
        } else {
            _ = SSL_CTX_set_default_verify_paths(ctx)
        }
    }

    /// The CA directory (SSL_CERT_DIR or OpenSSL's default), when it holds `xxxxxxxx.N` hash links.
    static let hashedDirectory: String? = {
        let configured = getenv("SSL_CERT_DIR").map { String(cString: $0) }
        let dir = configured.flatMap { $0.isEmpty ? nil : $0 } ?? String(cString: X509_get_default_cert_dir())
        // A list of directories (SSL_CERT_DIR may hold several): leave those to OpenSSL's defaults.
        guard !dir.contains(":"), let names = try? directoryNames(dir).get() else { return nil }
        return names.contains { isHashName(Array($0.utf8)) } ? dir : nil
    }()

    /// `0123abcd.0`: eight hex digits, a dot, a digit.
    static func isHashName(_ name: [UInt8]) -> Bool {
        guard name.count == 10, name[8] == UInt8(ascii: "."), (48...57).contains(name[9]) else { return false }
        return name[..<8].allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
