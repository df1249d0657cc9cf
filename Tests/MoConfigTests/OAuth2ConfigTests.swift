import MoCore
import MoTestSupport
import Testing

@testable import MoConfig

/// `[account.NAME.oauth2]` and `auth = "oauth2"`: what is read, and each mistake named by file, line and key.
@Suite struct OAuth2ConfigTests {
    static func text(imapAuth: String = "oauth2", oauth2: String) -> String {
        """
        [account.work]
        address = "me@outlook.com"
        maildir = "/m"
        [account.work.imap]
        host = "outlook.office365.com"
        auth = "\(imapAuth)"
        [account.work.smtp]
        host = "smtp-mail.outlook.com"
        tls = "starttls"
        auth = "oauth2"
        \(oauth2)
        """
    }

    @Test func readWithoutAPasswordCommand() throws {
        let a = try #require(
            try loadConfig(
                Self.text(oauth2: "[account.work.oauth2]\nprovider = \"Microsoft\"\ntenant = \"consumers\"\nclient-id = \"abc\"")
            ).accounts.first)
        #expect(a.imap?.auth == .oauth2 && a.imap?.passwordCommand == nil && a.smtp?.auth == .oauth2)
        #expect(a.oauth2 == OAuth2Config(provider: "microsoft", tenant: "consumers", clientID: "abc"))
        let issuer = try loadConfig(
            Self.text(
                oauth2:
                    "[account.work.oauth2]\nissuer = \"https://id.example\"\nscopes = [\"mail\"]\nclient-id = \"abc\"\nclient-secret-command = \"pass x\""
            ))
        #expect(issuer.accounts[0].oauth2?.issuer == "https://id.example" && issuer.accounts[0].oauth2?.scopes == ["mail"])
        #expect(issuer.accounts[0].oauth2?.clientSecretCommand == PasswordCommand("pass x", account: "work"))
    }

    @Test(arguments: [
        ("", ":1: account.work: [account.work.imap] says auth = \"oauth2\"; add an [account.work.oauth2] table (docs/oauth2.md)"),
        ("[account.work.oauth2]\nprovider = \"google\"", ":11: account.work.oauth2: missing required key 'client-id'"),
        ("[account.work.oauth2]\nclient-id = \"a\"", ":11: account.work.oauth2: give provider (google, microsoft) or issuer"),
        (
            "[account.work.oauth2]\nclient-id = \"a\"\nprovider = \"yahoo\"",
            ":13: account.work.oauth2.provider: 'yahoo' is not a built-in provider (google, microsoft); give its issuer instead"
        ),
        (
            "[account.work.oauth2]\nclient-id = \"a\"\nprovider = \"google\"\nissuer = \"https://x\"",
            ":14: account.work.oauth2.issuer: give provider or issuer, not both"
        ),
        (
            "[account.work.oauth2]\nclient-id = \"a\"\nissuer = \"http://id.example\"",
            ":13: account.work.oauth2.issuer: 'http://id.example' is not an https address"
        ),
        (
            "[account.work.oauth2]\nclient-id = \"a\"\nissuer = \"http://127.0.0.1.attacker.example\"",
            ":13: account.work.oauth2.issuer: 'http://127.0.0.1.attacker.example' is not an https address"
        ),
        (
            "[account.work.oauth2]\nclient-id = \"a\"\nprovider = \"google\"\ntenant = \"x\"",
            ":14: account.work.oauth2.tenant: only the microsoft provider has a tenant"
        )
    ])
    func mistakesAreNamed(oauth2: String, error: String) {
        #expect(configError(Self.text(oauth2: oauth2)) == "/p/config.toml" + error)
    }

    /// A password account is unchanged: `[imap]` without auth = "oauth2" still needs its password-command.
    @Test func passwordAccountsStillNeedTheCommand() {
        #expect(configError(Self.text(imapAuth: "auto", oauth2: ""))?.hasSuffix("missing required key 'password-command'") == true)
    }
}
