#if canImport(Glibc)
    import Glibc
#endif
import ActionJournal
import Maildir
import MoCLI
import MoConfig
import MoCore
import SyncState

/// `--cancel ID|last`: a queued message taken back before it goes (undo send, a send later changed), and
/// the waiter that sends a message whose short wait (`send-delay`, a near `--at`) no mo-sync may cover.
enum CancelCommand {
    /// Waits up to this long get a waiter; longer ones are sent by mo-sync (`--watch`, or a timer run).
    static let waiterHorizon = 15 * 60

    /// Prints the message on stdout (or, `toDrafts`, delivers it to the account's Drafts folder), then
    /// drops it from the queue (`JournalRunner.cancel`: in that order, so a crash keeps it).
    static func run(_ selector: String, toDrafts: Bool, config: Config, runner: JournalRunner) throws {
        var kept = ""
        let r = try runner.cancel(selector) { record, message in
            if toDrafts {
                kept = "put in " + (try deliverToDrafts(message, record: record, config: config))
            } else {
                try writeStandardOutput(message)
                kept = "printed"
            }
        }
        CommandLineRunner.printError("mo-sendmail: \(r.id) cancelled; the message was \(escapedForMessage(kept))")
    }

    /// The account's Drafts folder (the server's `\Drafts` as mo-sync recorded it, else `Drafts`), with
    /// the message marked draft and seen; mo-sync uploads it. (A crash after the delivery and before the
    /// drop leaves the message queued as well as drafted: a second cancel files a second draft.)
    static func deliverToDrafts(_ message: [UInt8], record: ActionRecord, config: Config) throws -> String {
        guard let account = config.account(named: record.account), let root = account.maildir else {
            throw GenericError(
                .usage, "account \(record.account) has no maildir to hold drafts; cancel without --to-drafts prints the message")
        }
        let directory = config.stateDirectory + "/" + account.name
        let mailbox = AccountFiles.isGmailMode(directory) ? "Drafts" : AccountFiles.readRoles(in: directory)["drafts"] ?? "Drafts"
        let folder = MaildirFolder(path: try FolderNameMapper.folderPath(root: root, mailbox: mailbox, layout: account.layout))
        if !folder.exists { try folder.create() }
        _ = try folder.deliver(message, to: .cur, flags: [.draft, .seen])
        return mailbox
    }

    /// Starts `mo-sendmail --send-due DUE` in a session of its own, output to /dev/null.
    static func startWaiter(due: Int, config: String?) {
        var argv = [ChildProcess.ownExecutable(), "--send-due", String(due)]
        if let config { argv += ["--config", config] }
        _ = try? ChildProcess.startDetached(argv, newSession: true)
    }

    /// The message as it is into a pipe or file; on a terminal, line by line with control characters
    /// escaped (quoted mail may hold escape sequences from outside): redirect for the exact bytes.
    static func writeStandardOutput(_ bytes: [UInt8]) throws {
        var out = bytes
        if isatty(1) == 1 {
            out = Array(
                bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                    .map { escapedForMessage(bytes: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0) }
                    .joined(separator: "\n").utf8)
        }
        if let e = out.withUnsafeBytes({ writeAll(1, $0) }) {
            throw GenericError(.localIO, "cannot write the message to stdout: \(errnoDescription(e)); it stays queued")
        }
    }
}
