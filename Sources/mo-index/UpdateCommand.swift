#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import MoCLI
import MoIndex

extension MoIndexCommand {
    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring the index up to date with the Maildir (incremental).")

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Flag(name: .shortAndLong, help: "Print what was done and every skipped file.")
        var verbose = false

        @Flag(name: .shortAndLong, help: "Print nothing unless there is an error.")
        var quiet = false

        func run() throws {
            let where_ = try global.merged(location).forUpdate()
            // A status line on a terminal only (and not with --verbose, whose lines would interleave).
            let tty = isatty(2) == 1 && !quiet && !verbose
            // Then the tag rules on the new messages: renames, and a rename-only update (no mail parsed).
            let (s, ruled): (UpdateSummary, Tagging.Totals)
            do {
                (s, ruled) = try Tagging.update(where_) { updater in
                    if verbose { updater.log = { CommandLineRunner.printError("mo-index: \($0)") } }
                    if tty {
                        updater.progress = { done, total in
                            CommandLineRunner.printProgress("mo-index: \(done)/\(total) new files parsed")
                        }
                    }
                }
            } catch {
                if tty { CommandLineRunner.printProgress("") }
                throw error
            }
            if tty { CommandLineRunner.printProgress("") }
            if verbose { for w in s.warnings { CommandLineRunner.printError("mo-index: warning: \(w)") } }
            if let old = s.rebuiltFromFormat, !quiet {
                CommandLineRunner.printError(
                    "mo-index: the index had format \(old), older than this build's "
                        + "\(IndexSchema.formatVersion); rebuilt it from the mail")
            }
            if quiet || s.isNoOp && !verbose { return }
            var parts = ["\(s.added) new"]
            if s.addedFiles > 0 { parts.append("\(s.addedFiles) extra files") }
            if s.renamed > 0 { parts.append("\(s.renamed) renamed") }
            if s.removed > 0 || s.removedFiles > 0 { parts.append("\(s.removed) removed (\(s.removedFiles) files)") }
            if s.skipped > 0 { parts.append("\(s.skipped) skipped (not mail)") }
            if s.threadsRewritten > 0 { parts.append("\(s.threadsRewritten) re-threaded") }
            if ruled.messages > 0 { parts.append("\(ruled.messages) tagged by rules") }
            if s.retagged > 0 { parts.append("\(s.retagged) retagged") }
            print("mo-index: " + parts.joined(separator: ", "))
        }
    }
}

/// --maildir/--index-dir/--config given before the subcommand (`mo-index --maildir DIR query ...`).
/// ArgumentParser parses the root's options only when the root runs, so subcommands read them from
/// the command line themselves.
struct GlobalLocation: ParsableArguments {
    func merged(_ local: IndexLocation) -> IndexLocation {
        var out = local
        let args = Array(CommandLine.arguments.dropFirst())
        func value(_ name: String) -> String? {
            for (i, a) in args.enumerated() {
                if a == name, i + 1 < args.count { return args[i + 1] }
                if a.hasPrefix(name + "=") { return String(a.dropFirst(name.count + 1)) }
            }
            return nil
        }
        if out.maildir == nil { out.maildir = value("--maildir") }
        if out.indexDir == nil { out.indexDir = value("--index-dir") }
        if out.config.config == nil { out.config.config = value("--config") }
        return out
    }
}
