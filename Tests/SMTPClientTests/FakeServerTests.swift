import Testing
import MoCore
import MoTestSupport
@testable import SMTPClient

/// Client decisions that a real Postfix will not provoke, against a scripted server on 127.0.0.1.
@Suite(.serialized) struct FakeServerTests {
    static let message = Array("From: a@mo.test\r\nTo: b@mo.test\r\nSubject: s\r\n\r\nbody\r\n".utf8)
    static let envelope = SMTPEnvelope(sender: "a@mo.test", recipients: ["b@mo.test"])

    static func settings(
        _ port: Int, security: TLSMode = .none, user: String? = nil,
        method: AuthMethod = .auto
    ) -> SMTPSettings {
        SMTPSettings(
            host: "127.0.0.1", port: port, security: security, user: user, secret: .value("pw"),
            authMethod: method, timeouts: .init(connect: 5, command: 5, dataBlock: 5, dataFinal: 5))
    }

    static func sendExpectingError(
        _ settings: SMTPSettings, envelope: SMTPEnvelope = envelope,
        message: [UInt8] = message
    ) -> SMTPError? {
        do {
            _ = try SMTPClient.send(envelope: envelope, message: message, settings: settings)
            Issue.record("the send succeeded")
            return nil
        } catch {
            return error
        }
    }

    /// A server that answers commands starting with `prefix` with `reply` (nil: drops the connection), the rest
    /// as usual.
    static func failing(_ prefix: String, with reply: String?) throws -> FakeSMTPServer {
        try FakeSMTPServer { line in line.hasPrefix(prefix) ? reply : standardReply(line) }
    }

    @Test func plainLoopbackSendSucceeds() throws {
        let server = try FakeSMTPServer { standardReply($0) }
        defer { server.stop() }
        let outcome = try SMTPClient.send(envelope: Self.envelope, message: Self.message, settings: Self.settings(server.port))
        #expect(outcome == .accepted(SMTPReply(code: 250, lines: ["2.0.0 Ok: queued as FAKE"])))
        #expect(server.commands == ["EHLO localhost", "MAIL FROM:<a@mo.test> SIZE=52", "RCPT TO:<b@mo.test>", "DATA", "QUIT"])
    }

    @Test func plaintextToARemoteHostIsRefusedBeforeConnecting() {
        let settings = SMTPSettings(host: "mail.example.com", port: 25, security: .none)
        let error = Self.sendExpectingError(settings)
        #expect(error?.code == .invalidRequest)
        #expect(error?.kind == .config)
    }

