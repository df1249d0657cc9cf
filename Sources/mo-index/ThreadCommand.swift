import ArgumentParser
import MoCLI
import MoIndex
import Threading

extension MoIndexCommand {
    struct Thread: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print whole threads in reading order, indented by depth.",
            discussion: "The argument is a thread id (as `query` prints it, with or without `thread:`) or a query: "
                + "every thread with a match is printed.")

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Option(help: "text or json.")
        var format: OutputFormat = .text

        @Argument(help: ArgumentHelp("A thread id or a query.", valueName: "id|query"))
        var query: [String]

        func run() throws {
            let index = try MailIndex(path: try global.merged(location).forReading().indexPath)
            var text = query.joined(separator: " ")
            if text.hasPrefix("thread:") && !text.hasPrefix("thread:{") { text = String(text.dropFirst(7)) }
            var ids: [String]
            if text.count == 16, text.allSatisfy(\.isHexDigit), try index.threadSize(text) > 0 {
                ids = [text]
            } else {
                var seen = Set<String>()
                ids = try index.messages(try index.query(text)).map(\.thread).filter { seen.insert($0).inserted }
            }
            var out = LineWriter()
            defer { out.flush() }
            var json: [String] = []
            for id in ids {
                let members = try index.thread(id)
                var threads = ThreadIndex()
                var byID: [String: IndexedMessage] = [:]
                for m in members {
                    byID[m.record.id] = m
                    threads.add(ThreadInput(messageID: m.record.id, inReplyTo: m.record.inReplyTo,
                                            references: m.record.references, date: m.record.date,
                                            strictInReplyTo: .some(m.record.strictInReplyTo)))
                }
                guard let first = members.first, let tid = threads.threadID(of: first.record.id),
                      let tree = threads.tree(of: tid) else { continue }
                if format == .text { out.line("thread:\(id)") }
                for e in tree.entries {
                    let indent = String(repeating: "  ", count: e.depth)
                    guard !e.isGhost, let m = byID[e.messageID] else {
                        if format == .text { out.line("\(indent)(missing: \(Output.escape(e.messageID)))") }
                        continue
                    }
                    if format == .json {
                        json.append("{\"thread\":\(Output.json(id)),\"depth\":\(e.depth),\"id\":\(Output.json(m.record.id)),"
                                    + "\"date\":\(m.record.date ?? 0),\"from\":\(Output.json(m.record.from)),"
                                    + "\"subject\":\(Output.json(m.record.subject)),\"flags\":\(Output.jsonArray(Output.flagWords([m])))}")
                    } else {
                        let flags = Output.flagWords([m])
                        out.line("\(indent)\(Output.date(m.record.date)) \(Output.author(m.record.from)); \(m.record.subject)"
                                 + (flags.isEmpty ? "" : " (" + flags.joined(separator: " ") + ")") + "  id:\(Output.escape(m.record.id))")
                    }
                }
            }
            if format == .json { out.line("[" + json.joined(separator: ",\n") + "]") }
        }
    }
}
