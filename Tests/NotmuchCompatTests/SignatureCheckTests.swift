import Foundation
import MailMessage
import MoCore
import MoTestSupport
import Testing

@testable import NotmuchCompat

/// gpg's status lines read as notmuch reports signatures (a rule table in `SignatureCheck`), and real
/// PGP/MIME signatures checked by gpg with a key made for the test: good, bad (the text changed), and
/// an unknown key; each side by side with Debian's notmuch where it is installed.
@Suite struct SignatureCheckTests {
    static let fpr = "C903FA2A63B4CCA02BD2FC28ADAB99EBABD8008E"

    @Test func goodWithAFullyValidKey() {
        let s = SignatureCheck.parse(
            statusLines: """
                [GNUPG:] NEWSIG signer@example.org
                [GNUPG:] KEY_CONSIDERED \(Self.fpr) 0
                [GNUPG:] GOODSIG ADAB99EBABD8008E Test Signer <signer@example.org>
                [GNUPG:] VALIDSIG \(Self.fpr) 2026-11-28 1795828739 0 4 0 22 8 00 \(Self.fpr)
                [GNUPG:] TRUST_ULTIMATE 0 pgp
                """)
        var good = SignatureStatus(status: "good")
        good.fingerprint = Self.fpr
        good.created = 1_795_828_739
        good.userid = "Test Signer <signer@example.org>"
        good.email = "signer@example.org"
        #expect(s == [good])
    }

    @Test func noUserIDWithoutFullValidity() {
        let s = SignatureCheck.parse(
            statusLines: """
                [GNUPG:] GOODSIG ADAB99EBABD8008E Someone <someone@example.org>
                [GNUPG:] VALIDSIG \(Self.fpr) 2026-11-28 1795828739 1800000000 4 0 22 8 00 \(Self.fpr)
                [GNUPG:] TRUST_UNDEFINED 0 pgp
                """)
        #expect(s.count == 1 && s[0].status == "good" && s[0].userid == nil && s[0].email == nil && s[0].expires == 1_800_000_000)
    }

    @Test(arguments: [
        ("[GNUPG:] ERRSIG D74695063141ACD8 1 2 00 1258484454 9 -", "error", "D74695063141ACD8", ["key-missing"]),
        ("[GNUPG:] ERRSIG D74695063141ACD8 1 2 00 1258484454 4 -", "error", "D74695063141ACD8", ["sys-error"]),
        ("[GNUPG:] BADSIG ADAB99EBABD8008E Test Signer <signer@example.org>", "bad", "ADAB99EBABD8008E", []),
        ("[GNUPG:] EXPKEYSIG ADAB99EBABD8008E Old <old@example.org>", "error", "ADAB99EBABD8008E", ["key-expired"]),
        ("[GNUPG:] REVKEYSIG ADAB99EBABD8008E Old <old@example.org>", "error", "ADAB99EBABD8008E", ["key-revoked"]),
        ("[GNUPG:] EXPSIG ADAB99EBABD8008E Old <old@example.org>", "error", "ADAB99EBABD8008E", ["sig-expired"])
    ])
    func notGood(line: String, status: String, keyid: String, errors: [String]) {
        let s = SignatureCheck.parse(statusLines: "[GNUPG:] NEWSIG\n" + line + "\n")
        #expect(s.count == 1 && s[0].status == status && s[0].keyid == keyid && s[0].errors == errors && s[0].userid == nil)
    }

    @Test func twoSignaturesAndNoise() {
        let s = SignatureCheck.parse(
            statusLines: "gpg: some text\n[GNUPG:] NEWSIG\n[GNUPG:] BADSIG 1111111111111111 A\n[GNUPG:] NEWSIG\n"
                + "[GNUPG:] ERRSIG 2222222222222222 1 2 00 0 9 -\n")
        #expect(s.map(\.status) == ["bad", "error"] && s.map(\.keyid) == ["1111111111111111", "2222222222222222"])
        #expect(SignatureCheck.parse(statusLines: "").isEmpty)
    }

    static var gpgAvailable: Bool { (try? ChildProcess.run(["gpg", "--version"]).status) == 0 }

    /// A PGP/MIME message signed by a key of the test's own key ring.
    static func signedMessage(_ text: String, id: String, env: [String: String]) throws -> [UInt8] {
        let inner = "Content-Type: text/plain\r\n\r\n" + text
        let sig = try ChildProcess.run(["gpg", "--batch", "--armor", "--detach-sign"], input: Array(inner.utf8), environment: env)
        #expect(sig.status == 0, "\(sig.stderrString)")
        return Array(
            ("From: Signer <signer@example.org>\nTo: x@example.org\nSubject: signed\nMessage-ID: <\(id)>\nMIME-Version: 1.0\n"
                + "Content-Type: multipart/signed; micalg=pgp-sha256; protocol=\"application/pgp-signature\"; boundary=\"BB\"\n\n"
                + "--BB\n" + inner.replacingOccurrences(of: "\r\n", with: "\n") + "\n--BB\nContent-Type: application/pgp-signature\n\n"
                + sig.stdoutString + "\n--BB--\n").utf8)
    }

    @Test(.enabled(if: gpgAvailable)) func realSignatures() throws {
        let dir = try TemporaryDirectory("mo-gpg")
        defer { dir.remove() }
        let home = dir.path + "/gnupg", other = dir.path + "/other"
        for d in [home, other] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let env = ["GNUPGHOME": home]
        let made = try ChildProcess.run(
            ["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Test Signer <signer@example.org>", "ed25519", "sign", "never"],
            environment: env)
        #expect(made.status == 0, "\(made.stderrString)")
        let good = try Self.signedMessage("hello signed world", id: "good@example.org", env: env)
        let tampered = Array(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "hello", with: "HELLO").utf8)
        var ring = home
        func check(_ bytes: [UInt8]) -> [SignatureStatus]? {
            SignatureCheck.verify(MIMEParser.parse(bytes), in: bytes, environment: ["GNUPGHOME": ring])
        }
        let g = try #require(check(good))
        #expect(g.count == 1 && g[0].status == "good" && g[0].email == "signer@example.org" && g[0].fingerprint?.count == 40)
        #expect(check(tampered)?.first?.status == "bad")
        ring = other
        let unknown = try #require(check(good))
        #expect(unknown.first?.status == "error" && unknown.first?.errors == ["key-missing"] && unknown.first?.keyid?.count == 16)
        // Not a PGP/MIME signature: nothing to check.
        #expect(check(Array("Subject: x\n\nplain\n".utf8)) == nil)
    }
}
