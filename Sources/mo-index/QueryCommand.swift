import ArgumentParser
import MoCLI
import MoIndex

extension OutputKind: ExpressibleByArgument {}
extension OutputFormat: ExpressibleByArgument {}
extension ResultOrder: ExpressibleByArgument {}

extension MoIndexCommand {
    struct Query: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Search the index; one line per thread.",
            discussion: """
                Query terms: free words, "phrases", from: to: cc: subject: body: id: thread: folder: path: \
                list: attachment: has:attachment mimetype: flag: date: size: thread:{QUERY}, AND OR NOT ( ), \
                word* wildcards. See mo-index(1).
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Option(help: ArgumentHelp("summary (default: one line per thread), threads, messages, files, message-ids, thread-members.", valueName: "kind"))
        var output: OutputKind = .summary

        @Option(help: "text or json.")
        var format: OutputFormat = .text

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
            let index = try MailIndex(path: try global.merged(location).forReading().indexPath)
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
                print(Set(try index.messages(q, order: .relevance).map(\.thread)).count)
            } else {
                print(try index.count(q))
            }
        }
    }
}

/// Runs a query once and prints it in any of the output kinds.
struct QueryRunner {
    let index: MailIndex
    let query: MoIndex.XapianQuery
    let sort: ResultOrder
    private var cached: [IndexedMessage]?

    init(index: MailIndex, query: MoIndex.XapianQuery, sort: ResultOrder) throws {
        self.index = index
        self.query = query
        self.sort = sort
    }

    func messages() throws -> [IndexedMessage] {
        try index.messages(query, order: sort)
    }

    /// Matches grouped by thread, threads in the order of their first match.
    func threads(_ messages: [IndexedMessage]) throws -> [ThreadSummary] {
        var order: [String] = []
        var groups: [String: [IndexedMessage]] = [:]
        for m in messages {
            if groups[m.thread] == nil { order.append(m.thread) }
            groups[m.thread, default: []].append(m)
        }
        return try order.map { t in
            let matched = groups[t]!
            return ThreadSummary(thread: t, messages: matched, total: try index.threadSize(t))
        }
    }

    func print(_ kind: OutputKind, format: OutputFormat, offset: Int, limit: Int, to out: inout LineWriter) throws {
        let all = try messages()
        func page<T>(_ xs: [T]) -> ArraySlice<T> {
            let start = min(max(offset, 0), xs.count)
            return xs[start..<min(xs.count, start.addingReportingOverflow(limit).overflow ? xs.count : start + limit)]
        }
        let json = format == .json
        var items: [String] = []
        func emit(_ s: String) { if json { items.append(s) } else { out.line(s) } }
        switch kind {
        case .summary, .threads:
            for t in page(try threads(all)) {
                if kind == .threads {
                    emit(json ? Output.json("thread:" + t.thread) : "thread:" + t.thread)
                } else if json {
                    emit("{\"thread\":\(Output.json(t.thread)),\"date\":\(t.newest),\"matched\":\(t.messages.count),"
                         + "\"total\":\(t.total),\"authors\":\(Output.jsonArray(t.authors)),\"subject\":\(Output.json(t.subject)),"
                         + "\"flags\":\(Output.jsonArray(t.flags))}")
                } else {
                    let flags = t.flags.isEmpty ? "" : " (" + t.flags.joined(separator: " ") + ")"
                    emit("thread:\(t.thread)  \(Output.date(t.newest)) [\(t.messages.count)/\(t.total)] "
                         + "\(t.authors.joined(separator: ", ")); \(t.subject)\(flags)")
                }
            }
        case .threadMembers:
            for t in page(try threads(all)) {
                let ids = t.messages.count == t.total ? t.messages.map(\.record.id) : try index.thread(t.thread).map(\.record.id)
                let sorted = ids.map(Output.escape).sorted()
                emit(json ? Output.jsonArray(sorted) : sorted.joined(separator: " "))
            }
        case .messages:
            for m in page(all) {
                let r = m.record
                if json {
                    emit("{\"id\":\(Output.json(r.id)),\"thread\":\(Output.json(m.thread)),\"date\":\(r.date ?? 0),"
                         + "\"from\":\(Output.json(r.from)),\"subject\":\(Output.json(r.subject)),"
                         + "\"flags\":\(Output.jsonArray(Output.flagWords([m]))),"
                         + "\"files\":\(Output.jsonArray(r.files.map(index.absolutePath)))}")
                } else {
                    emit("id:\(Output.escape(r.id))  \(Output.date(r.date)) \(Output.author(r.from)); \(r.subject)")
                }
            }
        case .messageIDs:
            for m in page(all) { emit(json ? Output.json(m.record.id) : Output.escape(m.record.id)) }
        case .files:
            for m in page(all) {
                for f in m.record.files { emit(json ? Output.json(index.absolutePath(f)) : index.absolutePath(f)) }
            }
        }
        if json { out.line("[" + items.joined(separator: ",\n") + "]") }
    }
}
