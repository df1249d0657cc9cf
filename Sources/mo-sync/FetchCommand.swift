#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import MailMessage
import MoCLI
import MoConfig
import MoCore
import SyncRunner

/// `mo-sync fetch FILE|QUERY…`: placeholders (`max-size`) replaced by their messages, on demand.
struct Fetch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace placeholders (messages over max-size) with the messages themselves.",
        discussion: """
            A message larger than max-size arrives as a placeholder: its real header, and a short body \
            giving its size and this command. mo-sync fetch downloads the message and puts it in the \
            placeholder's place under the same file name and flags, so a mail client's open mailbox stays \
            valid. Flagging a placeholder and syncing does the same.

            Each argument is a file (a path with a /), or else a mo-index query whose matching files are \
            taken (mo-index query --output=files). With --stdin, the message on standard input (neomutt's \
            <pipe-message>) names the placeholder by its Message-ID.

            Examples:
              mo-sync fetch ~/Mail/work/INBOX/cur/1700000000.M1P2.host:2,S
              mo-sync fetch 'is:placeholder and from:ann'
              macro index,pager \\eF "<pipe-message>mo-sync fetch --stdin<enter>"   (neomutt)

            A file that is no placeholder is left alone and named. Exit status: 0 every placeholder \
            filled, 64 a file outside the accounts' Maildirs or a bad query, 65 a file mo-sync has not \
            synced, its message gone from the server, or the mailbox's UIDVALIDITY changed since the last \
            sync, 75 the server unreachable or a sync still running after 30 s (it is waited for), 77 \
            authentication failed.
            """)

    @OptionGroup var options: ConfigOptions

    @Flag(help: "Read a message on standard input and fetch the placeholder with its Message-ID.")
    var stdin = false

    @Argument(help: ArgumentHelp("Placeholder files, or mo-index queries.", valueName: "file|query"))
    var items: [String] = []

    func run() throws {
        let config = try ConfigLoader.load(explicitPath: options.config)
        var paths: [String] = []
        var queries = items.filter { !$0.contains("/") }
        paths += items.filter { $0.contains("/") }
        if stdin {
            var input: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while input.count < 16 << 20 {
                let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, 65_536) }
                if n <= 0 { break }
                input += chunk[..<n]
            }
            guard let field = HeaderBlock.parse(input[...]).first("Message-ID"),
                let id = MessageID.fromHeader(String(decoding: field.unfoldedValue, as: UTF8.self)), !id.isEmpty
            else { throw GenericError(.data, "the message on standard input has no Message-ID") }
            queries.append("id:\"\(id)\"")
        }
        guard !paths.isEmpty || !queries.isEmpty else { throw GenericError(.usage, "give a placeholder file, a query, or --stdin") }
        for query in queries { paths += try files(matching: query, config: options.config) }
        let outcome = PlaceholderFetch.run(paths: paths, config: config)
        for p in outcome.problems { CommandLineRunner.printError("mo-sync fetch: " + p) }
        print("fetched \(outcome.filled) message(s)")
        if let kind = outcome.firstError { throw ExitCode(SysExit(kind).rawValue) }
    }

    /// The files `mo-index query --output=files QUERY` names (mo-index beside this program, else on PATH).
    func files(matching query: String, config: String?) throws -> [String] {
        let here = ChildProcess.ownExecutable()
        let sibling = String(here[..<(here.lastIndex(of: "/") ?? here.startIndex)]) + "/mo-index"
        let program = access(sibling, X_OK) == 0 ? sibling : "mo-index"
        let argv = [program, "query", "--output=files"] + (config.map { ["--config", $0] } ?? []) + [query]
        let r = try ChildProcess.run(argv)
        guard r.status == 0 else {
            throw GenericError(
                r.status == 64 ? .usage : .unavailable,
                "mo-index query \(quotedForMessage(query)): "
                    + escapedForMessage(r.stderrString.split(separator: "\n").last.map(String.init) ?? "exit \(r.status)"))
        }
        return r.stdoutString.split(separator: "\n").map(String.init)
    }
}
