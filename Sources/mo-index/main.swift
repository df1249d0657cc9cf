import ArgumentParser
import MoCLI
import MoConfig
import MoCore

/// `mo-index`: search and threads over a Maildir tree, kept in a Xapian index.
struct MoIndex: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mo-index",
        abstract: "Search and thread mail in Maildir trees with a Xapian index.",
        discussion: """
            The index is derived data: delete it and run `mo-index update` to rebuild the same answers. \
            Without a configuration file, point it at any Maildir tree with --maildir.

            Examples:
              mo-index update
              mo-index query 'from:alice subject:report date:2w..'
              mo-index --maildir ~/Mail update
            """,
        version: "mo-index \(MoVersion.string)",
        subcommands: [Update.self, Query.self]
    )
}

/// Where the mail and the index are: from the configuration, or from --maildir / --index-dir.
struct IndexLocation: ParsableArguments {
    @OptionGroup var config: ConfigOptions

    @Option(help: ArgumentHelp("Index this Maildir tree instead of the configured accounts.", valueName: "dir"))
    var maildir: String?

    @Option(help: ArgumentHelp("Where the index lives (default: index-dir from the configuration, "
                               + "else $XDG_CACHE_HOME/mo/index).", valueName: "dir"))
    var indexDir: String?

    func validate() throws {
        if maildir != nil && config.config != nil {
            throw ValidationError("--maildir and --config exclude each other.")
        }
    }

    /// Loads the configuration unless --maildir says which tree to use.
    func resolve() throws {
        if maildir == nil { _ = try ConfigLoader.load(explicitPath: config.config) }
    }
}

extension MoIndex {
    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring the index up to date with the Maildir (incremental).")

        @OptionGroup var location: IndexLocation

        func run() throws {
            try location.resolve()
            throw NotYetBuilt("indexing")
        }
    }

    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search the index; one line per thread.",
            discussion: "Query terms: free words, \"phrases\", from: to: subject: date: flag: folder: ...")

        @OptionGroup var location: IndexLocation

        @Argument(help: ArgumentHelp("The query (quote it for the shell).", valueName: "query"))
        var query: [String]

        func run() throws {
            try location.resolve()
            throw NotYetBuilt("searching")
        }
    }
}

CommandLineRunner.main(MoIndex.self, tool: "mo-index")
