import ArgumentParser
import MoCLI
import MoIndex

extension MoIndexCommand {
    struct Address: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Complete addresses for neomutt's query_command.",
            discussion: """
                Prints a first line, then address<TAB>name<TAB>count for every address or name containing TEXT \
                (case-insensitive): first the people you wrote to (From is one of your addresses: the \
                configured accounts and aliases, or --me), most often first; then people who wrote to you.
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Option(help: ArgumentHelp("One of your addresses (repeatable; adds to the configured ones).", valueName: "address"))
        var me: [String] = []

        @Option(help: "At most this many addresses.")
        var limit: Int = 50

        @Argument(help: ArgumentHelp("Part of a name or address.", valueName: "text"))
        var text: [String] = []

        func run() throws {
            let where_ = try global.merged(location).forReading()
            let index = try MailIndex(path: where_.indexPath)
            let needle = text.joined(separator: " ").lowercased()
            let mine = Set(where_.ownAddresses + me.map { $0.lowercased() })
            struct Entry { var name: String; var sent = 0; var received = 0 }
            var book: [String: Entry] = [:]
            func matches(_ name: String, _ address: String) -> Bool {
                needle.isEmpty || address.lowercased().contains(needle) || name.lowercased().contains(needle)
            }
            // Your messages: their recipients.
            if !mine.isEmpty {
                let query = mine.sorted().map { "from:\"\($0)\"" }.joined(separator: " OR ")
                for m in try index.messages(try index.query(query), order: .relevance) {
                    for r in m.record.recipients where !mine.contains(r.address.lowercased()) && matches(r.name, r.address) {
                        let key = r.address.lowercased()
                        var e = book[key] ?? Entry(name: r.name)
                        if e.name.isEmpty { e.name = r.name }
                        e.sent += 1
                        book[key] = e
                    }
                }
            }
            // Senders whose name or address contains the text.
            if !needle.isEmpty {
                let words = needle.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map { "from:\($0)*" }
                if !words.isEmpty {
                    for m in try index.messages(try index.query(words.joined(separator: " ")), order: .relevance) {
                        let name = Output.author(m.record.from)
                        let address = Self.address(m.record.from)
                        guard !address.isEmpty, !mine.contains(address.lowercased()), matches(name, address) else { continue }
                        let key = address.lowercased()
                        var e = book[key] ?? Entry(name: name == address ? "" : name)
                        e.received += 1
                        book[key] = e
                    }
                }
            }
            let ranked = book.sorted { a, b in
                (a.value.sent, a.value.received, b.key) > (b.value.sent, b.value.received, a.key)
            }.prefix(limit)
            var out = LineWriter()
            defer { out.flush() }
            out.line(ranked.isEmpty ? "mo-index: no address matches \"\(needle)\"" : "mo-index: \(ranked.count) addresses")
            for (address, e) in ranked { out.line("\(address)\t\(e.name)\t\(e.sent) sent, \(e.received) received") }
        }

        static func address(_ from: String) -> String {
            if let lt = from.lastIndex(of: "<"), let gt = from[lt...].firstIndex(of: ">") {
                return String(from[from.index(after: lt)..<gt])
            }
            return from.trimmingCharacters(in: .whitespaces)
        }
    }
}
