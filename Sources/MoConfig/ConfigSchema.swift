import MoCore

/// The configuration schema: which keys exist, their types, defaults and checks.
/// config/mo.toml documents the same keys; keep the two in step.
struct ConfigSchema {
    let file: String
    let xdg: XDGPaths
    let paths: PathExpander

    static let rootKeys = ["general", "account", "keywords", "tag-rule"]
    static let generalKeys = ["state-dir", "index-dir", "queue-lifetime", "send-delay", "snooze-folder"]
    static let accountKeys = ["address", "aliases", "maildir", "layout", "folders", "imap", "jmap", "smtp", "sync", "oauth2"]
    static let oauth2Keys = ["provider", "tenant", "issuer", "scopes", "client-id", "client-secret-command"]
    static let serverKeys = ["host", "port", "tls", "user", "password-command", "ca-file", "auth"]
    static let imapKeys = serverKeys + ["timeout"]
    static let smtpKeys = serverKeys + ["save-sent"]
    static let jmapKeys = ["url", "user", "password-command", "auth", "ca-file", "timeout", "save-sent"]
    static let syncKeys = [
        "new", "flags", "delete", "create", "expunge", "max-delete-percent", "connections", "daily-download",
        "max-age", "max-age-folders", "max-age-keeps", "expire-local", "max-size",
        "keywords", "watch", "poll-interval", "gmail-mode", "gmail-delete", "gmail-folders", "gmail-label-folders", "jmap-delete",
        "jmap-mailbox-folders"
    ]

    func read(_ root: TOMLTable) throws(ConfigError) -> Config {
        let top = try TableReader(root, path: [], file: file, known: Self.rootKeys)

        var stateDirectory = xdg.defaultStateDirectory
        var indexDirectory = xdg.defaultIndexDirectory
        var queueLifetime = Config.defaultQueueLifetime
        var sendDelay = 0, snoozeFolder = Config.defaultSnoozeFolder
        if let general = try top.table("general", known: Self.generalKeys) {
            if let dir = try path(general, "state-dir") { stateDirectory = dir }
            if let dir = try path(general, "index-dir") { indexDirectory = dir }
            if let text = try general.string("queue-lifetime") {
                guard let seconds = DurationText.parse(text) else {
                    throw general.error(at: "queue-lifetime", "'\(text)' is not a duration such as \"5d\", \"12h\", \"30m\"")
                }
                queueLifetime = seconds
            }
            if let text = try general.string("send-delay") {
                guard let seconds = text == "0" || text == "0s" ? 0 : DurationText.parse(text), seconds <= 3_600 else {
                    throw general.error(at: "send-delay", "'\(text)' is not a delay such as \"10s\", \"1m\" (at most 1h; \"0\" for none)")
                }
                sendDelay = seconds
            }
            if let name = try general.string("snooze-folder") {
                guard !name.isEmpty, !name.contains(where: { $0.isASCII && ($0.asciiValue! < 0x20 || $0 == "*" || $0 == "%") }),
                    name.uppercased() != "INBOX"
                else {
                    throw general.error(at: "snooze-folder", "'\(name)' is not a folder name mo-index snooze can use")
                }
                snoozeFolder = name
            }
        }

        var accounts: [Account] = []
        if let accountTable = try top.table("account", known: root.entry("account").flatMap(Self.tableKeys) ?? []) {
            for entry in accountTable.table.entries {
                accounts.append(try readAccount(entry.key, in: accountTable))
            }
            try checkAddressesUnique(accounts, accountTable)
        }
        guard !accounts.isEmpty else {
            throw ConfigError(file: file, problem: "no [account.NAME] table; see config/mo.toml for an example")
        }
        var config = Config(
            path: file, stateDirectory: stateDirectory, indexDirectory: indexDirectory,
            queueLifetime: queueLifetime, accounts: accounts,
            keywords: try readKeywords(root, top), tagRules: try readTagRules(root, top))
        config.sendDelay = sendDelay
        config.snoozeFolder = snoozeFolder
        return config
    }

