#if canImport(Glibc)
    import Glibc
#endif
import Testing
import MoCore
import MoTestSupport

/// Issue #14, "Security": TLS verified by default, no STARTTLS stripping, no credentials in traces, private
/// files, and a warning for a config file others can read. docs/reliability.md lists the outcomes.
@Suite struct SecurityTests {
    /// A config for an account on `host:port` with implicit TLS; `caFile` nil: the system store only.
    static func tlsConfig(
        _ dir: TemporaryDirectory, host: String = "127.0.0.1", port: Int, caFile: String?,
        user: String = "u", password: String = "x", auth: String = "auto"
    ) throws -> String {
        let file = dir.path + "/config.toml"
        try writePrivateFile(
            file,
            """
            [general]
            state-dir = "\(dir.path)/state"
            [account.t]
            address = "me@example.com"
            maildir = "\(dir.path)/Mail"
            [account.t.imap]
            host = "\(host)"
            port = \(port)
            user = "\(user)"
            password-command = "echo \(password)"
            auth = "\(auth)"
            timeout = "10s"
            \(caFile.map { "ca-file = \"\($0)\"" } ?? "")
            """)
        return file
    }

    static func sync(_ config: String, _ extra: [String] = []) throws -> ChildProcess.Result {
        try ChildProcess.run(["timeout", "-s", "KILL", "60", TestPaths.binDirectory + "/mo-sync", "--config", config] + extra)
    }

    // MARK: - TLS verified by default

    @Test func wrongCAWrongHostAndNoCAFileAreRefusedWith77() throws {
        let server = try TestServer.start()
        defer { server.stop() }
        let cases: [(host: String, ca: String?, reason: String)] = [
            ("127.0.0.1", server.wrongCAFile, "certificate for 127.0.0.1 is not trusted: unable to get local issuer certificate"),
            ("127.0.0.1", nil, "certificate for 127.0.0.1 is not trusted: unable to get local issuer certificate"),
            ("localhost", server.caFile, "certificate for localhost is not trusted: hostname mismatch")
        ]
        for c in cases {
            let dir = try TemporaryDirectory()
            defer { dir.remove() }
            let config = try Self.tlsConfig(
                dir, host: c.host, port: server.imapsPort, caFile: c.ca, user: server.user, password: server.password)
            let r = try Self.sync(config)
            #expect(r.status == 77, "\(c): \(r.stderrString)")
            #expect(r.lines.count == 1 && r.lines[0].hasPrefix("mo-sync: t: ") && r.lines[0].contains(c.reason), "\(r.stderrString)")
            #expect(access(dir.path + "/Mail/INBOX", F_OK) != 0, "mail was synced over an unverified connection")
        }
    }

    @Test func expiredCertificateIsRefusedWith77() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let made = try ChildProcess.run(["bash", "-c", Self.expiredCertificateScript, "mk", dir.path])
        #expect(made.status == 0, "\(made.stderrString)")
        let (probe, port) = try listenOnLoopback()
        close(probe)
        let tls = try BackgroundProcess([
            "openssl", "s_server", "-accept", "127.0.0.1:\(port)", "-cert", dir.path + "/server.pem",
            "-key", dir.path + "/server.key", "-quiet"
        ])
        defer { tls.kill() }
        for _ in 0..<100 where !Self.accepts(port) { usleep(50_000) }
        let config = try Self.tlsConfig(dir, port: port, caFile: dir.path + "/ca.pem")
        let r = try Self.sync(config)
        #expect(r.status == 77, "\(r.stderrString)")
        #expect(
            r.lines.count == 1 && r.lines[0].contains("certificate for 127.0.0.1 is not trusted: certificate has expired"),
            "\(r.stderrString)")
    }

    static func accepts(_ port: Int) -> Bool {
        (try? ChildProcess.run(["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/\(port)"]).status) == 0
    }

    /// A CA and a server certificate for 127.0.0.1 that expired in 2020 (`openssl ca` takes explicit dates).
    static let expiredCertificateScript = #"""
        set -e
        cd "$1"
        ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
        openssl req -x509 $ec -keyout ca.key -out ca.pem -days 30 -subj "/CN=mo expired-test CA" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
        openssl req $ec -keyout server.key -out server.csr -subj "/CN=127.0.0.1" 2>/dev/null
        mkdir -p ca/newcerts; : > ca/index.txt; echo 01 > ca/serial
        printf '%s\n' '[ca]' 'default_ca = d' '[d]' 'dir = ./ca' 'database = ./ca/index.txt' 'new_certs_dir = ./ca/newcerts' \
            'serial = ./ca/serial' 'default_md = sha256' 'policy = p' '[p]' 'commonName = supplied' '[ext]' \
            'subjectAltName = IP:127.0.0.1,DNS:127.0.0.1' 'basicConstraints = CA:FALSE' 'extendedKeyUsage = serverAuth' > ca.cnf
        openssl ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in server.csr -out server.pem \
            -startdate 20200101000000Z -enddate 20200201000000Z -extensions ext -notext 2>/dev/null
        """#

    // MARK: - No STARTTLS stripping

    /// With tls = "starttls", a server that does not offer STARTTLS, answers it with NO, or pre-authenticates
    /// gets no plaintext login: exit 77, one line, and the password never goes out.
    @Test(arguments: ["not offered", "answered NO", "PREAUTH"])
    func startTLSStrippingIsRefused(_ how: String) throws {
        let greeting =
            switch how {
            case "not offered": "* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN AUTH=LOGIN] hi\r\n"
            case "PREAUTH": "* PREAUTH [CAPABILITY IMAP4rev1 STARTTLS] hi\r\n"
            default: "* OK [CAPABILITY IMAP4rev1 STARTTLS AUTH=PLAIN] hi\r\n"
            }
        let server = try ScriptedIMAPServer(greeting: [.text(greeting)], mailboxes: [.init("INBOX")]) { r in
            r.verb == "STARTTLS" ? [.text("\(r.tag) NO not today\r\n")] : nil
        }
        let run = try ScriptedRun(server, tls: "starttls", password: "pw-never-in-clear")
        defer { run.remove() }
        let r = try run.sync()
        #expect(r.status == 77, "\(how): \(r.stderrString)")
        #expect(r.lines.count == 1 && r.lines[0].contains("TLS"), "\(how): \(r.stderrString)")
        #expect(!server.receivedText.contains("LOGIN") && !server.receivedText.contains("AUTHENTICATE"), "\(server.receivedText)")
        #expect(!server.receivedText.contains("pw-never-in-clear"))
    }
}
