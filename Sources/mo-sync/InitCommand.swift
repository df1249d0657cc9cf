#if canImport(Glibc)
    import Glibc
#endif
import AccountSetup
import ArgumentParser
import MoCLI
import MoConfig
import MoCore

/// `mo-sync init ADDRESS`: a commented starting configuration; `mo-sync init --check`: try it.
struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a starting configuration for an address; with --check, try the configuration on its servers.",
        discussion: """
            Finds the IMAP and SMTP servers of ADDRESS, writes a commented configuration for it, and never \
            overwrites one. Servers come from, in order: --imap/--smtp, --provider, the known providers \
            (Gmail, Outlook.com, Microsoft 365, Yahoo, iCloud, Fastmail, Posteo, mailbox.org, GMX, Proton Mail \
            Bridge), the domain's DNS SRV records (RFC 6186), and its autoconfig file (over https). When \
            nothing is found, it asks on a terminal, and otherwise writes hosts guessed from the domain, marked \
            as guesses. No password is written: password-command is a command that prints it (pass, \
            secret-tool, gpg are suggested in comments).

            Examples:
              mo-sync init me@example.org          write ~/.config/mo/config.toml
              mo-sync init --dry-run me@gmail.com  print it instead
              mo-sync init --imap mail.example.org:143 --name work me@example.org
              mo-sync init --imap mail.example.org --smtp mail.example.org:587 \\
                  --ca-file ~/my-ca.pem me@example.org    your own server, its own CA
              mo-sync init --check                 connect, log in, LIST: a line a step

            Exit status: 0 ok, 64 bad command line, 73 the configuration exists already, 75 a server could \
            not be reached (--check), 77 login or TLS refused (--check), 78 configuration error.
            """)

    @OptionGroup var options: ConfigOptions

    @Argument(help: ArgumentHelp("The email address of the account (with --check: only that account).", valueName: "address"))
    var address: String?

    @Option(help: ArgumentHelp("Account name (letters, digits, '_', '-'; default: the domain's first label).", valueName: "name"))
    var name: String?

    @Option(help: ArgumentHelp("Maildir root (default: ~/Mail/NAME).", valueName: "dir"))
    var maildir: String?

    @Option(help: ArgumentHelp("Command that prints the password (default: pass show email/ADDRESS).", valueName: "command"))
    var passwordCommand: String?

    @Option(
        name: .customLong("oauth2-client-id"),
        help: ArgumentHelp(
            "For Gmail, Outlook.com and Microsoft 365: the OAuth2 client you registered (docs/oauth2.md); then run mo-sync login.",
            valueName: "id"))
    var oauth2ClientID: String?

    @Option(
        help: ArgumentHelp(
            "Use a known provider's servers for any domain: \(KnownProviders.ids.joined(separator: ", ")).", valueName: "name"))
    var provider: String?

    @Option(help: ArgumentHelp("IMAP server, HOST[:PORT] (993: TLS; another port: STARTTLS).", valueName: "host"))
    var imap: String?

    @Option(help: ArgumentHelp("SMTP server, HOST[:PORT] (465: TLS; another port: STARTTLS).", valueName: "host"))
    var smtp: String?

    @Option(
        help: ArgumentHelp(
            "CA certificate file (PEM) to trust for both servers besides the system's, for a server whose certificate is self-signed or from a private CA.",
            valueName: "file"))
    var caFile: String?

    @Flag(help: "Look nothing up on the network (known providers and flags only).")
    var offline = false

    @Flag(help: "Print the configuration instead of writing it.")
    var dryRun = false

    @Flag(help: "Load the configuration and try each account: connect, log in, LIST (and SMTP login); write nothing.")
    var check = false

    func validate() throws {
        if check {
            if dryRun || name != nil || maildir != nil || passwordCommand != nil || provider != nil || imap != nil || smtp != nil
                || caFile != nil || offline
            {
                throw ValidationError("--check takes only --config and an address.")
            }
            return
        }
        guard let address else { throw ValidationError("Missing the address, as in: mo-sync init me@example.org") }
        if let problem = StarterConfig.addressProblem(address) { throw ValidationError(problem) }
        if let name, !TOML.isBareKey(name) { throw ValidationError("--name may contain only letters, digits, '_' and '-'.") }
        if let provider, KnownProviders.provider(named: provider) == nil {
            throw ValidationError("Unknown provider '\(provider)'; known: \(KnownProviders.ids.joined(separator: ", ")).")
        }
        if let imap, ServerEndpoint.parse(imap, smtp: false) == nil { throw ValidationError("--imap: '\(imap)' is not HOST[:PORT].") }
        if let smtp, ServerEndpoint.parse(smtp, smtp: true) == nil { throw ValidationError("--smtp: '\(smtp)' is not HOST[:PORT].") }
        if let passwordCommand, passwordCommand.isEmpty || passwordCommand.contains("\n") {
            throw ValidationError("--password-command must be one non-empty line.")
        }
        if let caFile, caFile.isEmpty || caFile.contains("\n") { throw ValidationError("--ca-file must be a file name.") }
    }

    func run() throws {
        if check { return try runCheck() }
        let address = self.address!
        let name = self.name ?? StarterConfig.defaultAccountName(for: address)
        let path = ConfigLocator.locate(explicit: options.config).path
        // Said before any lookup or question; the exclusive create below is what guarantees it.
        var st = stat()
        if !dryRun && lstat(path, &st) == 0 { throw Self.exists(path) }
        var settings = findSettings(address)
        if let caFile { settings.caFile = caFile }
        let text = StarterConfig(
            address: address, accountName: name, maildir: maildir ?? "~/Mail/\(name)",
            settings: settings, passwordCommand: passwordCommand, clientID: oauth2ClientID
        ).render()
        // The text must be what the loader reads; a failure here is a bug, not the user's.
        do { _ = try ConfigLoader.parse(text: text, path: path) } catch {
            throw GenericError(.software, "init made a configuration that does not load: \(error.description)")
        }
        if dryRun {
            print(text, terminator: "")
            return
        }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex, let e = makeDirectories(String(path[..<slash])) {
            throw GenericError(.cannotCreate, "cannot create the directory of \(path): \(errnoDescription(e))")
        }
        switch createFileExclusively(path, Array(text.utf8)) {
        case .success:
            CommandLineRunner.printError(
                "mo-sync: wrote \(path) (account \(name); servers: \(settings.source)); \(nextStep(address, settings, name: name)) mo-sync init --check\(options.config.map { " --config " + $0 } ?? "")"
            )
        case .failure(let e) where e.code == EEXIST:
            throw Self.exists(path)
        case .failure(let e):
            throw GenericError(.cannotCreate, "cannot write \(path): \(e)")
        }
    }

    /// What to do before `--check`: store the password where the written password-command looks (`pass`),
    /// or edit it (an OAuth2 helper to set up), or sign in (`mo-sync login`, after the client id is in);
    /// nothing when `--password-command` named it.
    func nextStep(_ address: String, _ settings: MailSettings, name: String) -> String {
        if passwordCommand != nil { return "next:" }
        if settings.login == .oauth2, settings.oauth2 != nil {
            let login = "mo-sync login \(name)\(options.config.map { " --config " + $0 } ?? "")"
            return oauth2ClientID == nil
                ? "register a client (docs/oauth2.md), put its id in client-id, run \(login), then:"
                : "sign in: \(login), then:"
        }
        let (suggestions, active) = StarterConfig.passwordCommands(address: address, login: settings.login)
        guard let how = suggestions.first(where: { $0.command == active })?.how, let r = how.firstRange(of: "store it with: ") else {
            return "edit password-command, then:"
        }
        return "store the password (\(how[r.upperBound...])) or edit password-command, then:"
    }

    static func exists(_ path: String) -> GenericError {
        GenericError(.cannotCreate, "\(path) exists already; init never overwrites a configuration (edit it, or pass --config NEWFILE)")
    }

    /// The servers for `address`: the flags, the provider, discovery, then a question on a terminal or a guess.
    func findSettings(_ address: String) -> MailSettings {
        let domain = mailDomain(of: address) ?? "example.org"
        var settings: MailSettings
        if let imap, let endpoint = ServerEndpoint.parse(imap, smtp: false) {
            settings =
                provider.flatMap(KnownProviders.provider(named:))?.settings
                ?? MailSettings(imap: endpoint, smtp: nil, source: "the command line")
            settings.imap = endpoint
            settings.smtp = nil
            settings.source = "the command line"
        } else if let provider, let known = KnownProviders.provider(named: provider) {
            settings = known.settings
        } else {
            let found = Discovery(environment: ProcessEnvironment.current, offline: offline).find(address: address)
            if let s = found.settings {
                settings = s
            } else {
                for line in found.log { CommandLineRunner.printError("mo-sync: init: \(line)") }
                settings = askOrGuess(domain)
            }
        }
        if let smtp, let endpoint = ServerEndpoint.parse(smtp, smtp: true) { settings.smtp = endpoint }
        return settings
    }

    /// On a terminal: ask for the two hosts (Enter takes the guess). Otherwise the guess, said on stderr.
    func askOrGuess(_ domain: String) -> MailSettings {
        let guessImap = ServerEndpoint(host: "imap.\(domain)", port: 993, tls: .implicit)
        let guessSmtp = ServerEndpoint(host: "smtp.\(domain)", port: 465, tls: .implicit)
        guard isatty(0) == 1 && isatty(2) == 1 else {
            CommandLineRunner.printError(
                "mo-sync: init: nothing found for \(domain); writing guessed hosts imap.\(domain) and smtp.\(domain) (or pass --imap and --smtp)"
            )
            return MailSettings(imap: guessImap, smtp: guessSmtp, source: "guessed from the domain", guessed: true)
        }
        func ask(_ question: String, _ guess: ServerEndpoint, smtp: Bool) -> ServerEndpoint {
            while true {
                CommandLineRunner.writePrompt("\(question) HOST[:PORT] [\(guess.host):\(guess.port)]: ")
                guard let answer = readLine(strippingNewline: true) else { return guess }
                let trimmed = answer.filter { $0 != " " && $0 != "\t" }
                if trimmed.isEmpty { return guess }
                if let e = ServerEndpoint.parse(trimmed, smtp: smtp) { return e }
                CommandLineRunner.printError("not HOST[:PORT]: \(trimmed)")
            }
        }
        let imap = ask("IMAP server for \(domain)?", guessImap, smtp: false)
        let smtp = ask("SMTP server for \(domain)?", guessSmtp, smtp: true)
        return MailSettings(imap: imap, smtp: smtp, source: "your answers")
    }

    func runCheck() throws {
        let config = try ConfigLoader.load(explicitPath: options.config)
        var accounts = config.accounts
        if let address {
            accounts = accounts.filter { $0.owns(address: address) }
            if accounts.isEmpty { throw GenericError(.config, "\(config.path): no account has the address \(address)") }
        }
        var worst: MoError?
        for account in accounts {
            let failure = ServerCheck.run(account, stateDirectory: config.stateDirectory) { line in
                if line.failed { CommandLineRunner.printError(line.text) } else { print(escapedForMessage(line.text)) }
            }
            if failure == nil { print("\(account.name): ok") }
            worst = worst ?? failure
        }
        if let worst { throw ExitWith(SysExit(worst.kind)) }
    }
}
