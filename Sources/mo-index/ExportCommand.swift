#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import MailMessage
import Maildir
import MoCLI
import MoCore
import MoIndex

extension MoIndexCommand {
    /// `mo-index export QUERY`: the matching messages as one mboxrd file, oldest first, streamed (each
    /// message read in 64 KiB pieces; the index holds the rest), with a progress line on a terminal.
    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the messages a query matches as an mbox (mboxrd) or as JSON, oldest first.",
            discussion: """
                Each message is written as its file holds it, after a From line (its sender and date); \
                body lines that start with From (after any '>') get one more '>', so a mboxrd reader gets the \
                messages back byte for byte. --format json writes one object per message instead: headers \
                (decoded), the text parts as the index reads them, attachment names, types and sizes, tags \
                (docs/json.md). Example: mo-index export -o lists.mbox 'folder:Lists/dev date:2024'
                """)

        enum Format: String, ExpressibleByArgument, CaseIterable { case mbox, json }

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Option(help: "mbox (mboxrd), or json (headers, decoded text, attachment metadata; docs/json.md).")
        var format: Format = .mbox

        @OptionGroup var output: OutputFile

        @Argument(help: ArgumentHelp("The query; none or * exports everything.", valueName: "query"))
        var query: [String] = []

        func run() throws {
            let index = try MailIndex(path: try global.merged(location).forReading().indexPath)
            let q = try index.query(query.joined(separator: " "))
            let total = try index.count(q)
            var sink = try output.sink()
            defer { sink.close() }
            let progress = isatty(2) == 1
            var written = 0, missing = 0
            // JSON goes through the one writer, its chunks into the same sink (a write error stops the export).
            var sinkError: Error?
            var json =
                format == .json
                ? JSONWriter(sink: { bytes in
                    guard sinkError == nil else { return }
                    do { try sink.write(bytes) } catch { sinkError = error }
                }) : nil
            json?.beginDocument()
            json?.key("messages")
            json?.beginArray(onePerLine: true)
            try index.forEachMessage(q, order: .oldest) { m in
                guard let file = m.record.files.lazy.map(index.absolutePath).first(where: { access($0, R_OK) == 0 }) else {
                    missing += 1
                    return
                }
                if json != nil {
                    // One message parsed at a time: memory is bounded by the largest message, not the export.
                    guard let parsed = ParsedMessage.parse(contentsOfFile: file, bodyText: .reading) else { missing += 1; return }
                    json?.write(Self.jsonMessage(m, parsed, file: file, tags: try index.tags(of: m)))
                    if let sinkError { throw sinkError }
                } else {
                    try sink.write(MboxrdEncoder.separator(sender: Self.sender(m.record.from), date: m.record.date ?? 0))
                    try sink.copy(file)
                }
                written += 1
                if progress && written % 100 == 0 { CommandLineRunner.printProgress("exported \(written) of \(total)") }
            }
            json?.endArray()
            json?.endDocument()
            if let sinkError { throw sinkError }
            try sink.flush()
            if progress { CommandLineRunner.printProgress("") }
            if missing > 0 {
                CommandLineRunner.printError("mo-index: export: \(missing) message(s) left out: no readable file (run mo-index update)")
            }
        }

        /// One message of `--format json` (docs/json.md, "mo-index export --format json").
        static func jsonMessage(_ m: IndexedMessage, _ p: ParsedMessage, file: String, tags: [String]) -> JSONValue {
            func addresses(_ list: [MailAddress]) -> JSONValue {
                .array(list.map { .object([("name", .string($0.name ?? "")), ("address", .string($0.address))]) })
            }
            return .object([
                ("id", .string(m.record.id)),
                ("thread", .string(m.thread)),
                ("date", .int(Int64(m.record.date ?? 0))),
                ("file", .string(file)),
                ("tags", .array(tags.map { .string($0) })),
                ("subject", .string(p.subject)),
                ("from", addresses(p.from)),
                ("to", addresses(p.to)),
                ("cc", addresses(p.cc)),
                ("headers", .array(p.headers.fields.map { .array([.string($0.name), .string($0.text)]) })),
                ("text", .string(p.bodyText)),
                (
                    "attachments",
                    .array(
                        p.attachments.map { a in
                            .object([
                                ("filename", .string(a.filename ?? "")), ("mime_type", .string(a.mimeType)), ("size", .int(Int64(a.size)))
                            ])
                        })
                )
            ])
        }

        /// The address of a shown From ("Name <addr>" or "addr"), for the separator line.
        static func sender(_ from: String) -> String {
            if let open = from.lastIndex(of: "<"), let close = from.lastIndex(of: ">"), open < close {
                return String(from[from.index(after: open)..<close])
            }
            return from
        }
    }
}

/// `-o FILE`, where `export` and `dump` write: one definition of the option for both.
struct OutputFile: ParsableArguments {
    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: ArgumentHelp("Write to FILE (created, or replaced) instead of standard output.", valueName: "file"))
    var output: String?

    func sink() throws -> ExportSink { try ExportSink(path: output) }
}

/// Where an export goes: standard output or a file (mode 0600: mail is private), through one buffer.
struct ExportSink {
    private let fd: Int32
    private let path: String
    private let owned: Bool
    private var buffer: [UInt8] = []

    init(path: String?) throws {
        guard let path else { fd = 1; self.path = "standard output"; owned = false; return }
        let opened = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw GenericError(.localIO, "cannot create \(quotedForMessage(path)): \(errnoDescription(errno))") }
        fd = opened
        self.path = path
        owned = true
        buffer.reserveCapacity(1 << 18)
    }

    mutating func write(_ bytes: [UInt8]) throws {
        buffer += bytes
        if buffer.count >= 1 << 18 { try flush() }
    }

    /// Appends one message file, mboxrd-quoted, read in pieces.
    mutating func copy(_ file: String) throws {
        var encoder = MboxrdEncoder()
        // A gzipped message (notmuch's msg.gz) goes in uncompressed.
        if Gzip.isCompressedFile(file), case .success(let bytes) = readMessageFile(file) {
            encoder.encode(bytes[...], into: &buffer)
            encoder.finish(into: &buffer)
            return
        }
        try MessageFile(path: file).forEachChunk(of: 1 << 16) { piece in
            encoder.encode(piece, into: &buffer)
            if buffer.count >= 1 << 18 { try flush() }
        }
        encoder.finish(into: &buffer)
    }

    mutating func flush() throws {
        defer { buffer.removeAll(keepingCapacity: true) }
        if let e = buffer.withUnsafeBytes({ writeAll(fd, $0) }) {
            throw GenericError(.localIO, "cannot write \(quotedForMessage(path)): \(errnoDescription(e))")
        }
    }

    func close() { if owned { Glibc.close(fd) } }
}
