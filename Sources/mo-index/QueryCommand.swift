import ArgumentParser
import MoCLI
import MoCore
import MoIndex
import XapianKit

extension OutputKind: ExpressibleByArgument {}
extension OutputFormat: ExpressibleByArgument {}
extension ResultOrder: ExpressibleByArgument {}

extension MoIndexCommand {
    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search the index; one line per thread.",
            discussion: """
                Query terms: free words, "phrases", from: to: cc: subject: body: id: thread: folder: path: \
                list: attachment: has:attachment mimetype: flag: tag: date: size: thread:{QUERY}, gmail-thread: and \
                gmail-thread:{QUERY} (Gmail's conversations, Gmail mode), AND OR NOT ( ), word* wildcards. See mo-index(1).
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Option(
            help: ArgumentHelp(
                "summary (default: one line per thread), threads, messages, files, message-ids, thread-members.", valueName: "kind"))
        var output: OutputKind = .summary

        @Option(help: "text or json.")
        var format: OutputFormat = .text

        @Option(help: ArgumentHelp("JSON format version to print (docs/json.md); only 1 is supported.", valueName: "n"))
        var formatVersion: Int?

        @Option(help: "newest, oldest or relevance.")
        var sort: ResultOrder = .newest

        @Option(help: "At most this many results (threads, or messages for message outputs).")
        var limit: Int?

        @Option(help: "Skip this many results first.")
        var offset: Int = 0

        @Option(help: ArgumentHelp("Also make DIR a Maildir of symlinks to the matching files (for a mail client).", valueName: "dir"))
        var links: String?

        @Argument(help: ArgumentHelp("The query (quote it for the shell); none or * matches everything.", valueName: "query"))
        var query: [String] = []

        func run() throws {
            try Self.run(
                location: global.merged(location).values, output: output, format: format,
                formatVersion: formatVersion, sort: sort, limit: limit, offset: offset, links: links, query: query)
        }

        /// The command's work, also reached from `FastQuery` (no ArgumentParser).
        static func run(
            location: LocationValues, output: OutputKind, format: OutputFormat, formatVersion: Int?,
            sort: ResultOrder, limit: Int?, offset: Int, links: String?, query: [String]
        ) throws {
            try JSONFormat.check(formatVersion)
            let index = try MailIndex(path: try location.forReading().indexPath)
            let q = try index.query(query.joined(separator: " "))
            var out = LineWriter()
            defer { out.flush() }
            let results = try QueryRunner(index: index, query: q, sort: sort)
            if let links { try LinkFolder.fill(links, with: try results.messages(), index: index) }
            try results.print(output, format: format, offset: offset, limit: limit ?? Int.max, to: &out)
        }
    }

    struct Count: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print how many messages (or threads) match.")

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Option(help: "messages (default) or threads.")
        var output: OutputKind = .messages

        @Argument(help: ArgumentHelp("The query.", valueName: "query"))
        var query: [String] = []

        func run() throws {
            let index = try MailIndex(path: try global.merged(location).forReading().indexPath)
            let q = try index.query(query.joined(separator: " "))
            if output == .threads || output == .summary {
                print(try index.threadCount(q))
            } else {
                print(try index.count(q))
            }
        }
    }
}

/// Runs a query once and prints it in any of the output kinds. Lists come from value slots
/// (`MailIndex.listing`); only outputs that show files read whole records.
struct QueryRunner {
    let index: MailIndex
    let query: XapianQuery
    let sort: ResultOrder

    init(index: MailIndex, query: XapianQuery, sort: ResultOrder) throws {
        self.index = index
        self.query = query
        self.sort = sort
    }

    /// Whole records (files included), for `--links`, `files` and JSON `messages`.
    func messages() throws -> [IndexedMessage] {
        try index.messages(query, order: sort)
    }

    func print(_ kind: OutputKind, format: OutputFormat, offset: Int, limit: Int, to out: inout LineWriter) throws {
        func page<T>(_ xs: [T]) -> ArraySlice<T> {
            let start = min(max(offset, 0), xs.count)
            return xs[start..<min(xs.count, start.addingReportingOverflow(limit).overflow ? xs.count : start + limit)]
        }
        func rows(_ listing: MessageListing) -> ArraySlice<Int> { page(Array(0..<listing.count)) }
        // JSON: {"format_version":1,"results":[ one element per line ]}, streamed (docs/json.md).
        // Nothing reaches stdout before 64 KiB: a query that fails early prints no JSON at all.
        var results = format == .json ? Output.beginResults() : nil
        var names = AuthorNames()
        switch kind {
        case .threads:
            let listing = try index.listing(query, order: sort, fields: [.thread])
            var seen = Set<String>()
            let threads = (0..<listing.count).map(listing.thread).filter { seen.insert($0).inserted }
            for t in page(threads) {
                if results != nil { results!.write(.string(t)) } else { out.line("thread:" + t) }
            }
        case .summary:
            let listing = try index.listing(
                query, order: sort, fields: [.thread, .date, .from, .subject, .flags],
                threadSizes: true)
            for t in page(ThreadSummary.all(listing, authors: &names)) {
                if results != nil {
                    results!.write([
                        "thread": .string(t.thread), "date": .int(t.newest), "matched": .int(t.matched),
                        "total": .int(t.total), "authors": .strings(t.authors),
                        "subject": .string(t.subject), "flags": .strings(t.flags)
                    ])
                } else {
                    let flags = t.flags.isEmpty ? "" : " (" + t.flags.joined(separator: " ") + ")"
                    out.line(
                        "thread:\(t.thread)  \(Output.date(t.newest)) [\(t.matched)/\(t.total)] "
                            + "\(t.authors.joined(separator: ", ")); \(t.subject)\(flags)")
                }
            }
        case .threadMembers:
            let listing = try index.listing(query, order: sort, fields: [.thread, .id], threadSizes: true)
            var order: [(thread: String, total: Int)] = []
            var ids: [ThreadKey: [String]] = [:]
            var keys: [ThreadKey] = []
            for row in 0..<listing.count {
                let key = listing.threadKey(row)
                if ids[key] == nil {
                    order.append((listing.thread(row), listing.threadSize(row)))
                    keys.append(key)
                }
                ids[key, default: []].append(listing.id(row))
            }
            for i in page(Array(order.indices)) {
                let t = order[i]
                var members = ids[keys[i]]!
                if members.count != t.total {
                    let all = try index.listing(
                        XapianQuery(term: IndexSchema.Prefix.thread + t.thread),
                        order: .oldest, fields: [.id])
                    members = (0..<all.count).map(all.id)
                }
                // Ordered by the escaped form in both formats; JSON strings hold the ids as they are.
                let sorted = members.map { (Output.escape($0), $0) }.sorted { $0.0 < $1.0 }
                if results != nil { results!.write(.strings(sorted.map(\.1))) } else { out.line(sorted.map(\.0).joined(separator: " ")) }
            }
        case .messages where results != nil:
            for m in page(try messages()) {
                let r = m.record
                results!.write([
                    "id": .string(r.id), "thread": .string(m.thread), "date": .int(r.date ?? 0),
                    "from": .string(r.from), "subject": .string(r.subject),
                    "flags": .strings(Output.flagWords([m])), "files": .strings(r.files.map(index.absolutePath))
                ])
            }
        case .messages:
            let listing = try index.listing(query, order: sort, fields: [.id, .date, .from, .subject])
            for row in rows(listing) {
                out.line(
                    "id:\(Output.escape(listing.id(row)))  \(Output.date(listing.date(row))) "
                        + "\(names.author(listing.from(row))); \(listing.subject(row))")
            }
        case .messageIDs:
            let listing = try index.listing(query, order: sort, fields: [.id])
            for row in rows(listing) {
                let id = listing.id(row)
                if results != nil { results!.write(.string(id)) } else { out.line(Output.escape(id)) }
            }
        case .files:
            for m in page(try messages()) {
                for f in m.record.files {
                    if results != nil { results!.write(.string(index.absolutePath(f))) } else { out.line(index.absolutePath(f)) }
                }
            }
        }
        if results != nil { Output.endResults(&results!) }
    }
}
