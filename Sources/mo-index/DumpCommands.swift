import ArgumentParser
import MoCLI
import MoCore
import MoIndex
import XapianKit

// notmuch's tag dump (`NotmuchDump`, batch-tag format) both ways, so a notmuch user brings every tag over in
// one command and can take them back: `notmuch dump | mo-index restore`, `mo-index dump | notmuch restore`.

extension MoIndexCommand {
    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every message's tags in notmuch's dump format (notmuch restore reads it).",
            discussion: """
                One line per message, oldest first: +TAG ... -- id:MESSAGE-ID, tags %-escaped as notmuch \
                writes them. The flag tags (unread, flagged, replied, passed, draft) are included, as notmuch \
                includes them. Example: mo-index dump -o tags.dump; notmuch restore --input=tags.dump
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @OptionGroup var output: OutputFile

        @Argument(help: ArgumentHelp("Only the messages this query matches (default: all).", valueName: "query"))
        var query: [String] = []

        func run() throws {
            let index = try MailIndex(path: try global.merged(location).forReading().indexPath)
            let q = try index.query(query.joined(separator: " "))
            var sink = try output.sink()
            defer { sink.close() }
            try sink.write(Array((NotmuchDump.header + "\n").utf8))
            try index.forEachMessage(q, order: .oldest) { m in
                try sink.write(Array((NotmuchDump.render(tags: try index.tags(of: m), messageID: m.record.id) + "\n").utf8))
            }
            try sink.flush()
        }
    }

    struct Restore: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set tags from a dump in notmuch's format (notmuch dump, mo-index dump).",
            discussion: """
                Each line sets its message's tags to exactly the listed ones (with --accumulate, adds them); \
                the flag tags set the Maildir flags. Tags are written into the message files as keywords, \
                so the next mo-sync stores them on the server. Lines naming messages that are not in the \
                index are counted and passed over; a line that does not parse is named (FILE:LINE) and \
                passed over; neither stops the rest. Example: notmuch dump | mo-index restore
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Option(
            name: [.customShort("i"), .customLong("input")],
            help: ArgumentHelp("Read FILE instead of standard input.", valueName: "file"))
        var input: String?

        @Flag(help: "Add the listed tags and keep the others (notmuch restore --accumulate).")
        var accumulate = false

        func run() throws {
            let name = input ?? "standard input"
            var bytes: [UInt8]
            switch readWholeFile(input ?? "/dev/stdin") {
            case .success(let b): bytes = b
            case .failure(let e): throw GenericError(.localIO, "cannot read \(quotedForMessage(name)): \(e)")
            }
            // A gzipped dump (notmuch dump --gzip) reads as it is.
            do {
                bytes = try Gzip.uncompressedIfCompressed(bytes)
            } catch {
                throw GenericError(.data, "cannot read \(quotedForMessage(name)): \(error)")
            }
            let (totals, missing, bad) = try Self.restore(bytes, from: name, accumulate: accumulate, global.merged(location).forUpdate())
            var summary = "mo-index: restore: \(totals.messages) message(s) changed, \(totals.files) file(s) renamed"
            if missing > 0 { summary += "; \(missing) line(s) name messages not in the index" }
            if bad > 0 { summary += "; \(bad) line(s) passed over" }
            if totals.vanished > 0 { summary += "; \(totals.vanished) file(s) gone meanwhile, passed over" }
            print(summary)
        }

        /// Sets the tags each line of a dump names (`accumulate`: adds them), as `mo-index tag` would; the
        /// tag changes made, lines naming no indexed message, and lines passed over (named on stderr).
        static func restore(
            _ bytes: [UInt8], from name: String, accumulate: Bool, _ resolved: IndexLocation.Resolved
        ) throws -> (Tagging.Totals, missing: Int, bad: Int) {
            _ = try Tagging.update(resolved)  // the files as they are now (renames since the last update)
            let index = try MailIndex(path: resolved.indexPath)
            var totals = Tagging.Totals(), missing = 0, bad = 0
            try {
                let tagger = try resolved.tagger()
                defer { try? tagger.save() }  // the error path; the normal one saves below, and fails loudly
                var number = 0
                for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
                    number += 1
                    let entry: NotmuchDump.Line
                    do {
                        guard let parsed = try NotmuchDump.parse(line) else { continue }
                        entry = parsed
                    } catch {
                        bad += 1
                        CommandLineRunner.printError("mo-index: restore: \(escapedForMessage(name)):\(number): \(error); line passed over")
                        continue
                    }
                    let matches = try index.messages(XapianQuery(term: IndexSchema.Prefix.id + entry.messageID), limit: 1)
                    guard let m = matches.first else { missing += 1; continue }
                    let current = Set(try index.tags(of: m))
                    var wanted = accumulate ? current.union(entry.add) : Set(entry.add)
                    wanted.subtract(entry.remove)
                    let add = wanted.subtracting(current).sorted(), remove = current.subtracting(wanted).sorted()
                    if add.isEmpty && remove.isEmpty { continue }
                    totals.add(
                        try tagger.apply(
                            add: add, remove: remove, messageID: m.record.id, files: m.record.files.map(index.absolutePath)))
                }
                try tagger.save()
            }()
            _ = try Tagging.update(resolved)
            return (totals, missing, bad)
        }
    }
}
