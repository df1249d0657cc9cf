import ArgumentParser
import MoCLI
import MoCore
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

        @Option(help: ArgumentHelp("JSON format version to print (docs/json.md); only 1 is supported.", valueName: "n"))
        var formatVersion: Int?

        @Argument(help: ArgumentHelp("A thread id or a query.", valueName: "id|query"))
        var query: [String]

        func run() throws {
            try JSONFormat.check(formatVersion)
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
            // JSON: {"format_version":1,"results":[ one tree entry per line ]} (docs/json.md).
            var results = format == .json ? Output.beginResults() : nil
            for id in ids {
                let members = try index.thread(id)
                var threads = ThreadIndex()
                var byID: [String: IndexedMessage] = [:]
                for m in members {
                    byID[m.record.id] = m
                    threads.add(
                        ThreadInput(
                            messageID: m.record.id, inReplyTo: m.record.inReplyTo,
                            references: m.record.references, date: m.record.date,
                            strictInReplyTo: .some(m.record.strictInReplyTo)))
                }
                guard let first = members.first, let tid = threads.threadID(of: first.record.id),
                    let tree = threads.tree(of: tid)
                else { continue }
                if results == nil { out.line("thread:\(id)") }
                for e in tree.entries {
                    let indent = String(repeating: "  ", count: e.depth)
                    guard !e.isGhost, let m = byID[e.messageID] else {
                        // The placeholder of a missing parent keeps the depths of its replies meaningful.
                        if results != nil {
                            results!.write([
                                "thread": .string(id), "depth": .int(e.depth), "id": .string(e.messageID),
                                "missing": true
                            ])
                        } else {
                            out.line("\(indent)(missing: \(Output.escape(e.messageID)))")
                        }
                        continue
                    }
                    let flags = Output.flagWords([m])
                    if results != nil {
                        results!.write([
                            "thread": .string(id), "depth": .int(e.depth), "id": .string(m.record.id),
                            "missing": false, "date": .int(m.record.date ?? 0), "from": .string(m.record.from),
                            "subject": .string(m.record.subject), "flags": .strings(flags)
                        ])
                    } else {
                        out.line(
                            "\(indent)\(Output.date(m.record.date)) \(Output.author(m.record.from)); \(m.record.subject)"
                                + (flags.isEmpty ? "" : " (" + flags.joined(separator: " ") + ")") + "  id:\(Output.escape(m.record.id))")
                    }
                }
            }
            if results != nil { Output.endResults(&results!) }
        }
    }
}