    /// Under `[account]` every key is an account name, so all of them are "known".
    static func tableKeys(_ entry: TOMLTable.Entry) -> [String]? {
        guard case .table(let t) = entry.node.value else { return nil }
        return t.keys
    }

    private func readAccount(_ name: String, in accounts: TableReader) throws(ConfigError) -> Account {
        guard !name.isEmpty, name.utf8.allSatisfy(TOML.isBareKeyByte) else {
            throw accounts.error(at: name, "account names may contain only letters, digits, '_' and '-' (the name is used for state files)")
        }
        // Present by construction: `name` is a key of `accounts`.
        guard let a = try accounts.table(name, known: Self.accountKeys) else { throw accounts.missing(name) }

        guard let address = try a.nonEmptyString("address") else { throw a.missing("address") }
        try checkAddress(address, a, "address")
        let aliases = try a.stringArray("aliases") ?? []
        for (n, alias) in aliases.enumerated() where !Self.isAddress(alias) {
            throw ConfigError(
                file: file, line: a.table["aliases"]!.value.elementLine(n), key: a.name("aliases") + "[\(n)]",
                problem: "'\(alias)' is not an email address")
        }
        let maildir = try path(a, "maildir")
        let layout = try a.choice("layout", MaildirLayout.self) ?? .verbatim
        let folders = try a.stringArray("folders") ?? ["*"]
        for (n, pattern) in folders.enumerated() where pattern == "!" {
            throw ConfigError(
                file: file, line: a.table["folders"]!.value.elementLine(n), key: a.name("folders") + "[\(n)]",
                problem: "'!' needs a pattern after it")
        }

        let imap = try a.table("imap", known: Self.imapKeys).map { (r) throws(ConfigError) in
            try readIMAP(r, account: name, address: address)
        }
        let smtp = try a.table("smtp", known: Self.smtpKeys).map { (r) throws(ConfigError) in
            try readSMTP(r, account: name, address: address)
        }
        let oauth2 = try a.table("oauth2", known: Self.oauth2Keys).map { (r) throws(ConfigError) in
            try readOAuth2(r, account: name)
        }
        let jmap = try a.table("jmap", known: Self.jmapKeys).map { (r) throws(ConfigError) in
            try readJMAP(r, account: name, address: address)
        }
        for (key, auth) in [("imap", imap?.auth), ("smtp", smtp?.auth)] where auth == .oauth2 && oauth2 == nil {
            throw a.tableError("[\(a.name(key))] says auth = \"oauth2\"; add an [\(a.name("oauth2"))] table (docs/oauth2.md)")
        }
        if jmap?.auth == .oauth2 && oauth2 == nil {
            throw a.tableError("[\(a.name("jmap"))] says auth = \"oauth2\"; add an [\(a.name("oauth2"))] table (docs/oauth2.md)")
        }
        if imap != nil && jmap != nil {
            throw a.tableError("both [\(a.name("imap"))] and [\(a.name("jmap"))]: an account syncs with one server; make two accounts")
        }
        // Synced (maildir and [imap] or [jmap]) or send-only ([smtp] alone): never half of the synced pair.
        switch (maildir, imap != nil || jmap != nil, smtp) {
        case (nil, false, nil):
            throw a.tableError(
                "missing required table 'imap' and key 'maildir' (or an [\(a.name("smtp"))] table alone, for a send-only account)")
        case (nil, true, _): throw a.missing("maildir")
        case (_?, false, _): throw a.tableError("missing required table 'imap' (or 'jmap')")
        default: break
        }
        var sync = SyncConfig()
        if let s = try a.table("sync", known: Self.syncKeys) {
            sync = try readSync(s)
        }
        return Account(
            name: name, address: address, aliases: aliases, maildir: maildir, layout: layout,
            folders: FolderFilter(patterns: folders), imap: imap, smtp: smtp, oauth2: oauth2, sync: sync,
            line: a.table.line, jmap: jmap)
    }

