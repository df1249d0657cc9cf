import MoCore

/// `[general]` (state, index under `dir`) and `[account.NAME]` (Maildir `dir/Mail`): the start of every test
/// configuration.
public func accountHeader(in dir: String, account: String, address: String) -> String {
    """
    [general]
    state-dir = "\(dir)/state"
    index-dir = "\(dir)/index"
    [account.\(account)]
    address = "\(address)"
    maildir = "\(dir)/Mail"

    """
}

/// An account `work` that signs in at `issuer` (scripts/test-oauth2-server, client `mo-test-client`) with
/// `auth = "oauth2"`; its `[imap]` table is `imap`'s IMAPS port and CA when given.
public func oauth2AccountConfig(in dir: String, issuer: String, imap: TestServer? = nil) -> String {
    let server = imap.map { "port = \($0.imapsPort)\nca-file = \"\($0.caFile)\"\n" } ?? ""
    return accountHeader(in: dir, account: "work", address: "me@example.com")
        + "[account.work.imap]\nhost = \"127.0.0.1\"\nauth = \"oauth2\"\n\(server)"
        + "[account.work.oauth2]\nissuer = \"\(issuer)\"\nscopes = [\"mail\"]\nclient-id = \"mo-test-client\"\n"
}

/// The configuration tables that log in to the private servers, in one place: every test that syncs or
/// sends through them writes the same keys.
extension TestServer {
    /// A configuration of one account `test` on this Dovecot: state, index and Maildir under `dir`.
    public func accountConfig(in dir: String, address: String = "mo@example.com") -> String {
        accountHeader(in: dir, account: "test", address: address) + imapTable()
    }

    /// `[account.NAME.imap]` over IMAPS with this server's login, CA and (unless given) port and password.
    public func imapTable(account: String = "test", port: Int? = nil, password: String? = nil) -> String {
        """
        [account.\(account).imap]
        host = "127.0.0.1"
        port = \(port ?? imapsPort)
        user = "\(user)"
        password-command = "echo \(password ?? self.password)"
        ca-file = "\(caFile)"

        """
    }
}

extension SubmissionServers {
    /// `[account.NAME.smtp]` with STARTTLS and Postfix's login and CA, on the submission port unless given.
    public func smtpTable(account: String = "test", port: Int? = nil, password: String? = nil) -> String {
        """
        [account.\(account).smtp]
        host = "127.0.0.1"
        port = \(port ?? submissionPort)
        tls = "starttls"
        user = "\(user)"
        password-command = "echo \(password ?? self.password)"
        ca-file = "\(caFile)"

        """
    }
}

/// The smallest valid configuration: account `work` on a server nothing connects to, for what is decided
/// before any connection. Six lines; the config error tests count on the layout.
public func minimalConfig(maildir: String = "~/Mail/work") -> String {
    """
    [account.work]
    address = "me@example.com"
    maildir = "\(maildir)"
    [account.work.imap]
    host = "imap.example.com"
    password-command = "pass show mail/work"
    """
}

/// Writes a file only its owner can read, as a config file should be (others get a warning).
public func writePrivateFile(_ path: String, _ text: String) throws {
    let r = try ChildProcess.run(["sh", "-c", "umask 077 && cat > \"$0\"", path], input: Array(text.utf8))
    if r.status != 0 { throw GenericError(.localIO, "cannot write \(path)") }
}
