import MoCore

/// The configuration tables that log in to the private servers, in one place: every test that syncs or
/// sends through them writes the same keys.
extension TestServer {
    /// A configuration of one account `test` on this Dovecot: state, index and Maildir under `dir`.
    public func accountConfig(in dir: String, address: String = "mo@example.com") -> String {
        """
        [general]
        state-dir = "\(dir)/state"
        index-dir = "\(dir)/index"
        [account.test]
        address = "\(address)"
        maildir = "\(dir)/Mail"

        """ + imapTable()
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
