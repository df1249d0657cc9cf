import Glibc
import MoCLI
import MoCore
import MoIndex

/// `mo-index query` parsed without ArgumentParser, for the plain invocations that scripts run in loops:
/// building ArgumentParser's command tree (reflection, protocol-conformance lookups) costs ~5 ms per
/// process, a third of a small query. Only an exact subset is taken: options of `query` and the global
/// --config/--maildir/--index-dir, each at most once, as `--name value` with a value not starting with "-",
/// query words not starting with "-" (anything after "--" except "--..."). Everything else (help,
/// version, errors, other subcommands, `--name=value`, repeats) returns nil and goes to ArgumentParser,
/// so behaviour and messages stay those of the full parser.
struct FastQuery {
    var location = LocationValues()
    var output = OutputKind.summary
    var format = OutputFormat.text
    var formatVersion: Int?
    var sort = ResultOrder.newest
    var limit: Int?
    var offset = 0
    var links: String?
    var words: [String] = []

    init?(_ args: [String]) {
        var seen = Set<String>()
        var subcommand = false
        var i = 0
        var rest = false
        while i < args.count {
            let a = args[i]
            i += 1
            if rest {
                guard !a.hasPrefix("--") else { return nil }  // GlobalLocation.merged scans every argument
                words.append(a)
                continue
            }
            if a == "--" {
                guard subcommand else { return nil }
                rest = true
                continue
            }
            guard a.hasPrefix("-") else {
                if subcommand { words.append(a) } else if a == "query" { subcommand = true } else { return nil }
                continue
            }
            let global = ["--config", "--maildir", "--index-dir"]
            guard
                global.contains(a)
                    || subcommand && ["--output", "--format", "--format-version", "--sort", "--limit", "--offset", "--links"].contains(a),
                seen.insert(a).inserted, i < args.count, !args[i].hasPrefix("-")
            else { return nil }
            let v = args[i]
            i += 1
            switch a {
            case "--config": location.config = v
            case "--maildir": location.maildir = v
            case "--index-dir": location.indexDir = v
            case "--output": guard let k = OutputKind(rawValue: v) else { return nil }; output = k
            case "--format": guard let f = OutputFormat(rawValue: v) else { return nil }; format = f
            case "--format-version": guard let n = Int(v) else { return nil }; formatVersion = n
            case "--sort": guard let s = ResultOrder(rawValue: v) else { return nil }; sort = s
            case "--limit": guard let n = Int(v) else { return nil }; limit = n
            case "--offset": guard let n = Int(v) else { return nil }; offset = n
            case "--links": links = v
            default: return nil
            }
        }
        // IndexLocation.validate()
        guard subcommand, !(location.maildir != nil && location.config != nil) else { return nil }
    }

    /// Runs the query and exits as `CommandLineRunner.main` would.
    func runAndExit() -> Never {
        CommandLineRunner.run(MoIndexCommand.self, tool: "mo-index") {
            try MoIndexCommand.Query.run(
                location: location, output: output, format: format,
                formatVersion: formatVersion, sort: sort, limit: limit, offset: offset, links: links, query: words)
        }
    }
}
