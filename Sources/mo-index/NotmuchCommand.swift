import Glibc
import MoCLI
import MoCore
import MoIndex
import NotmuchCompat
import XapianKit

/// `notmuch …` answered from mo's index (issue 28): run as `notmuch` (a link to mo-index) or as
/// `mo-index [--config F | --maildir D | --index-dir D] notmuch …`. notmuch's options, output formats
/// and exit statuses (1 for errors, 20/21 for a format version too old/new); a command mo does not
/// answer yet exits 64 and names it. The index is mo's, found as mo-index finds it.
enum NotmuchCommand {
    static let version = "0.37"

    static let shared: [String: NotmuchArguments.Kind] = [
        "help": .bool, "uuid": .string, "full-scan": .bool, "query": .keyword(["infix", "sexp"])
    ]

    /// The notmuch configuration file this run answers from, if one was given (`NotmuchCommand+Config`).
    nonisolated(unsafe) static var setup: NotmuchSetup?

    static func runAndExit(_ args: [String], location: LocationValues) -> Never {
        let global = NotmuchArguments.parse(args, ["version": .bool, "help": .bool, "config": .string, "uuid": .string])
        guard case .success(let top) = global else { fail(global) }
        if top.flag("version") {
            print("notmuch \(version) (mo-index \(MoVersion.string))")
            exit(0)
        }
        var location = location
        setup = notmuchSetup(top.last("config"), location)
        if let setup { location = setup.location }
        guard let command = top.rest.first else { greet(location) }
        let rest = Array(top.rest.dropFirst())
        do {
            switch command {
            case "search": try search(rest, location)
            case "count": try count(rest, location)
            case "tag": try tag(rest, location)
            case "config": try config(rest, location)
            case "show": try show(rest, location)
            case "reply": try reply(rest, location)
            case "address": try address(rest, location)
            case "dump": try dump(rest, location)
            case "restore": try restore(rest, location)
            case "new": try new(rest, location)
            case "insert": try insert(rest, location)
            case "reindex": try reindex(rest, location)
            case "help": refuse("help (see docs/notmuch-compat.md)")
            case "compact", "git",
                "emacs-mua", "setup":
                refuse(command)
            default:
                writeError("Error: Unknown command '\(command)' (see \"notmuch help\")\n")
                exit(1)
            }
        } catch let error as QueryError where args.contains("--query=sexp") {
            // notmuch's words for a query it cannot read.
            writeError("notmuch \(command): Syntax error in query\n\(error.problem)\n")
            exit(1)
        } catch let error as QueryError where lastQuery != nil {
            // notmuch's words for an infix query Xapian's parser cannot read.
            writeError(
                "notmuch \(command): A Xapian exception occurred\nA Xapian exception occurred parsing query: \(error.problem)\n"
                    + "Query string was: \(lastQuery!)\n")
            exit(1)
        } catch let error as MoError {
            CommandLineRunner.fail(tool: "notmuch", error)
        } catch {
            CommandLineRunner.printError("notmuch: \(error)")
            exit(1)
        }
        exit(0)
    }

    // MARK: search

