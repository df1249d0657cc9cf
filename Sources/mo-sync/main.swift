import ArgumentParser
import MoCLI
import MoConfig
import MoCore

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

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other.") }
    }

    func run() throws {
        let config = try ConfigLoader.load(explicitPath: options.config)
        _ = try config.selectAccounts(accounts)
        throw NotYetBuilt("syncing")
    }
}

CommandLineRunner.main(MoSync.self, tool: "mo-sync")
