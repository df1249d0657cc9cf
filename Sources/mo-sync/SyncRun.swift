#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import IMAPClient
import MoCLI
import MoConfig
import MoCore
import SyncRunner

/// One `mo-sync sync` run from plain values: what `Sync` parsed, or what `init?(fastArguments:)` read.
///
/// Why the fast reading: building ArgumentParser's command tree (reflection, protocol-conformance lookups
/// over the whole binary) costs about 2 ms of a run's 5 ms start, and a no-op sync from a timer is 13–20 ms
/// in all. Only an exact subset is read here: an optional leading `sync`, `--config FILE`, the flags
/// `-q`/`--quiet`, `-v`/`--verbose`, `--dry-run`, `--force`, `--json`, `--watch`, `--debug`, each at most
/// once, and account names that start with no `-` and name no subcommand. Anything else (help, version,
/// `--name=value`, grouped short flags, `--format-version`, a repeat, a combination `Sync` refuses) gives nil
/// and goes to ArgumentParser, so its behaviour and messages stay the full parser's (`mo-index`'s
/// `FastQuery` is the same for `query`).
struct SyncRun {
    var config: String?
    var accounts: [String] = []
    var dryRun = false
    var quiet = false
    var verbose = false
    var json = false
    var formatVersion: Int?
    var force = false
    var watch = false
    var debug = false

    func run() throws {
        try JSONFormat.check(formatVersion)
        let config = try ConfigLoader.load(explicitPath: self.config)
        // Send-only accounts have nothing to sync: skipped when all run, a config error when named.
        // Their queued mail goes out with the journal flush either way.
        let selected: [Account]
        if accounts.isEmpty {
            selected = config.accounts.filter { $0.syncPair != nil }
        } else {
            selected = try config.selectAccounts(accounts)
            for account in selected { _ = try config.syncPair(of: account) }
        }
        let tty = isatty(2) == 1 && !quiet
        var syncOptions = SyncOptions()
        syncOptions.dryRun = dryRun
        syncOptions.force = force
        let chatty = verbose
        syncOptions.verbose = { line in
            if chatty { CommandLineRunner.printError(line) } else if tty { CommandLineRunner.printProgress(line) }
        }
        // What a dry run would do is its output (stdout, before the summary lines); progress stays progress.
        if dryRun && !json {
            syncOptions.planned = { line in
                if tty { CommandLineRunner.printProgress("") }
                print(escapedForMessage(line))
            }
        }
        if debug { syncOptions.trace = IMAPTrace { CommandLineRunner.printError($0) } }

        if watch {
            try runWatch(config: config, accounts: selected, options: syncOptions)
            return
        }
        var worst: ErrorKind?
        var jsonAccounts: [JSONValue] = []
        if !dryRun {
            // Queued sends and Sent copies first, so a reply written offline goes out before new mail lands.
            worst = flushJournal(config, quiet: quiet)
        }
        for account in selected {
            let summaries: [FolderSummary]
            do {
                summaries = try AccountSync(account: account, config: config, options: syncOptions).run()
            } catch let error as MoError {
                if tty { CommandLineRunner.printProgress("") }
                CommandLineRunner.printError("mo-sync: \(account.name): \(escapedForMessage(error.description))")
                worst = worst ?? error.kind
                jsonAccounts.append(["account": .string(account.name), "error": .string(error.description)])
                continue
            }
            if tty { CommandLineRunner.printProgress("") }
            for s in summaries {
                // A local I/O failure (a full disk) and damaged local data (a state file, a keyword table, a
                // folder replaced by a file) keep their codes; other folder failures are worth a retry.
                if s.error != nil { worst = worst ?? (s.errorKind == .localIO || s.errorKind == .data ? s.errorKind : .temporary) }
                // A stop by a safety guard (65) outranks downloads left for the next run (75).
                if s.stopped != nil, worst == nil || (worst == .temporary && s.stoppedKind == nil) { worst = s.stoppedKind ?? .data }
                if json { continue }
                if !quiet || s.error != nil || s.stopped != nil {
                    let prefix = selected.count > 1 ? "\(account.name)/" : ""
                    if s.error != nil || s.stopped != nil {
                        CommandLineRunner.printError(prefix + s.line)
                    } else if !s.folder.hasPrefix("(") {
                        print(prefix + s.line)
                    }
                }
                if !quiet { for note in s.noteLines { CommandLineRunner.printError("  note: \(note)") } }
            }
            jsonAccounts.append(["account": .string(account.name), "folders": .array(summaries.map(\.json))])
        }
        if json {
            var out = JSONWriter()
            out.beginDocument()
            out.field("dry_run", .bool(dryRun))
            out.field("accounts", .array(jsonAccounts))
            out.endDocument()
        }
        if let worst { throw ExitWith(SysExit(worst)) }
    }

    /// --watch: one watcher per account, each on its own thread (blocking IMAP), until SIGTERM/SIGINT.
    func runWatch(config: Config, accounts: [Account], options: SyncOptions) throws {
        if dryRun || json { throw ValidationError("--watch runs for good; it does not combine with --dry-run or --json.") }
        WatchSignals.install()
        let quiet = self.quiet
        let watchers = accounts.map { account in
            let timed = TimedActions(config: config, account: account)
            return Watcher(account: account, config: config, options: options, nextTimedAction: timed.next) { result in
                // Every cycle, reached the IMAP server or not, also sends what is queued. Another
                // watcher already flushing covers it (lockWait 0).
                _ = flushJournal(config, quiet: quiet, lockWait: 0)
                switch result {
                case .success(let summaries):
                    for s in summaries where s.changed || s.error != nil || s.stopped != nil {
                        if s.error != nil || s.stopped != nil {
                            CommandLineRunner.printError("\(account.name)/\(s.line)")
                        } else if !quiet {
                            print("\(account.name)/\(s.line)")
                        }
                    }
                    // Flush so a pager or journal sees each run as it happens.
                    fflushStdout()
                case .failure(let error):
                    // Server text (a BYE, a NO) may hold terminal escapes.
                    CommandLineRunner.printError("mo-sync: \(account.name): \(escapedForMessage("\(error)"))")
                }
            }
        }
        runOnThreads(watchers.map { w in { w.run() } })
    }
}

/// Kept out of the type's body so the memberwise initializer `Sync` calls stays synthesized.
extension SyncRun {
    init?(fastArguments args: [String]) {
        let subcommands: Set<String> = ["sync", "status", "fetch", "init", "login", "help"]
        var seen = Set<String>()
        var i = 0
        if args.first == "sync" { i = 1 }
        while i < args.count {
            let a = args[i]
            i += 1
            guard a.hasPrefix("-") else {
                guard !subcommands.contains(a) else { return nil }
                accounts.append(a)
                continue
            }
            guard seen.insert(a == "-q" ? "--quiet" : a == "-v" ? "--verbose" : a).inserted else { return nil }
            switch a {
            case "--config":
                guard i < args.count, !args[i].hasPrefix("-") else { return nil }
                config = args[i]
                i += 1
            case "-q", "--quiet": quiet = true
            case "-v", "--verbose": verbose = true
            case "--dry-run": dryRun = true
            case "--force": force = true
            case "--json": json = true
            case "--watch": watch = true
            case "--debug": debug = true
            default: return nil
            }
        }
        // What `Sync` refuses, it refuses in its own words.
        if quiet && verbose || watch && (dryRun || json) { return nil }
    }
}
