import MoCheck
import MoCLI
import MoConfig
import MoCore

#if canImport(Glibc)
    import Glibc
#endif

// mo-sync-check [--config FILE] [ACCOUNT...]: compares each account's server with its Maildir, message by
// message (content hash and flags), independently of mo-sync's state; prints the differences and exits 1
// if there are any (as diff(1) does), with a sysexits code when it cannot check. The user's tool after a
// scare (a crash, a full disk, a restored backup), and the tests' and benchmarks' oracle.
let usage = """
    Usage: mo-sync-check [--config FILE] [ACCOUNT...]

    Compares each account's IMAP server with its Maildir, message by message: every message's
    bytes (SHA-256) and flags, in every synced folder. Read-only on both sides (EXAMINE); it does
    not use mo-sync's state, so it tells whether the two sides agree, not what mo-sync believes.

    Options:
      --config FILE   the configuration (default: $MO_CONFIG, else $XDG_CONFIG_HOME/mo/config.toml)
      -h, --help      this text

    Exit status: 0 every account agrees; 1 differences (listed, one per line); 64-78 (sysexits)
    when an account cannot be checked (configuration, network, login). See mo-sync-check(1).
    """
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
var configPath: String?
if let i = arguments.firstIndex(where: { $0.hasPrefix("--config=") }) {
    configPath = String(arguments[i].dropFirst("--config=".count))
    arguments.remove(at: i)
} else if let i = arguments.firstIndex(of: "--config") {
    guard i + 1 < arguments.count else {
        CommandLineRunner.fail(tool: "mo-sync-check", GenericError(.usage, "--config needs a file (see mo-sync-check --help)"))
    }
    configPath = arguments[i + 1]
    arguments.removeSubrange(i...i + 1)
}
if let option = arguments.first(where: { $0.hasPrefix("-") }) {
    CommandLineRunner.fail(
        tool: "mo-sync-check", GenericError(.usage, "unknown option \(quotedForMessage(option)) (see mo-sync-check --help)"))
}
do {
    let config = try ConfigLoader.load(explicitPath: configPath)
    var failed = false
    for account in try config.selectAccounts(arguments) {
        let report = try SyncChecker.check(account: account, config: config)
        let total = report.folders.values.reduce(0, +)
        let outside = report.outside.values.reduce(0, +), placeholders = report.placeholders.values.reduce(0, +)
        if report.ok {
            let window = outside > 0 ? ", \(outside) outside the date window left on the server" : ""
            let held = placeholders > 0 ? ", \(placeholders) held as placeholders (max-size)" : ""
            print("\(account.name): OK (\(report.folders.count) folders, \(total) messages\(window)\(held))")
        } else {
            failed = true
            print("\(account.name): \(report.problems.count) difference(s)")
            for p in report.problems { print("  \(escapedForMessage(p))") }  // they name mailboxes and files
        }
    }
    exit(failed ? 1 : 0)
} catch let error as MoError {
    CommandLineRunner.fail(tool: "mo-sync-check", error)
}
