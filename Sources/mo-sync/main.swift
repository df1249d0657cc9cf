#if canImport(Glibc)
    import Glibc
#endif
import ActionJournal
import ArgumentParser
import IMAPClient
import Maildir
import MoCLI
import MoConfig
import MoCore
import SyncRunner

/// `mo-sync`: mirror IMAP folders to Maildir, both ways.
struct MoSync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mo-sync",
        abstract: "Mirror IMAP folders (or a JMAP account) to Maildir directories, both ways.",
        discussion:
            "`mo-sync [ACCOUNT...]` runs the default subcommand, sync: see `mo-sync sync --help` for its options and exit codes, `mo-sync status --help` for the action journal, `mo-sync fetch --help` to fill placeholders (max-size), `mo-sync init --help` to write a first configuration, and `mo-sync login --help` to sign in to an OAuth2 account.",
        version: "mo-sync \(MoVersion.string)",
        subcommands: [Sync.self, Status.self, Fetch.self, Init.self, Login.self],
        defaultSubcommand: Sync.self
    )
}

/// `mo-sync status`: what the action journal still has to do.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List pending and failed actions (queued sends, Sent copies, moves, flags), and keywords that do not sync.",
        discussion: """
            Prints nothing when the action journal has nothing left to do and every keyword (tag) travels. \
            A keyword that stays on one side gets one line: ACCOUNT: MAILBOX: keyword KEYWORD not synced: REASON \
            (the server refuses new keywords in that folder, or the folder's Maildir already holds 26).
            """)

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let config = try ConfigLoader.load(explicitPath: options.config)
        for line in try JournalRunner.status(config: config) { print(line) }
        for line in AccountSync.unsyncedKeywordLines(config: config) { print(line) }
    }
}

/// `mo-sync [ACCOUNT...]`: the sync itself (the default subcommand).
struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Mirror IMAP folders (or a JMAP account) to Maildir directories, both ways.",
        discussion: """
            New mail, flags, deletions and moves propagate in both directions; flags live in Maildir file \
            names (:2,FRS), so neomutt and mutt work on the Maildir directly. Run it from a systemd timer, \
            or with --watch to sync as soon as either side changes.

            Examples:
              mo-sync                      sync every account in the configuration
              mo-sync work                 sync the account named "work"
              mo-sync --dry-run work       print what would change, change nothing
              mo-sync --config ./mo.toml   use another configuration file

            Before it fetches, it performs what the action journal holds (messages mo-sendmail queued while \
            offline, copies for the Sent folder); `mo-sync status` lists what is left.

            Exit status: 0 ok, 75 temporary failure (network, or new mail left for the next run by the daily \
            download allowance; retry later), 77 authentication or TLS \
            refused, 78 configuration error, 65 a folder stopped by a safety guard or damaged local data (a \
            state file, journal or keyword table: the message names FILE:LINE), 64 bad command line.
            """
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

    @Flag(help: "Print a JSON summary on stdout instead of text (docs/json.md).")
    var json = false

    @Option(help: ArgumentHelp("JSON format version to print; only 1 is supported.", valueName: "n"))
    var formatVersion: Int?

    @Flag(help: "Go on even where a mass-deletion guard would stop a folder.")
    var force = false

    @Flag(help: "Stay running: sync whenever the server (NOTIFY or IDLE; a JMAP account's push) or the Maildir (inotify) changes.")
    var watch = false

    @Flag(help: "Print the IMAP protocol exchange (a JMAP account's requests) on stderr (passwords and tokens are redacted).")
    var debug = false

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose exclude each other.") }
    }

    func run() throws {
        try SyncRun(
            config: options.config, accounts: accounts, dryRun: dryRun, quiet: quiet, verbose: verbose, json: json,
            formatVersion: formatVersion, force: force, watch: watch, debug: debug
        ).run()
    }
}

/// What a watcher wakes for besides changes: a queued message's time (any account's: the journal is
/// shared, and whichever watcher wakes sends it), and the account's snoozed messages' times. Asked each
/// second, the journal and the snooze folder are read again only when their files' times changed.
final class TimedActions {
    let journal: ActionJournal
    let snoozeFolder: String?
    private var seen: [Int] = []
    private var actions: [ActionRecord] = []
    private var snoozed: [Int] = []

    init(config: Config, account: Account) {
        journal = ActionJournal(stateDirectory: config.stateDirectory)
        snoozeFolder = account.maildir.flatMap {
            try? FolderNameMapper.folderPath(root: $0, mailbox: config.snoozeFolder, layout: account.layout)
        }
    }

    func next(after: Int) -> Int? {
        let folder = snoozeFolder ?? "/nonexistent"
        let stamp = [journal.path, folder + "/cur", folder + "/new", folder + "/dovecot-keywords", folder + "/mo-keywords"].flatMap {
            var st = stat()
            return stat($0, &st) == 0 ? [Int(st.st_size), Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec)] : [-1, -1, -1]
        }
        if stamp != seen {
            seen = stamp
            actions = (try? journal.load().actions) ?? []
            snoozed = snoozeFolder.map { SnoozedFiles.list($0).map(\.until) } ?? []
        }
        return [JournalRunner.nextDue(in: actions, after: after), snoozed.filter { $0 > after }.min()].compactMap { $0 }.min()
    }
}

func fflushStdout() { fflush(nil) }

/// Performs what the action journal holds (queued sends, Sent copies), prints its lines on stderr unless
/// `quiet`, and returns the kind of a failure to flush.
func flushJournal(_ config: Config, quiet: Bool, lockWait: Double = 10) -> ErrorKind? {
    let runner = JournalRunner(config: config)
    runner.lockWait = lockWait
    do {
        let report = try runner.flush()
        if !quiet { for line in report.lines { CommandLineRunner.printError("journal: \(escapedForMessage(line))") } }
        return nil
    } catch {
        CommandLineRunner.printError("mo-sync: action journal: \(escapedForMessage(error.description))")
        return error.kind
    }
}

// A run holds one descriptor per folder still to finish (its keyword lock, PreparedFolder.loadKeywords): an
// account of more than a thousand changed folders would meet the usual soft limit of 1024. The hard limit
// is the user's to give; take it all.
var openFiles = rlimit()
if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &openFiles) == 0 && openFiles.rlim_cur < openFiles.rlim_max {
    openFiles.rlim_cur = openFiles.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &openFiles)
}
// The run's threads (a second connection listing alongside, parallel finishes, the opener) allocate from
// one malloc arena: memory one frees then serves the others, where an arena per thread keeps each one's
// high-water mark (a run listing over two connections at 100,000 messages: peak 33 → 29 MB).
// (mallopt is glibc's malloc.h, which the Glibc module leaves out; RTLD_DEFAULT is the null handle.)
if let symbol = dlsym(nil, "mallopt") {
    let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    _ = mallopt(-8, 1)  // M_ARENA_MAX
}
if let fast = SyncRun(fastArguments: Array(CommandLine.arguments.dropFirst())) {
    CommandLineRunner.run(MoSync.self, tool: "mo-sync") { try fast.run() }
}
CommandLineRunner.main(MoSync.self, tool: "mo-sync")
