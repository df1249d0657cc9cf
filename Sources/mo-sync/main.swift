#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import IMAPClient
import MoCLI
import MoConfig
import MoCore
import SyncRunner

/// `mo-sync`: mirror IMAP folders to Maildir, both ways.
struct MoSync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mo-sync",
        abstract: "Mirror IMAP folders to Maildir directories, both ways.",
        discussion: """
            New mail, flags, deletions and moves propagate in both directions; flags live in Maildir file \
            names (:2,FRS), so neomutt and mutt work on the Maildir directly. Run it from a systemd timer, \
            or with --watch to sync as soon as the server reports a change.

            Examples:
              mo-sync                      sync every account in the configuration
              mo-sync work                 sync the account named "work"
              mo-sync --dry-run work       print what would change, change nothing
              mo-sync --config ./mo.toml   use another configuration file

            Exit status: 0 ok, 75 temporary failure (network; retry later), 77 authentication or TLS \
            refused, 78 configuration error, 64 bad command line.
            """,
        version: "mo-sync \(MoVersion.string)"
    )

    @OptionGroup var options: ConfigOptions

    @Argument(help: ArgumentHelp("Accounts to sync (default: all).", valueName: "account"))
    var accounts: [String] = []

    @Flag(help: "Print the planned actions and change nothing.")
    var dryRun = false

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Print every action as it is performed.")
    var verbose = false

    @Flag(help: "Print a JSON summary on stdout instead of text.")
    var json = false

    @Flag(help: "Go on even where a mass-deletion guard would stop a folder.")
    var force = false

    @Flag(help: "Stay running: IDLE on the watched folders and sync on every change.")
    var watch = false

    @Flag(help: "Print the IMAP protocol exchange on stderr (passwords and tokens are redacted).")
    var debug = false

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other.") }
    }

    func run() throws {
        let config = try ConfigLoader.load(explicitPath: options.config)
        let selected = try config.selectAccounts(accounts)
        if watch { throw NotYetBuilt("--watch") }
        let tty = isatty(2) == 1 && !quiet
        var syncOptions = SyncOptions()
        syncOptions.dryRun = dryRun
        syncOptions.force = force
        let chatty = verbose || dryRun
        syncOptions.verbose = { line in
            if chatty { CommandLineRunner.printError(line) }
            else if tty { CommandLineRunner.printProgress(line) }
        }
        if debug { syncOptions.trace = IMAPTrace { CommandLineRunner.printError($0) } }

        var worst: ErrorKind?
        var jsonAccounts: [String] = []
        for account in selected {
            let summaries: [FolderSummary]
            do {
                summaries = try AccountSync(account: account, config: config, options: syncOptions).run()
            } catch let error as MoError {
                if tty { CommandLineRunner.printProgress("") }
                CommandLineRunner.printError("mo-sync: \(account.name): \(error.description)")
                worst = worst ?? error.kind
                jsonAccounts.append("{\"account\":\"\(account.name)\",\"error\":\(jsonQuoted(error.description))}")
                continue
            }
            if tty { CommandLineRunner.printProgress("") }
            for s in summaries {
                if s.error != nil { worst = worst ?? .temporary }
                if s.stopped != nil { worst = worst ?? .data }
                if json { continue }
                if !quiet || s.error != nil || s.stopped != nil {
                    let prefix = selected.count > 1 ? "\(account.name)/" : ""
                    if s.error != nil || s.stopped != nil { CommandLineRunner.printError(prefix + s.line) }
                    else if !s.folder.hasPrefix("(") { print(prefix + s.line) }
                }
                if !quiet { for note in s.notes { CommandLineRunner.printError("  note: \(note)") } }
            }
            jsonAccounts.append("{\"account\":\(jsonQuoted(account.name)),\"folders\":[\(summaries.map(\.json).joined(separator: ","))]}")
        }
        if json { print("{\"accounts\":[\(jsonAccounts.joined(separator: ","))]\(dryRun ? ",\"dry_run\":true" : "")}") }
        if let worst { throw ExitWith(SysExit(worst)) }
    }
}

CommandLineRunner.main(MoSync.self, tool: "mo-sync")
