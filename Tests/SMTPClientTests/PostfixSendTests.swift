import Testing
import Synchronization
import MoCore
@testable import SMTPClient

/// Sending through the private Postfix (scripts/test-smtp-server) with SASL from the private Dovecot.
@Suite(.serialized) struct PostfixSendTests {
    static func message(subject: String, body: String, to: String = "rcpt@mo.test") -> [UInt8] {
        let id: String = subject.split(separator: " ").joined(separator: "-")
        let text =
            "From: Sender <sender@mo.test>\nTo: \(to)\nSubject: \(subject)\nDate: Mon, 2 Mar 2026 10:00:00 +0000\n"
            + "Message-ID: <\(id)@mo.test>\n\n\(body)"
        return Array(text.utf8)
    }

    static func envelope(_ recipients: [String] = ["rcpt@mo.test"]) -> SMTPEnvelope {
        SMTPEnvelope(sender: "sender@mo.test", recipients: recipients)
    }

    /// Postfix prepends Return-Path, Delivered-To and Received; everything after is ours, byte for byte.
    static func expectDelivered(_ delivered: [UInt8], endsWith sent: [UInt8]) {
        #expect(
            delivered.count >= sent.count && Array(delivered.suffix(sent.count)) == sent,
            "delivered:\n\(String(decoding: delivered.prefix(2000), as: UTF8.self))")
    }

    @Test func startTLSWithAuthDeliversByteExactAndTheTraceHidesThePassword() throws {
        let servers = try SMTPTestServers.start()
        defer { servers.stop() }
        let lines = Mutex<[String]>([])
        let settings = servers.settings(trace: { event in lines.withLock { $0.append(event.line) } })
        // Lines that would end DATA or lose a dot unless stuffed, and a body without a final newline.
        let body = "Hello\n.\n..two dots\n.leading dot\n \n\nend without newline"
        let sent = Self.message(subject: "starttls", body: body)
        let outcome = try SMTPClient.send(envelope: Self.envelope(), message: sent, settings: settings)
        guard case .accepted(let reply) = outcome else { return }
        #expect(reply.code == 250 && reply.description.contains("queued as"))

        let delivered = try servers.waitForMessages(count: 1)
        Self.expectDelivered(delivered[0], endsWith: sent + Array("\n".utf8))

        let trace = lines.withLock { $0 }
        #expect(trace.contains("-> STARTTLS"))
        #expect(trace.contains("-> AUTH PLAIN <redacted>"))
        #expect(trace.contains { $0.hasPrefix("-- TLS started (TLSv1.") })
        let secrets = [
            servers.password, Base64.encode(SASL.plain(user: servers.user, password: servers.password)),
            Base64.encode(SASL.login(user: servers.user, password: servers.password)[1])
        ]
        for secret in secrets { #expect(!trace.contains { $0.contains(secret) }) }
        // AUTH is offered only after STARTTLS (smtpd_tls_auth_only), and was used only then.
        let authIndex = trace.firstIndex(of: "-> AUTH PLAIN <redacted>")!
        #expect(trace.firstIndex(of: "-> STARTTLS")! < authIndex)
    }

    @Test func loginMechanismWorksAndIsRedacted() throws {
        let servers = try SMTPTestServers.start()
        defer { servers.stop() }
        let lines = Mutex<[String]>([])
        let settings = servers.settings(authMethod: .login, trace: { event in lines.withLock { $0.append(event.line) } })
        _ = try SMTPClient.send(
            envelope: Self.envelope(), message: Self.message(subject: "login", body: "x\n"),
            settings: settings)
        let trace = lines.withLock { $0 }
        #expect(trace.contains("-> AUTH LOGIN"))
        #expect(trace.filter { $0 == "-> <redacted>" }.count == 2)
        #expect(!trace.contains { $0.contains(Base64.encode(SASL.login(user: servers.user, password: servers.password)[1])) })
        _ = try servers.waitForMessages(count: 1)
    }

    @Test func implicitTLSAndEightBitBody() throws {
        let servers = try SMTPTestServers.start()
        defer { servers.stop() }
        let lines = Mutex<[String]>([])
        let sent = Self.message(subject: "implicit", body: "Grüße aus Köln — ✓\n")
        _ = try SMTPClient.send(
            envelope: Self.envelope(), message: sent,
            settings: servers.settings(
                security: .implicit,
                trace: { event in lines.withLock { $0.append(event.line) } }))
        let delivered = try servers.waitForMessages(count: 1)
        Self.expectDelivered(delivered[0], endsWith: sent)
        #expect(lines.withLock { $0 }.contains { $0.hasPrefix("-> MAIL FROM:<sender@mo.test> SIZE=") && $0.hasSuffix(" BODY=8BITMIME") })
    }

    @Test func twentyMegabyteAttachment() throws {
        let servers = try SMTPTestServers.start()
        defer { servers.stop() }
        // 20 MB of payload as base64-style 76-column lines, CRLF line ends as a MUA would write them.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var sent = Array(
            ("From: sender@mo.test\r\nTo: rcpt@mo.test\r\nSubject: big\r\nDate: Mon, 2 Mar 2026 10:00:00 +0000\r\n"
                + "Message-ID: <big@mo.test>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n"
                + "--b\r\nContent-Type: text/plain\r\n\r\nsee attachment\r\n--b\r\n"
                + "Content-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n").utf8)
        let lineCount = 20 * 1024 * 1024 * 4 / 3 / 76
        sent.reserveCapacity(sent.count + lineCount * 78 + 100)
        var line = [UInt8](repeating: 0, count: 78)
        line[76] = 13; line[77] = 10
        for i in 0..<lineCount {
            for j in 0..<76 { line[j] = alphabet[(i &* 7 &+ j) & 63] }
            sent.append(contentsOf: line)
        }
        sent.append(contentsOf: Array("--b--\r\n".utf8))
        _ = try SMTPClient.send(envelope: Self.envelope(), message: sent, settings: servers.settings())
        let delivered = try servers.waitForMessages(count: 1, timeout: 60)
        // Postfix stores LF line ends.
        let expected = sent.filter { $0 != 13 }
        Self.expectDelivered(delivered[0], endsWith: expected)
    }

    @Test func rejectedRecipientFailsPermanentlyAndNothingIsDelivered() throws {
        let servers = try SMTPTestServers.start()
        defer { servers.stop() }
        let reject = servers.rejectAddress
        do {
            _ = try SMTPClient.send(
                envelope: Self.envelope(["rcpt@mo.test", reject]),
                message: Self.message(subject: "rejected", body: "x\n"), settings: servers.settings())
            Issue.record("a send with a rejected recipient succeeded")
        } catch {
            #expect(error.code == .recipientsRejected)
            #expect(error.kind == .unavailable)
            #expect(error.rejectedRecipients.map(\.address) == [reject])
            #expect(
                error.description == "smtp 127.0.0.1:\(servers.submissionPort): recipient <\(reject)> rejected: "
                    + "550 5.1.1 <\(reject)>: Recipient address rejected: User unknown")
        }
        // A later message arrives alone: the rejected one was never queued.
        let marker = Self.message(subject: "marker", body: "after\n")
        _ = try SMTPClient.send(envelope: Self.envelope(), message: marker, settings: servers.settings())
        let delivered = try servers.waitForMessages(count: 1)
        #expect(delivered.count == 1)
        Self.expectDelivered(delivered[0], endsWith: marker)
    }

    @Test func badPasswordIsAnAuthenticationError() throws {
        let servers = try SMTPTestServers.start()
        defer { servers.stop() }
        do {
            _ = try SMTPClient.send(
                envelope: Self.envelope(), message: Self.message(subject: "badpw", body: "x\n"),
                settings: servers.settings(password: "wrong"))
            Issue.record("a wrong password was accepted")
        } catch {
            #expect(error.code == .authentication)
            #expect(error.kind == .authentication)
            #expect(
                error.description.hasPrefix("smtp 127.0.0.1:\(servers.submissionPort): authentication as \(servers.user) failed: 535 5.7.8")
            )
            #expect(!error.description.contains("wrong"))
        }
    }

    @Test func tlsRefusals() throws {
        let servers = try SMTPTestServers.start()
        defer { servers.stop() }
        let msg = Self.message(subject: "tls", body: "x\n")
        // The plain port offers no STARTTLS: refused, never sent in the clear.
        do {
            _ = try SMTPClient.send(
                envelope: Self.envelope(), message: msg,
                settings: servers.settings(security: .starttls, port: servers.plainPort))
            Issue.record("sent without STARTTLS")
        } catch {
            #expect(error.code == .tls && error.kind == .security)
            #expect(
                error.description == "smtp 127.0.0.1:\(servers.plainPort): the server does not offer STARTTLS; refusing to send without TLS"
            )
        }
        for security in [TLSMode.starttls, .implicit] {
            do {
                _ = try SMTPClient.send(
                    envelope: Self.envelope(), message: msg,
                    settings: servers.settings(security: security, caFile: servers.wrongCAFile))
                Issue.record("a certificate from an unknown CA was accepted (\(security))")
            } catch {
                #expect(error.code == .tls && error.kind == .security)
                #expect(
                    error.description.hasSuffix(
                        ": certificate for 127.0.0.1 is not trusted: unable to get local issuer certificate; set ca-file or check the host")
                )
            }
        }
        // Plaintext to loopback is allowed where configured; this one reaches the Maildir.
        _ = try SMTPClient.send(envelope: Self.envelope(), message: msg, settings: servers.settings(security: .none))
        let delivered = try servers.waitForMessages(count: 1)
        #expect(delivered.count == 1)
    }
}