    private func readIMAP(_ r: TableReader, account: String, address: String) throws(ConfigError) -> IMAPConfig {
        let common = try readServer(r, account: account, address: address)
        guard common.passwordCommand != nil || common.auth == .oauth2 else { throw r.missing("password-command") }
        var timeout = IMAPConfig.defaultTimeout
        if let text = try r.string("timeout") {
            guard let seconds = DurationText.parse(text) else {
                throw r.error(at: "timeout", "'\(text)' is not a duration such as \"30s\", \"2m\"")
            }
            timeout = seconds
        }
        return IMAPConfig(
            host: common.host, port: common.port ?? IMAPConfig.defaultPort(for: common.tls),
            tls: common.tls, user: common.user, passwordCommand: common.passwordCommand, caFile: common.caFile,
            auth: common.auth, timeout: timeout)
    }

    private func readJMAP(_ r: TableReader, account: String, address: String) throws(ConfigError) -> JMAPConfig {
        let url: String
        if let given = try r.nonEmptyString("url") {
            guard isHTTPSOrLoopbackAddress(given) else {
                throw r.error(at: "url", "'\(given)' is not an https address (plain http only to a loopback host)")
            }
            url = given
        } else if let found = JMAPConfig.wellKnown(forAddress: address) {
            url = found
        } else {
            throw r.missing("url")
        }
        let auth = try r.choice("auth", JMAPConfig.Auth.self) ?? .basic
        let command = try r.nonEmptyString("password-command").map { PasswordCommand($0, account: account) }
        guard command != nil || auth == .oauth2 else { throw r.missing("password-command") }
        var timeout = IMAPConfig.defaultTimeout
        if let text = try r.string("timeout") {
            guard let seconds = DurationText.parse(text) else {
                throw r.error(at: "timeout", "'\(text)' is not a duration such as \"30s\", \"2m\"")
            }
            timeout = seconds
        }
        return JMAPConfig(
            url: url, user: try r.nonEmptyString("user") ?? address, passwordCommand: command, auth: auth, caFile: try path(r, "ca-file"),
            timeout: timeout, saveSent: try r.bool("save-sent") ?? true, discovered: try r.nonEmptyString("url") == nil)
    }

    private func readSMTP(_ r: TableReader, account: String, address: String) throws(ConfigError) -> SMTPConfig {
        let common = try readServer(r, account: account, address: address)
        return SMTPConfig(
            host: common.host, port: common.port ?? SMTPConfig.defaultPort(for: common.tls),
            tls: common.tls, user: common.user, passwordCommand: common.passwordCommand,
            caFile: common.caFile, auth: common.auth, saveSent: try r.bool("save-sent") ?? true)
    }

    private struct ServerFields {
        var host: String
        var port: Int?
        var tls: TLSMode
        var user: String
        var passwordCommand: PasswordCommand?
        var caFile: String?
        var auth: AuthMethod
    }

    private func readServer(_ r: TableReader, account: String, address: String) throws(ConfigError) -> ServerFields {
        guard let host = try r.nonEmptyString("host") else { throw r.missing("host") }
        if host.contains(where: { $0 == " " || $0 == "\t" || $0 == "/" }) {
            throw r.error(at: "host", "'\(host)' is not a host name")
        }
        let port = try r.integer("port", in: 1...65535)
        let tls = try r.choice("tls", TLSMode.self) ?? .implicit
        if tls == .none && !isLoopbackHost(host) {
            throw r.error(
                at: "tls",
                "\"none\" sends the password in clear text; it is only allowed to a loopback host (127.0.0.1, ::1, localhost), not \(host)")
        }
        return ServerFields(
            host: host, port: port, tls: tls,
            user: try r.nonEmptyString("user") ?? address,
            passwordCommand: try r.nonEmptyString("password-command").map { PasswordCommand($0, account: account) },
            caFile: try path(r, "ca-file"),
            auth: try r.choice("auth", AuthMethod.self) ?? .auto)
    }

