import MoCheck
import MoCLI
import MoConfig
import MoCore

// mo-sync-check [--config FILE] [ACCOUNT...]: compares each account's server with its Maildir, message by
// message (content hash and flags); prints the differences and exits 1 if there are any. For tests,
// crash runs and benchmarks.
var arguments = Array(CommandLine.arguments.dropFirst())
var configPath: String?
if let i = arguments.firstIndex(of: "--config"), i + 1 < arguments.count {
    configPath = arguments[i + 1]
    arguments.removeSubrange(i...i + 1)
}
do {
    let config = try ConfigLoader.load(explicitPath: configPath)
    var failed = false
    for account in try config.selectAccounts(arguments) {
        let report = try SyncChecker.check(account: account, config: config)
        let total = report.folders.values.reduce(0, +)
        if report.ok {
            print("\(account.name): OK (\(report.folders.count) folders, \(total) messages)")
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

#if canImport(Glibc)
    import Glibc
#endif
