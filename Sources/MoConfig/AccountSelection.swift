extension Config {
    /// The accounts named on a command line, in that order; all accounts when `names` is empty.
    public func selectAccounts(_ names: [String]) throws(ConfigError) -> [Account] {
        if names.isEmpty { return accounts }
        var selected: [Account] = []
        for name in names {
            guard let account = account(named: name) else {
                let known = accounts.map(\.name).joined(separator: ", ")
                throw ConfigError(file: path, problem: "no account named '\(name)' (accounts: \(known))")
            }
            if !selected.contains(where: { $0.name == name }) { selected.append(account) }
        }
        return selected
    }

    /// `account`'s Maildir root and IMAP server, for the commands that sync, check or index its mail.
    /// A send-only account gets `FILE:LINE: account.NAME: ...` naming what it lacks.
    public func syncPair(of account: Account) throws(ConfigError) -> Account.SyncPair {
        guard let pair = account.syncPair else {
            throw ConfigError(
                file: path, line: account.line, key: TOML.dottedKey(["account", account.name]),
                problem: "send-only account (no maildir, no [account.\(account.name).imap] or .jmap table): nothing to sync")
        }
        return pair
    }

    /// `account`'s IMAP server, for a command that does not serve JMAP accounts yet (`command`, as the user
    /// typed it): `FILE:LINE: account.NAME: ...` for a JMAP or send-only account.
    public func imapServer(of account: Account, for command: String) throws(ConfigError) -> (maildir: String, imap: IMAPConfig) {
        let pair = try syncPair(of: account)
        guard let imap = pair.imap else {
            throw ConfigError(
                file: path, line: account.line, key: TOML.dottedKey(["account", account.name]),
                problem: "a JMAP account: \(command) does not serve JMAP accounts yet (docs/jmap.md)")
        }
        return (pair.maildir, imap)
    }

    /// `account`'s SMTP server, for mo-sendmail: `FILE:LINE: account.NAME: ...` when it has none.
    public func smtp(of account: Account) throws(ConfigError) -> SMTPConfig {
        guard let smtp = account.smtp else {
            throw ConfigError(
                file: path, line: account.line, key: TOML.dottedKey(["account", account.name]),
                problem: "no [account.\(account.name).smtp] table (nor [account.\(account.name).jmap]): mo-sendmail needs one to send")
        }
        return smtp
    }
}
