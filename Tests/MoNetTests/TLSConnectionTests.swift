import COpenSSL
import Testing
import MoCore
@testable import MoNet
import MoTestSupport

/// TLS against the project's private Dovecot: verification against the generated CA, and refusals.
@Suite(.serialized) struct TLSConnectionTests {
    static func greeting(_ c: Connection) throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var text = ""
        while !text.contains("\r\n") {
            let n = try buffer.withUnsafeMutableBytes { try c.read(into: $0) }
            if n == 0 { break }
            text += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        return text
    }

    @Test func implicitTLSVerifiesAgainstTheGeneratedCAAndFailsAgainstAWrongOne() throws {
        let server = try TestServer.start()
        defer { server.stop() }

        let good = try Connection.connectTLS(
            host: server.host, port: server.imapsPort,
            options: TLSOptions(caFile: server.caFile), timeout: 10)
        #expect(good.isTLS)
        #expect(["TLSv1.2", "TLSv1.3"].contains(good.tlsVersion ?? ""))
        #expect(try Self.greeting(good).hasPrefix("* OK"))
        good.close()

        do {
            _ = try Connection.connectTLS(
                host: server.host, port: server.imapsPort,
                options: TLSOptions(caFile: server.wrongCAFile), timeout: 10)
            Issue.record("a certificate from an unknown CA was accepted")
        } catch {
            #expect(error.code == .untrustedCertificate)
            #expect(error.kind == .security)
            #expect(
                error.description
                    == "certificate for 127.0.0.1 is not trusted: unable to get local issuer certificate; set ca-file or check the host")
        }

        // No ca-file: the system store does not know the test CA.
        #expect(throws: NetError.self) {
            _ = try Connection.connectTLS(host: server.host, port: server.imapsPort, timeout: 10)
        }
    }

    /// A CA bundle named by `SSL_CERT_FILE` is read lazily (`CABundle`): the test CA found in it by its
    /// subject; a bundle without it does not verify; a bundle of `TRUSTED CERTIFICATE` blocks is loaded
    /// whole, as OpenSSL loads it.
    @Test func aBundleIsReadForTheIssuerItHolds() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let system = (try? readWholeFile("/etc/ssl/certs/ca-certificates.crt").get()) ?? []
        let ca = try readWholeFile(server.caFile).get()
        func connect(_ bundle: [UInt8]) throws -> Connection {
            let path = dir.path + "/bundle-\(bundle.count).pem"
            _ = try replaceFileAtomically(path, bundle).get()
            var options = TLSOptions()
            options.systemBundle = path
            return try Connection.connectTLS(host: server.host, port: server.imapsPort, options: options, timeout: 10)
        }
        let good = try connect(system + ca)
        #expect(try Self.greeting(good).hasPrefix("* OK"))
        good.close()
        do {
            _ = try connect(system + (try readWholeFile(server.wrongCAFile).get()))
            Issue.record("a bundle without the server's CA was trusted")
        } catch let error as NetError {
            #expect(error.code == .untrustedCertificate)
        }
        let trusted = try ChildProcess.run(["/usr/bin/openssl", "x509", "-in", server.caFile, "-trustout", "-addtrust", "serverAuth"])
        #expect(trusted.stdoutString.hasPrefix("-----BEGIN TRUSTED CERTIFICATE-----"))
        #expect(CABundle(pem: Array(trusted.stdoutString.utf8)) == nil)
        let whole = try connect(Array(trusted.stdoutString.utf8))
        #expect(try Self.greeting(whole).hasPrefix("* OK"))
        whole.close()
    }

    @Test func hostnameMismatchIsRefused() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        // The certificate names 127.0.0.1 only; "localhost" reaches the same socket but must not verify.
        do {
            _ = try Connection.connectTLS(
                host: "localhost", port: server.imapsPort,
                options: TLSOptions(caFile: server.caFile), timeout: 10)
            Issue.record("a certificate for another name was accepted")
        } catch {
            #expect(error.description == "certificate for localhost is not trusted: hostname mismatch; set ca-file or check the host")
        }
    }

    @Test func startTLSUpgradeOnThePlainPort() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let c = try Connection.connect(host: server.host, port: server.imapPort, timeout: 10)
        #expect(try Self.greeting(c).contains("STARTTLS"))
        try c.write(Array("a STARTTLS\r\n".utf8))
        #expect(try Self.greeting(c).hasPrefix("a OK"))
        try c.startTLS(options: TLSOptions(caFile: server.caFile))
        #expect(c.isTLS)
        try c.write(Array("b NOOP\r\n".utf8))
        #expect(try Self.greeting(c).hasPrefix("b OK"))
    }

    @Test func connectionRefusedIsTemporaryAndNamesTheEndpoint() throws {
        // A port that was free a moment ago: bind, read the number, close.
        let port = try freePort()
        do {
            _ = try Connection.connect(host: "127.0.0.1", port: port, timeout: 5)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.kind == .temporary)
            #expect(error.description == "cannot connect to 127.0.0.1:\(port): Connection refused")
        }
    }

    @Test func unreadableCAFileIsAConfigError() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        do {
            _ = try Connection.connectTLS(
                host: server.host, port: server.imapsPort,
                options: TLSOptions(caFile: "/nonexistent/ca.pem"), timeout: 10)
            Issue.record("a missing CA file was accepted")
        } catch {
            #expect(error.kind == .config)
            #expect(error.description.hasPrefix("cannot load ca-file /nonexistent/ca.pem: "))
        }
    }
}

#if canImport(Glibc)
    import Glibc
#endif

/// A port that was free a moment ago (listened on, then closed).
func freePort() throws -> Int {
    let (fd, port) = try listenOnLoopback()
    close(fd)
    return port
}

@Suite struct SystemTrustTests {
    /// Every certificate of the system's bundle indexed under the hash OpenSSL gives its subject (the DER
    /// walk read the right field); blocks that do not decode refuse the whole bundle.
    @Test func theBundleIndexHasOpenSSLsSubjectHashes() throws {
        guard let pem = try? readWholeFile("/etc/ssl/certs/ca-certificates.crt").get() else { return }
        let bundle = try #require(CABundle(pem: pem))
        #expect(bundle.count == String(decoding: pem, as: UTF8.self).components(separatedBy: "-----BEGIN CERTIFICATE-----").count - 1)
        for (hash, certificates) in bundle.certificates {
            for der in certificates {
                let openssl = der.withUnsafeBufferPointer { buffer -> UInt in
                    var p: UnsafePointer<UInt8>? = buffer.baseAddress
                    guard let x = d2i_X509(nil, &p, buffer.count) else { return 0 }
                    defer { X509_free(x) }
                    return X509_NAME_hash_ex(X509_get_subject_name(x), nil, nil, nil)
                }
                #expect(openssl == hash)
            }
        }
        for bad in ["", "-----BEGIN CERTIFICATE-----\n!!\n-----END CERTIFICATE-----\n", "-----BEGIN CERTIFICATE-----\nMIIB\n"] {
            #expect(CABundle(pem: Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test func hashLinkNames() {
        for good in ["002c0b4f.0", "ffffffff.9"] { #expect(SystemTrust.isHashName(Array(good.utf8)), "\(good)") }
        for bad in ["002c0b4f.pem", "002C0B4F.0", "02c0b4f.0", "002c0b4f.10", "ca-certificates.crt", ""] {
            #expect(!SystemTrust.isHashName(Array(bad.utf8)), "\(bad)")
        }
    }
}
