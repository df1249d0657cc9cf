import MoCore
import MoTestSupport
import Testing
@testable import MoConfig

let testEnvironment = ["HOME": "/home/u"]

func loadConfig(_ text: String) throws -> Config {
    try ConfigLoader.parse(text: text, path: "/p/config.toml", environment: testEnvironment)
}

/// The `description` of the error `text` produces, or nil if it loads.
func configError(_ text: String) -> String? {
    do {
        _ = try ConfigLoader.parse(text: text, path: "/p/config.toml", environment: testEnvironment)
        return nil
    } catch {
        #expect(error.kind == .config)
        return error.description
    }
}

/// (config text, exact error description); line numbers count `minimalConfig()`'s six lines.
let errorCases: [(String, String)] = [
    // Unknown keys, with and without a suggestion
    (
        minimalConfig() + "\nprot = 993",
        "/p/config.toml:7: account.work.imap.prot: unknown key (did you mean 'port'?)"
    ),
    (
        minimalConfig() + "\nfrobnicate = 1",
        "/p/config.toml:7: account.work.imap.frobnicate: unknown key"
    ),
    (
        "[acount.work]\n" + minimalConfig(),
        "/p/config.toml:1: acount: unknown key (did you mean 'account'?)"
    ),
    (
        minimalConfig() + "\n[account.work.imapp]",
        "/p/config.toml:7: account.work.imapp: unknown key (did you mean 'imap'?)"
    ),
    // Types
    (
        minimalConfig() + "\nport = \"993\"",
        "/p/config.toml:7: account.work.imap.port: expected an integer, found a string"
    ),
    (
        "[general]\nstate-dir = 5\n" + minimalConfig(),
        "/p/config.toml:2: general.state-dir: expected a string, found an integer"
    ),
    (
        minimalConfig().replacingOccurrences("maildir = \"~/Mail/work\"", "maildir = \"~/Mail/work\"\nfolders = [\"*\", 1]"),
        "/p/config.toml:4: account.work.folders[1]: expected a string, found an integer"
    ),
    (
        "account = 1",
        "/p/config.toml:1: account: expected a table, found an integer"
    ),
    // Missing keys and tables
    (
        minimalConfig().replacingOccurrences("host = \"imap.example.com\"\n", ""),
        "/p/config.toml:4: account.work.imap: missing required key 'host'"
    ),
    (
        minimalConfig().replacingOccurrences("address = \"me@example.com\"\n", ""),
        "/p/config.toml:1: account.work: missing required key 'address'"
    ),
    (
        minimalConfig().replacingOccurrences("maildir = \"~/Mail/work\"\n", ""),
        "/p/config.toml:1: account.work: missing required key 'maildir'"
    ),
    (
        minimalConfig().replacingOccurrences("password-command = \"pass show mail/work\"", ""),
        "/p/config.toml:4: account.work.imap: missing required key 'password-command'"
    ),
    (
        "[account.work]\naddress = \"me@example.com\"\nmaildir = \"/m\"\n",
        "/p/config.toml:1: account.work: missing required table 'imap' (or 'jmap')"
    ),
    (
        "[general]\n",
        "/p/config.toml: no [account.NAME] table; see config/mo.toml for an example"
    ),
    // Synced (maildir + [imap]) or send-only ([smtp] alone), never half
    (
        "[account.work]\naddress = \"me@example.com\"\n",
        "/p/config.toml:1: account.work: missing required table 'imap' and key 'maildir' (or an [account.work.smtp] table alone, for a send-only account)"
    ),
    (
        minimalConfig().replacingOccurrences("maildir = \"~/Mail/work\"\n", "") + "\n[account.work.smtp]\nhost = \"s.example.com\"",
        "/p/config.toml:1: account.work: missing required key 'maildir'"
    ),
    (
        "[account.work]\naddress = \"me@example.com\"\nmaildir = \"/m\"\n[account.work.smtp]\nhost = \"s.example.com\"\n",
        "/p/config.toml:1: account.work: missing required table 'imap' (or 'jmap')"
    ),
    (
        "[general]\nqueue-lifetime = \"5\"\n" + minimalConfig(),
        "/p/config.toml:2: general.queue-lifetime: '5' is not a duration such as \"5d\", \"12h\", \"30m\""
    ),
    (
        "[general]\nqueue-lifetime = 5\n" + minimalConfig(),
        "/p/config.toml:2: general.queue-lifetime: expected a string, found an integer"
    ),
    (
        minimalConfig() + "\ntimeout = \"0s\"",
        "/p/config.toml:7: account.work.imap.timeout: '0s' is not a duration such as \"30s\", \"2m\""
    ),
    // Enumerations
    (
        minimalConfig() + "\ntls = \"ssl\"",
        "/p/config.toml:7: account.work.imap.tls: 'ssl' is not one of implicit, starttls, none"
    ),
    (
        minimalConfig().replacingOccurrences("[account.work.imap]", "layout = \"maildir\"\n[account.work.imap]"),
        "/p/config.toml:4: account.work.layout: 'maildir' is not one of verbatim, maildir++"
    ),
    (
        minimalConfig() + "\n[account.work.sync]\nnew = \"pull-only\"",
        "/p/config.toml:8: account.work.sync.new: 'pull-only' is not one of both, pull, push, none"
    ),
    (
        minimalConfig() + "\n[account.work.sync]\nexpunge = \"pull\"",
        "/p/config.toml:8: account.work.sync.expunge: 'pull' is not one of both, local, remote, none"
    ),
    // Plain text only to loopback
    (
        minimalConfig().replacingOccurrences("host = \"imap.example.com\"", "host = \"imap.example.com\"\ntls = \"none\""),
        "/p/config.toml:6: account.work.imap.tls: \"none\" sends the password in clear text; it is only allowed to a loopback host (127.0.0.1, ::1, localhost), not imap.example.com"
    ),
    (
        minimalConfig() + "\n[account.work.smtp]\nhost = \"10.0.0.1\"\ntls = \"none\"",
        "/p/config.toml:9: account.work.smtp.tls: \"none\" sends the password in clear text; it is only allowed to a loopback host (127.0.0.1, ::1, localhost), not 10.0.0.1"
    ),
    // Ranges
    (
        minimalConfig() + "\nport = 70000",
        "/p/config.toml:7: account.work.imap.port: 70000 is out of range 1..65535"
    ),
    (
        minimalConfig() + "\n[account.work.sync]\nmax-delete-percent = 101",
        "/p/config.toml:8: account.work.sync.max-delete-percent: 101 is out of range 0..100"
    ),
    (
        minimalConfig() + "\n[account.work.sync]\nconnections = 0",
        "/p/config.toml:8: account.work.sync.connections: 0 is out of range 1..16"
    ),
    (
        minimalConfig() + "\n[account.work.sync]\npoll-interval = 5",
        "/p/config.toml:8: account.work.sync.poll-interval: 5 is out of range 10..86400"
    ),
    // Names, addresses, paths
    (
        minimalConfig().replacingOccurrences("account.work", "account.\"my work\""),
        "/p/config.toml:1: account.\"my work\": account names may contain only letters, digits, '_' and '-' (the name is used for state files)"
    ),
    (
        minimalConfig().replacingOccurrences("address = \"me@example.com\"", "address = \"me\""),
        "/p/config.toml:2: account.work.address: 'me' is not an email address"
    ),
    (
        minimalConfig() + "\n" + minimalConfig().replacingOccurrences("work", "other"),
        "/p/config.toml:8: account.other.address: me@example.com is already used by account 'work'"
    ),
    (
        minimalConfig().replacingOccurrences("~/Mail/work", "~bob/Mail"),
        "/p/config.toml:3: account.work.maildir: '~bob/Mail': only '~' and '~/' are expanded; write the full path"
    ),
    // TOML syntax errors carry a column and no key
    (
        minimalConfig().replacingOccurrences("host = \"imap.example.com\"", "host = imap.example.com"),
        "/p/config.toml:5:8: invalid value 'imap.example.com' (strings need quotes)"
    ),
    (
        minimalConfig() + "\n[account.work.imap]",
        "/p/config.toml:7:1: table account.work.imap is already defined (line 4)"
    )
]

@Suite struct ConfigErrorTests {
    @Test(arguments: errorCases)
    func errorMessage(text: String, expected: String) {
        #expect(configError(text) == expected)
    }

    @Test func missingFile() {
        #expect(
            throws: ConfigError(
                problem: "no config file at /nonexistent/mo.toml (mo-sync init ADDRESS writes one; or pass --config FILE or set MO_CONFIG)")
        ) {
            try ConfigLoader.load(path: "/nonexistent/mo.toml", environment: testEnvironment)
        }
    }

    @Test func editDistanceSuggestions() {
        #expect(editDistance("prot", "port") == 1)
        #expect(closestMatch(to: "hots", in: ConfigSchema.serverKeys) == "host")
        #expect(closestMatch(to: "hostname", in: ConfigSchema.serverKeys) == nil)
        #expect(closestMatch(to: "passwordcommand", in: ConfigSchema.serverKeys) == "password-command")
        #expect(closestMatch(to: "password_command", in: ConfigSchema.serverKeys) == "password-command")
    }
}

extension String {
    /// Foundation-free replace, enough for test fixtures.
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
