import ArgumentParser
import MoCLI
import MoConfig
import MoCore

/// `mo-index`: search and threads over a Maildir tree, kept in a Xapian index.
struct MoIndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mo-index",
        abstract: "Search and thread mail in Maildir trees with a Xapian index.",
        discussion: """
            The index is derived data: delete it and run `mo-index update` to rebuild the same answers. \
            Without a configuration file, point it at any Maildir tree with --maildir. \
            Query syntax: docs/query-language.md, mo-index(1). `mo-index notmuch COMMAND …` (or mo-index run as \
            `notmuch`) answers notmuch's command line: docs/notmuch-compat.md.

            Examples:
              mo-index update
              mo-index query 'from:alice subject:report date:2w..'
              mo-index --maildir ~/Mail update
            """,
        version: "mo-index \(MoVersion.string)",
        subcommands: [
            Update.self, Query.self, Thread.self, Count.self, Address.self, FlagMessages.self, Tag.self, Tags.self, Move.self, Snooze.self,
            Snoozed.self, Undo.self, History.self,
            Export.self,
            Dump.self, Restore.self, Compact.self
        ]
    )

    @OptionGroup var location: IndexLocation
}

if let notmuch = NotmuchCommand.invocation(CommandLine.arguments) { NotmuchCommand.runAndExit(notmuch.args, location: notmuch.location) }
if let fast = FastQuery(Array(CommandLine.arguments.dropFirst())) { fast.runAndExit() }
CommandLineRunner.main(MoIndexCommand.self, tool: "mo-index")