    static func search(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args,
            shared.merging([
                "output": .keyword(NotmuchSearch.Output.allCases.map(\.rawValue)),
                "exclude": .keyword(["true", "false", "flag", "all"]), "offset": .int, "limit": .int, "duplicate": .int,
                "sort": .keyword(["oldest-first", "newest-first"]), "format": .keyword(Sprinter.Format.allCases.map(\.rawValue)),
                "format-version": .int
            ]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        var search = NotmuchSearch(now: Int64(WallClock.now()))
        search.output = o.last("output").flatMap(NotmuchSearch.Output.init(rawValue:)) ?? .summary
        search.oldestFirst = o.last("sort") == "oldest-first"
        search.offset = o.int("offset") ?? 0
        search.limit = o.int("limit") ?? -1
        search.duplicate = o.int("duplicate") ?? -1
        let format = o.last("format").flatMap(Sprinter.Format.init(rawValue:)) ?? .text
        if search.output != .files && search.output != .messages && search.duplicate != -1 {
            writeError("Error: --duplicate=N is only supported with --output=files and --output=messages.\n")
            exit(1)
        }
        if format == .text0 && search.output == .summary {
            writeError("Error: --format=text0 is not compatible with --output=summary.\n")
            exit(1)
        }
        search.formatVersion = try formatVersion(o)
        let text = o.rest.joined(separator: " ")
        if text.isEmpty {
            writeError("Error: notmuch search requires at least one search term.\n")
            exit(1)
        }
        let index = try MailIndex(path: try location.forReading().indexPath)
        var query = try query(index, text, o)
        // search.exclude_tags: true (the default) and all leave excluded messages out of the matches; flag
        // lists their threads but does not count them as matched; all also leaves them out of threads.
        if let excluded = try excludedQuery(text) {
            switch o.last("exclude") ?? "true" {
            case "false": break
            case "flag":
                search.unmatched = Set(
                    try index.listing(try XapianQuery(.and, [query, excluded]), order: .relevance, fields: []).documentIDs)
            case "all":
                search.dropped = Set(try index.listing(excluded, order: .relevance, fields: []).documentIDs)
                query = try XapianQuery(.andNot, [query, excluded])
            default: query = try XapianQuery(.andNot, [query, excluded])
            }
        }
        var printer = Sprinter(format, sink: writeStandardOutput)
        try search.run(index, query, matchesAll: text == "*" && search.dropped.isEmpty, to: &printer)
    }

    /// `search.exclude_tags` as one query (any of them), less the tags the query names itself (notmuch
    /// drops an exclusion its query asks for); nil when nothing is excluded.
    static func excludedQuery(_ text: String) throws -> XapianQuery? {
        guard let setup else { return nil }  // mo's configuration excludes nothing
        // The one key read alone (`configValues` works out every key, the user's name and the database's too).
        let tags = Self.tags(setup.values("search.exclude_tags") ?? []).filter { tag in
            !text.contains("tag:\(tag)") && !text.contains("is:\(tag)") && !text.contains("(tag \(tag)")
        }
        guard !tags.isEmpty else { return nil }
        return try XapianQuery(.or, tags.map { XapianQuery(term: IndexSchema.Prefix.tag + $0) })
    }

    // MARK: count

    static func count(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args,
            shared.merging([
                "output": .keyword(["threads", "messages", "files"]), "exclude": .bool,
                "lastmod": .bool, "batch": .bool, "input": .string
            ]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        let index = try MailIndex(path: try location.forReading().indexPath)
        let output = o.last("output") ?? "messages"
        func answer(_ text: String) throws -> Int {
            var query = try query(index, text, o)
            if o.last("exclude") != "false", let excluded = try excludedQuery(text) { query = try XapianQuery(.andNot, [query, excluded]) }
            switch output {
            case "threads": return try index.threadCount(query)
            case "files":
                let listing = try index.listing(query, order: .relevance, fields: [])
                return try listing.documentIDs.reduce(0) { $0 + ((try index.message($1))?.record.files.count ?? 0) }
            default: return try index.count(query)
            }
        }
        var out = ""
        if o.flag("batch") || o.last("input") != nil {
            guard o.rest.isEmpty else {
                writeError("notmuch count: --batch and --input take no query on the command line\n")
                exit(1)
            }
            let input = batchInput(o)
            for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast(input.last == 10 ? 1 : 0) {
                out += "\(try answer(String(decoding: line, as: UTF8.self)))\n"
            }
        } else {
            out = "\(try answer(o.rest.joined(separator: " ")))"
            // --lastmod: the index's id and revision after the count, as notmuch writes them.
            out += o.flag("lastmod") ? "\t\(try index.uuid)\t\(try index.revision)\n" : "\n"
        }
        writeStandardOutput(Array(out.utf8))
    }

    // MARK: tag

    /// `notmuch tag [--remove-all] +TAG|-TAG … [--] QUERY`, or `--batch` (`--input=FILE`) lines
    /// `+TAG -TAG -- QUERY` with tags %-escaped: mo-index tag's work (`MoIndexCommand.retag`: keywords and
    /// flag letters in the files, logged for `mo-index undo`, stored on the server by the next mo-sync);
    /// silent, as notmuch.
    static func tag(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(args, shared.merging(["remove-all": .bool, "batch": .bool, "input": .string]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        let removeAll = o.flag("remove-all")
        var lines: [MoIndexCommand.TagChange] = []
        var badLines = 0
        if o.flag("batch") || o.last("input") != nil {
            guard o.rest.isEmpty else {
                writeError("Can't specify both cmdline and stdin!\n")
                exit(1)
            }
            for line in batchInput(o).split(separator: UInt8(ascii: "\n")) {
                let text = Substring(String(decoding: line, as: UTF8.self))
                do {
                    guard let (add, remove, query) = try NotmuchDump.parseTagLine(text) else { continue }
                    lines.append(
                        .init(
                            add: add, remove: remove, removeAll: removeAll, query: infix(String(query), o),
                            sexp: o.last("query") == "sexp"))
                } catch {
                    // notmuch's words for a line it passes over; the others are still made, and the exit is 1.
                    writeError("Warning: \(error.reason) [\(text)]\n")
                    badLines += 1
                }
            }
        } else {
            // The changes run up to "--" or the first word that is none (a query may hold "--" itself).
            let split = o.rest.firstIndex { $0 == "--" || !($0.hasPrefix("+") || $0.hasPrefix("-")) } ?? o.rest.count
            let ops = o.rest[..<split]
            let query = o.rest[split...].dropFirst(split < o.rest.count && o.rest[split] == "--" ? 1 : 0)
            if ops.contains("+") || ops.contains("-") {
                writeError("Error: empty tag forbidden\n")
                exit(1)
            }
            if ops.contains(where: { $0.hasPrefix("+-") }) {
                writeError("Error: tag starting with '-' forbidden\n")
                exit(1)
            }
            let (add, remove) = Tagging.changes(Array(ops)) ?? ([], [])
            if add.isEmpty && remove.isEmpty && !removeAll {
                writeError("Error: 'notmuch tag' requires at least one tag to add or remove.\n")
                exit(1)
            }
            if query.isEmpty {
                writeError("Error: notmuch tag requires at least one search term.\n")
                exit(1)
            }
            lines = [
                .init(
                    add: add, remove: remove, removeAll: removeAll, query: infix(query.joined(separator: " "), o),
                    sexp: o.last("query") == "sexp")
            ]
        }
        if !lines.isEmpty {
            let totals = try MoIndexCommand.retag(lines, location.forUpdate())
            if totals.vanished > 0 {
                writeError(
                    "Warning: \(totals.vanished) file(s) were renamed or removed by another program meanwhile and were "
                        + "passed over; run the command again for them\n")
            }
        }
        if badLines > 0 { exit(1) }
    }

    // MARK: Helpers

    /// `notmuch` alone: notmuch's greeting, or where there is no index yet, its hint to run `notmuch new`.
    static func greet(_ location: LocationValues) -> Never {
        let resolved = try? location.forReading()
        guard let resolved, (try? MailIndex(path: resolved.indexPath)) != nil else {
            writeStandardOutput(
                Array(
                    ("Notmuch is configured, but no database was found.\n"
                        + "You probably want to run \"notmuch new\" now to create a database.\n\n"
                        + "Note that the first run of \"notmuch new\" can take a very long time\n"
                        + "and that the resulting database will use roughly the same amount of\n"
                        + "storage space as the email being indexed.\n\n").utf8))
            exit(0)
        }
        let values = configValues(resolved)
        func value(_ key: String) -> String { values.first { $0.key == key }?.value.first ?? "" }
        let text =
            "Notmuch is configured and appears to have a database. Excellent!\n\n"
            + "At this point you can start exploring the functionality of notmuch by\n"
            + "using commands such as:\n\n\tnotmuch search tag:inbox\n\n"
            + "\tnotmuch search to:\"\(value("user.name"))\"\n\n\tnotmuch search from:\"\(value("user.primary_email"))\"\n\n"
            + "\tnotmuch search subject:\"my favorite things\"\n\nSee \"notmuch help search\" for more details.\n\n"
            + "You can also use \"notmuch show\" with any of the thread IDs resulting\n"
            + "from a search. Finally, you may want to explore using a more sophisticated\n"
            + "interface to notmuch such as the emacs interface implemented in notmuch.el\n"
            + "or any other interface described at https://notmuchmail.org\n\n"
            + "And don't forget to run \"notmuch new\" whenever new mail arrives.\n\n"
            + "Have fun, and may your inbox never have much mail.\n\n"
        writeStandardOutput(Array(text.utf8))
        exit(0)
    }

    /// The query text the command compiled last (for notmuch's error lines).
    nonisolated(unsafe) static var lastQuery: String?

    /// The command's query: infix, or S-expressions with `--query=sexp`; a notmuch configuration's saved
    /// queries (`query:NAME`, its `[query]` section) expanded first, an unknown one matching nothing.
    static func query(_ index: MailIndex, _ text: String, _ o: NotmuchArguments.Parsed) throws -> XapianQuery {
        lastQuery = text
        let current = setup
        return try index.query(infix(text, o), sexp: o.last("query") == "sexp") { key in
            current?.values(key)?.joined(separator: ";")
        }
    }

    /// An infix query with its saved queries expanded; an S-expression one as it is.
    static func infix(_ text: String, _ o: NotmuchArguments.Parsed) -> String {
        o.last("query") == "sexp" ? text : expandingSavedQueries(text)
    }

    /// `query:NAME` replaced by the saved query (`SavedQueries`), with a notmuch configuration.
    static func expandingSavedQueries(_ text: String) -> String {
        guard let setup else { return text }
        return SavedQueries.expand(text) { setup.values($0)?.joined(separator: ";") }
    }

    static func formatVersion(_ o: NotmuchArguments.Parsed) throws -> Int {
        let v = o.int("format-version") ?? NotmuchFormatVersion.current
        if let refusal = NotmuchFormatVersion.check(v) {
            writeError(refusal.message)
            exit(refusal.status)
        }
        return v
    }

    static func fail(_ r: Result<NotmuchArguments.Parsed, NotmuchArguments.Failure>) -> Never {
        if case .failure(let f) = r { writeError(f.message) }
        exit(1)
    }

    /// What notmuch has and this command line does not answer yet: exit 64 (usage), naming it.
    static func refuse(_ what: String) -> Never {
        CommandLineRunner.printError("notmuch (mo-index): \(what) is not supported; see docs/notmuch-compat.md")
        exit(SysExit.usage.rawValue)
    }

    /// notmuch's lines on stderr, each escaped (names and queries come from outside).
    static func writeError(_ s: String) {
        let lines = s.split(separator: "\n", omittingEmptySubsequences: false).dropLast(s.hasSuffix("\n") ? 1 : 0)
        let text = lines.map { escapedForMessage(String($0)) + "\n" }.joined()
        _ = Array(text.utf8).withUnsafeBytes { writeAll(2, $0) }
    }

    /// The lines of `--batch`: the file of `--input`, else standard input.
    static func batchInput(_ o: NotmuchArguments.Parsed) -> [UInt8] {
        let path = o.last("input")
        switch readWholeFile(path ?? "/dev/stdin") {
        case .success(let bytes): return bytes
        case .failure(let e):
            writeError("Error opening \(path ?? "standard input") for reading: \(errnoDescription(e.code))\n")
            exit(1)
        }
    }

    /// `notmuch` as the program's name, or `mo-index [location options] notmuch`: the arguments after it
    /// and the location, else nil.
    static func invocation(_ argv: [String]) -> (args: [String], location: LocationValues)? {
        if let name = argv.first?.split(separator: "/").last, name == "notmuch" { return (Array(argv.dropFirst()), LocationValues()) }
        var location = LocationValues()
        var i = 1
        while i + 1 < argv.count, ["--config", "--maildir", "--index-dir"].contains(argv[i]) {
            switch argv[i] {
            case "--config": location.config = argv[i + 1]
            case "--maildir": location.maildir = argv[i + 1]
            default: location.indexDir = argv[i + 1]
            }
            i += 2
        }
        guard i < argv.count, argv[i] == "notmuch" else { return nil }
        return (Array(argv[(i + 1)...]), location)
    }
}
