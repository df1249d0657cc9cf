import MoConfig
import MoCore

/// The commented starting configuration `mo-sync init` writes: one account, its servers, a password-command
/// suggestion. Pure: text out, no I/O. Every value goes through `TOML.quoted`, so any address, path or
/// command reads back as itself; tests load every rendering with `ConfigLoader`.
///
/// Invariant: no password is ever written, only commands that print one.
public struct StarterConfig: Sendable, Equatable {
    public var address: String
    /// The `[account.NAME]` name; a bare TOML key (`TOML.isBareKey`).
    public var accountName: String
    /// The Maildir root as written (`~/Mail/NAME`).
    public var maildir: String
    public var settings: MailSettings
    /// `--password-command`; nil: the suggestion for `settings.login`.
    public var passwordCommand: String?
    /// `--oauth2-client-id`, for a provider that signs in with `mo-sync login`; nil: a placeholder to edit.
    public var clientID: String?

    public init(
        address: String, accountName: String, maildir: String, settings: MailSettings,
        passwordCommand: String? = nil, clientID: String? = nil
    ) {
        self.address = address
        self.accountName = accountName
        self.maildir = maildir
        self.settings = settings
        self.passwordCommand = passwordCommand
        self.clientID = clientID
    }

    /// The placeholder client id of a config written without `--oauth2-client-id`.
    public static let clientIDPlaceholder = "YOUR-CLIENT-ID"

    /// Whether the account signs in with `mo-sync login` (a built-in OAuth2 provider, no password).
    public var signsIn: Bool { settings.login == .oauth2 && settings.oauth2 != nil && passwordCommand == nil }

    /// The account name `init` picks without `--name`: the domain's first label, if it is a bare key
    /// ("example" for me@example.org), else "mail".
    public static func defaultAccountName(for address: String) -> String {
        let label = mailDomain(of: address)?.split(separator: ".").first.map(String.init) ?? ""
        return TOML.isBareKey(label) ? label : "mail"
    }

    /// The `pass`, `secret-tool` and `gpg` commands (with how to store the secret for each), and the active
    /// default for a login kind: `pass`, or an OAuth2 helper where only tokens are accepted.
    public static func passwordCommands(address: String, login: LoginKind) -> (
        suggestions: [(command: String, how: String)], active: String
    ) {
        let who = shellWord(address)
        let passName = shellWord("email/" + address)
        let suggestions = [
            ("pass show \(passName)", "pass(1); store it with: pass insert \(passName)"),
            ("secret-tool lookup mo \(who)", "GNOME Keyring or KWallet; store it with: secret-tool store --label=mo mo \(who)"),
            ("gpg --quiet --batch --decrypt ~/.config/mo/\(shellWord(address + ".gpg"))", "a file encrypted with gpg")
        ]
        switch login {
        case .oauth2: return (suggestions, "mutt_oauth2.py ~/.config/mo/\(shellWord(address + ".tokens"))")
        case .password, .appPassword: return (suggestions, "pass show \(passName)")
        }
    }