    private func readOAuth2(_ r: TableReader, account: String) throws(ConfigError) -> OAuth2Config {
        guard let clientID = try r.nonEmptyString("client-id") else { throw r.missing("client-id") }
        let provider = try r.nonEmptyString("provider").map { $0.lowercased() }
        let issuer = try r.nonEmptyString("issuer")
        if let provider, !OAuth2Config.providers.contains(provider) {
            throw r.error(at: "provider", "'\(provider)' is not a built-in provider (google, microsoft); give its issuer instead")
        }
        switch (provider, issuer) {
        case (nil, nil): throw r.tableError("give provider (google, microsoft) or issuer")
        case (_?, _?): throw r.error(at: "issuer", "give provider or issuer, not both")
        default: break
        }
        if let issuer, !isHTTPSOrLoopbackAddress(issuer) {
            throw r.error(at: "issuer", "'\(issuer)' is not an https address")
        }
        let tenant = try r.nonEmptyString("tenant")
        if tenant != nil && provider != "microsoft" { throw r.error(at: "tenant", "only the microsoft provider has a tenant") }
        return OAuth2Config(
            provider: provider, tenant: tenant, issuer: issuer, scopes: try r.stringArray("scopes") ?? [], clientID: clientID,
            clientSecretCommand: try r.nonEmptyString("client-secret-command").map { PasswordCommand($0, account: account) })
    }