    @Test func missingSTARTTLSIsRefused() throws {
        let server = try FakeSMTPServer { standardReply($0) }
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port, security: .starttls, user: "u"))
        #expect(error?.code == .tls)
        #expect(error?.kind == .security)
        #expect(error?.description == "smtp 127.0.0.1:\(server.port): the server does not offer STARTTLS; refusing to send without TLS")
        #expect(server.commands == ["EHLO localhost", "QUIT"])
    }

    @Test func repliesInjectedAfterSTARTTLSAreRefused() throws {
        let server = try FakeSMTPServer { line in
            line == "STARTTLS"
                ? "220 2.0.0 Ready\r\n250 injected\r\n"
                : standardReply(line, ehlo: "250-fake\r\n250 STARTTLS\r\n")
        }
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port, security: .starttls))
        #expect(error?.code == .protocolViolation)
    }

    @Test func sizeLimitIsCheckedBeforeMAIL() throws {
        let server = try FakeSMTPServer { standardReply($0, ehlo: "250-fake\r\n250 SIZE 20\r\n") }
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port))
        #expect(error?.code == .messageTooLarge)
        #expect(error?.kind == .data)
        #expect(error?.description == "smtp 127.0.0.1:\(server.port): the message is 52 bytes; the server accepts at most 20")
        #expect(!server.commands.contains { $0.hasPrefix("MAIL") })
    }

    @Test func eightBitAndUTF8NeedTheirExtensions() throws {
        let server = try FakeSMTPServer { standardReply($0, ehlo: "250-fake\r\n250 SIZE 0\r\n") }
        defer { server.stop() }
        let eight = Self.sendExpectingError(Self.settings(server.port), message: Array("Subject: s\n\nbödy\n".utf8))
        #expect(eight?.code == .extensionMissing)
        #expect(eight?.kind == .unavailable)

        let server2 = try FakeSMTPServer { standardReply($0) }
        defer { server2.stop() }
        let utf8 = Self.sendExpectingError(
            Self.settings(server2.port),
            envelope: SMTPEnvelope(sender: "a@mo.test", recipients: ["jörg@mo.test"]))
        #expect(
            utf8?.description
                == "smtp 127.0.0.1:\(server2.port): address <jörg@mo.test> is not ASCII and the server does not offer SMTPUTF8")
    }

    @Test func eightBitBodyAndUTF8AddressUseTheExtensionsWhenOffered() throws {
        let server = try FakeSMTPServer {
            standardReply($0, ehlo: "250-fake\r\n250-8BITMIME\r\n250-SMTPUTF8\r\n250-DSN\r\n250 SIZE 1000\r\n")
        }
        defer { server.stop() }
        let envelope = SMTPEnvelope(
            sender: "a@mo.test", recipients: ["jörg@mo.test"],
            dsn: DSNOptions(
                notify: .on(success: false, failure: true, delay: false),
                ret: .headers, envelopeID: "q1"))
        _ = try SMTPClient.send(
            envelope: envelope, message: Array("Subject: s\n\nbödy\n".utf8),
            settings: Self.settings(server.port))
        #expect(server.commands[1] == "MAIL FROM:<a@mo.test> SIZE=21 BODY=8BITMIME SMTPUTF8 RET=HDRS ENVID=q1")
        #expect(server.commands[2] == "RCPT TO:<jörg@mo.test> NOTIFY=FAILURE")
    }

    @Test func everyRecipientIsCheckedAndNoDataFollowsARejection() throws {
        let server = try FakeSMTPServer { line in
            if line.contains("bad1") { return "550 5.1.1 <bad1@mo.test>: User unknown\r\n" }
            if line.contains("bad2") { return "450 4.2.0 <bad2@mo.test>: Mailbox busy\r\n" }
            return standardReply(line)
        }
        defer { server.stop() }
        let envelope = SMTPEnvelope(sender: "a@mo.test", recipients: ["bad1@mo.test", "ok@mo.test", "bad2@mo.test"])
        let error = Self.sendExpectingError(Self.settings(server.port), envelope: envelope)
        #expect(error?.code == .recipientsRejected)
        #expect(error?.kind == .unavailable)
        #expect(error?.rejectedRecipients.map(\.address) == ["bad1@mo.test", "bad2@mo.test"])
        #expect(
            error?.description == "smtp 127.0.0.1:\(server.port): 2 recipients rejected: "
                + "<bad1@mo.test>: 550 5.1.1 <bad1@mo.test>: User unknown; <bad2@mo.test>: 450 4.2.0 <bad2@mo.test>: Mailbox busy")
        #expect(Array(server.commands.suffix(2)) == ["RSET", "QUIT"])
        #expect(!server.commands.contains("DATA"))
    }

    @Test func onlyTemporaryRecipientFailuresAreTemporary() throws {
        let server = try Self.failing("RCPT", with: "451 4.3.0 try later\r\n")
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port))
        #expect(error?.kind == .temporary)
    }

    @Test func connectionLostAfterTheFinalDotIsFlagged() throws {
        let server = try Self.failing("<DATA", with: nil)
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port))
        #expect(error?.code == .network)
        #expect(error?.kind == .temporary)
        #expect(error?.afterFinalDot == true)
        #expect(error?.description.hasSuffix("(after the whole message was sent: the server may have accepted it)") == true)
    }

    @Test func connectionLostBeforeDataIsNotFlagged() throws {
        let server = try Self.failing("RCPT", with: nil)
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port))
        #expect(error?.kind == .temporary)
        #expect(error?.afterFinalDot == false)
        #expect(
            error?.description
                == "smtp 127.0.0.1:\(server.port): connection closed by the server waiting for the reply to RCPT TO:<b@mo.test>")
    }

    @Test func serviceClosingIsTemporary() throws {
        let server = try Self.failing("MAIL", with: "421 4.3.2 Service shutting down\r\n")
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port))
        #expect(error?.kind == .temporary)
        #expect(error?.reply?.code == 421)
    }

    @Test func heloFallbackOnlyWithoutExtensions() throws {
        let server = try Self.failing("EHLO", with: "502 5.5.2 no EHLO here\r\n")
        defer { server.stop() }
        _ = try SMTPClient.send(envelope: Self.envelope, message: Self.message, settings: Self.settings(server.port))
        #expect(Array(server.commands.prefix(3)) == ["EHLO localhost", "HELO localhost", "MAIL FROM:<a@mo.test>"])

        let server2 = try Self.failing("EHLO", with: "502 5.5.2 no EHLO here\r\n")
        defer { server2.stop() }
        let error = Self.sendExpectingError(Self.settings(server2.port, user: "u"))
        #expect(error?.description == "smtp 127.0.0.1:\(server2.port): EHLO refused: 502 5.5.2 no EHLO here")
        #expect(server2.commands == ["EHLO localhost", "QUIT"])
    }

    @Test func xoauth2FailureAnswersTheErrorChallenge() throws {
        let server = try FakeSMTPServer { line in
            if line.hasPrefix("AUTH XOAUTH2 ") { return "334 eyJzdGF0dXMiOiI0MDEifQ==\r\n" }
            if line.isEmpty { return "535 5.7.8 Username and Password not accepted\r\n" }
            return standardReply(line, ehlo: "250-fake\r\n250 AUTH PLAIN XOAUTH2\r\n")
        }
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port, user: "u@mo.test", method: .xoauth2))
        #expect(error?.code == .authentication)
        #expect(error?.kind == .authentication)
        #expect(
            Array(server.commands.dropFirst()) == [
                "AUTH XOAUTH2 " + Base64.encode(SASL.xoauth2(user: "u@mo.test", token: "pw")), "", "QUIT"
            ])
    }

    @Test func unsupportedAuthIsRefused() throws {
        let server = try FakeSMTPServer { standardReply($0, ehlo: "250-fake\r\n250 AUTH CRAM-MD5\r\n") }
        defer { server.stop() }
        let error = Self.sendExpectingError(Self.settings(server.port, user: "u"))
        #expect(error?.code == .authenticationUnavailable)
        #expect(
            error?.description
                == "smtp 127.0.0.1:\(server.port): the server offers no password mechanism this client speaks (it offers CRAM-MD5)")
    }

    @Test func closedPortIsTemporary() {
        let port = closedLoopbackPort()
        let error = Self.sendExpectingError(Self.settings(port))
        #expect(error?.code == .network)
        #expect(error?.kind == .temporary)
        #expect(error?.description == "smtp 127.0.0.1:\(port): cannot connect: Connection refused")
    }

    @Test func badAddressesNeverReachTheWire() throws {
        let server = try FakeSMTPServer { standardReply($0) }
        defer { server.stop() }
        let error = Self.sendExpectingError(
            Self.settings(server.port),
            envelope: SMTPEnvelope(sender: "a@mo.test", recipients: ["b@mo.test>\r\nRSET"]))
        #expect(error?.code == .invalidRequest)
        #expect(!server.commands.contains { $0.hasPrefix("MAIL") })
    }
}