    public func render() -> String {
        var out: [String] = []
        func line(_ s: String = "") { out.append(s) }
        func comment(_ s: String) { out.append(s.isEmpty ? "#" : "# " + s) }
        func key(_ k: String, _ v: String) { out.append("\(k) = \(TOML.quoted(v))") }
        let s = settings
        let table = TOML.dottedKey(["account", accountName])
        let (suggestions, defaultCommand) = Self.passwordCommands(address: address, login: s.login)
        let command = passwordCommand ?? defaultCommand

        comment("mo configuration, written by `mo-sync init` for \(address).")
        comment("Servers: \(s.source).")
        comment("Every key is described in mo.toml(5). Check it with: mo-sync init --check")
        line()
        line("[\(table)]")
        key("address", address)
        comment("Where the mail is kept, one directory per folder; neomutt reads it directly.")
        key("maildir", maildir)
        if !s.notes.isEmpty {
            line()
            for note in s.notes { for part in wrapped(note, width: 98) { comment(part) } }
        }
        line()
        line("[\(table).imap]")
        server(s.imap, into: &out)
        if let ca = s.caFile { key("ca-file", ca) }
        if signsIn {
            comment("Signed in with `mo-sync login \(accountName)` (OAuth2, the [oauth2] table below): no password.")
        } else {
            comment("Never a password in this file: a command that prints it on its first line, such as")
            for (suggestion, how) in suggestions { comment("  \(suggestion)    (\(how))") }
            key("password-command", command)
        }
        if let jmap = s.jmap {
            line()
            comment("This provider also speaks JMAP (docs/jmap.md). To sync over it instead of IMAP, put this table")
            comment("in place of the [imap] one, with an API token that has mail access:")
            comment("[\(table).jmap]")
            comment("url = \(TOML.quoted(jmap))")
            comment("auth = \"bearer\"")
            comment("password-command = \(TOML.quoted(command))")
        }
        if let smtp = s.smtp {
            line()
            comment("For mo-sendmail (neomutt: set sendmail = \"mo-sendmail\").")
            line("[\(table).smtp]")
            server(smtp, into: &out)
            if let ca = s.caFile { key("ca-file", ca) }
            if !signsIn { key("password-command", command) }
            if !s.saveSent { line("save-sent = false") }
        } else {
            line()
            comment("No server for sending was found. For mo-sendmail, add:")
            comment("[\(table).smtp]")
            comment("host = \"smtp.example.org\"")
            comment("password-command = \(TOML.quoted(command))")
        }
        if s.gmailMode {
            line()
            comment("Each message once, labels as tags: see docs/gmail.md (\"off\" syncs every label as a folder).")
            line("[\(table).sync]")
            key("gmail-mode", "on")
            comment("Also sync Trash and Spam, and show labels as folders of links:")
            comment("gmail-folders = [\"Trash\", \"Spam\"]")
            comment("gmail-label-folders = [\"work\"]")
        }
        if signsIn, let o = s.oauth2 {
            line()
            comment("How `mo-sync login \(accountName)` signs in. The client is yours: register one with the provider")
            comment("(docs/oauth2.md says how) and put its id here.")
            line("[\(table).oauth2]")
            key("provider", o.provider)
            if let tenant = o.tenant { key("tenant", tenant) }
            key("client-id", clientID ?? Self.clientIDPlaceholder)
            if o.provider == "google" {
                comment("Google gives desktop clients a secret too: keep it in your password store, e.g.")
                comment("client-secret-command = \"pass show mo/google-client-secret\"")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }

    private func server(_ e: ServerEndpoint, into out: inout [String]) {
        if settings.guessed {
            out.append("# GUESSED from the domain: nothing was found for it. Check the host with your provider.")
        }
        out.append("host = \(TOML.quoted(e.host))")
        out.append("port = \(e.port)")
        out.append("# \"implicit\" is TLS from the first byte; \"starttls\" upgrades a plain connection first.")
        out.append("tls = \(TOML.quoted(e.tls.rawValue))")
        if let user = e.user, user != address {
            out.append("user = \(TOML.quoted(user))")
        } else {
            out.append("# user = \(TOML.quoted(address))   (the default: the address)")
        }
        // A token helper given as the password-command sends its token with XOAUTH2.
        let auth = e.auth == .oauth2 && !signsIn ? AuthMethod.xoauth2 : e.auth
        if auth != .auto { out.append("auth = \(TOML.quoted(auth.rawValue))") }
    }
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole).
func wrapped(_ text: String, width: Int) -> [String] {
    var lines: [String] = [], current = ""
    for word in text.split(separator: " ") {
        if !current.isEmpty && current.count + 1 + word.count > width { lines.append(current); current = "" }
        current += (current.isEmpty ? "" : " ") + word
    }
    if !current.isEmpty { lines.append(current) }
    return lines
}

/// `s` as one word for /bin/sh: as it is when it holds only characters the shell leaves alone, else in
/// single quotes (a `'` inside written as `'\''`).
func shellWord(_ s: String) -> String {
    let plain =
        !s.isEmpty
        && s.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "@%+=:,./_-".unicodeScalars.contains($0)
        }
    if plain { return s }
    var out = "'"
    for ch in s { out += ch == "'" ? "'\\''" : String(ch) }
    return out + "'"
}

extension StarterConfig {
    /// Why `address` cannot start a configuration, or nil: it needs one `@` with text on both sides, and
    /// no space or control character (it is written into comments and shell commands).
    public static func addressProblem(_ address: String) -> String? {
        guard let at = address.lastIndex(of: "@"), at != address.startIndex, address.index(after: at) != address.endIndex else {
            return "'\(escapedForMessage(address))' is not an email address."
        }
        if address.unicodeScalars.contains(where: { $0 == " " || $0.value < 0x20 || isTerminalControl($0) || $0.properties.isWhitespace }) {
            return "'\(escapedForMessage(address))' is not an email address: it holds a space or a control character."
        }
        return nil
    }
}