    private func readSync(_ r: TableReader) throws(ConfigError) -> SyncConfig {
        var s = SyncConfig()
        if let v = try r.choice("new", SyncDirection.self) { s.new = v }
        if let v = try r.choice("flags", SyncDirection.self) { s.flags = v }
        if let v = try r.choice("delete", SyncDirection.self) { s.delete = v }
        if let v = try r.choice("create", SyncSide.self) { s.create = v }
        if let v = try r.choice("expunge", SyncSide.self) { s.expunge = v }
        if let v = try r.integer("max-delete-percent", in: 0...100) { s.maxDeletePercent = v }
        if let v = try r.integer("connections", in: 1...16) { s.connections = v }
        if let v = try r.bool("keywords") { s.keywords = v }
        if let v = try r.stringArray("watch") { s.watch = v }
        if let v = try r.integer("poll-interval", in: 10...86_400) { s.pollInterval = v }
        if let v = try r.choice("gmail-mode", GmailMode.self) { s.gmailMode = v }
        if let v = try r.choice("gmail-delete", GmailDeletion.self) { s.gmailDelete = v }
        if let v = try r.choice("jmap-delete", JMAPDeletion.self) { s.jmapDelete = v }
        for (key, what) in [("gmail-label-folders", "label"), ("jmap-mailbox-folders", "mailbox")] {
            guard let names = try r.stringArray(key) else { continue }
            for name in names where name.isEmpty || name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw r.error(at: key, "\(quotedForMessage(name)) is not a \(what) name")
            }
            if key == "gmail-label-folders" { s.gmailLabelFolders = names } else { s.jmapMailboxFolders = names }
        }
        if let names = try r.stringArray("gmail-folders") {
            s.gmailFolders = []
            for name in names {
                guard let folder = GmailFolder(rawValue: name) else {
                    throw r.error(at: "gmail-folders", "'\(name)' is not one of Gmail's folders Gmail mode can sync (Trash, Spam)")
                }
                if !s.gmailFolders.contains(folder) { s.gmailFolders.append(folder) }
            }
        }
        try readWindow(r, into: &s)
        if let text = try r.string("daily-download") {
            guard let bytes = SizeText.parse(text) else {
                throw r.error(at: "daily-download", "'\(text)' is not a size such as \"2500M\", \"2G\", \"0\"")
            }
            s.dailyDownload = bytes
        }
        return s
    }

    /// `max-age`, `max-age-folders`, `max-age-keeps`, `expire-local`.
    private func readWindow(_ r: TableReader, into s: inout SyncConfig) throws(ConfigError) {
        let example = "such as \"365d\", \"12w\", \"2y\" or \"2024-01-01\""
        if let text = try r.string("max-age") {
            guard let age = MaxAge(text) else { throw r.error(at: "max-age", "'\(text)' is not an age \(example)") }
            s.maxAge = age
        }
        if let folders = try r.table(
            "max-age-folders",
            known: r.table["max-age-folders"].flatMap { node in
                if case .table(let t) = node.value { t.entries.map(\.key) } else { nil }
            } ?? [])
        {
            for entry in folders.table.entries {
                guard let text = try folders.string(entry.key) else { continue }
                if text == "none" {
                    s.maxAgeFolders[entry.key] = .some(nil)
                } else if let age = MaxAge(text) {
                    s.maxAgeFolders[entry.key] = age
                } else {
                    throw folders.error(at: entry.key, "'\(text)' is not an age \(example), or \"none\"")
                }
            }
        }
        if let keeps = try r.stringArray("max-age-keeps") {
            for keep in keeps where keep != "flagged" && keep != "unread" {
                throw r.error(at: "max-age-keeps", "'\(keep)' is not one of flagged, unread")
            }
            s.maxAgeKeepsFlagged = keeps.contains("flagged")
            s.maxAgeKeepsUnread = keeps.contains("unread")
        }
        if let v = try r.bool("expire-local") { s.expireLocal = v }
        if let text = try r.string("max-size") {
            guard let bytes = SizeText.parse(text), bytes > 0 else {
                throw r.error(at: "max-size", "'\(text)' is not a size such as \"2M\", \"512K\"")
            }
            s.maxSize = bytes
        }
    }

    /// A path-valued key, expanded and made absolute.
    private func path(_ r: TableReader, _ key: String) throws(ConfigError) -> String? {
        guard let raw = try r.string(key) else { return nil }
        switch paths.expand(raw) {
        case .success(let p): return p
        case .failure(let problem): throw r.error(at: key, problem.message)
        }
    }

    private func checkAddress(_ address: String, _ r: TableReader, _ key: String) throws(ConfigError) {
        if !Self.isAddress(address) { throw r.error(at: key, "'\(address)' is not an email address") }
    }

    /// Light check: one `@` with text on both sides and no spaces; the server is the real judge.
    static func isAddress(_ s: String) -> Bool {
        let parts = s.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count >= 2 && !parts.first!.isEmpty && !parts.last!.isEmpty && !s.contains(where: \.isWhitespace)
    }

    /// An address must select one account only, or `account(forAddress:)` would be ambiguous.
    private func checkAddressesUnique(_ accounts: [Account], _ accountTable: TableReader) throws(ConfigError) {
        var owner: [String: String] = [:]
        for account in accounts {
            for (n, address) in ([account.address] + account.aliases).enumerated() {
                let lower = address.lowercased()
                if let other = owner[lower], other != account.name {
                    guard case .table(let t)? = accountTable.table[account.name]?.value else { continue }
                    let key = n == 0 ? "address" : "aliases"
                    let line = n == 0 ? t.entry("address")?.line : t["aliases"]?.value.elementLine(n - 1)
                    throw ConfigError(
                        file: file, line: line ?? t.line,
                        key: TOML.dottedKey(["account", account.name, key]) + (n == 0 ? "" : "[\(n - 1)]"),
                        problem: "\(address) is already used by account '\(other)'")
                }
                owner[lower] = account.name
            }
        }
    }
}

private extension TOMLValue {
    /// Line of the array element at `index` (1 if this is not an array or the index is out of range).
    func elementLine(_ index: Int) -> Int {
        guard case .array(let elements) = self, elements.indices.contains(index) else { return 1 }
        return elements[index].line
    }
}
