#if canImport(Glibc)
    import Glibc
#endif
import ActionJournal
import MoCLI
import MoConfig
import MoCore

// mo-sendmail keeps sendmail's command line (-oi, -oem, -B8BITMIME, -t, -f ADDR ...), which no option-parsing
// library models, so it parses its arguments by hand (Arguments.swift). Man page: docs/mo-sendmail.1.

let usage = """
    usage: mo-sendmail [options] [--] recipient...
           mo-sendmail --at WHEN [options] [--] recipient...
           mo-sendmail --queue | --flush | --retry ID | --drop ID | --cancel ID|last [--to-drafts]

    A sendmail-compatible sender: reads a message on stdin and sends it over SMTP with the account
    chosen by -a or by the From address (else the first account); a JMAP account without [smtp] sends
    through its JMAP server, which keeps the Sent copy. When the server cannot be reached,
    the message is queued and mo-sync (or mo-sendmail --flush) sends it later.
    neomutt: set sendmail="mo-sendmail"

    Options:
      -t                 read recipients from To, Cc and Bcc (Bcc is removed before sending)
      -f ADDR, -r ADDR   envelope sender (default: the account address)
      --read-envelope-from  envelope sender from the From field
      -F NAME            full name, for a From field that is missing
      -a ACCOUNT         account to send with (default: chosen by -f or From, else the first account)
      -i, -oi            accepted; the message always ends at end of input
      -N DSN, -R RET     delivery status notifications (passed on when the server offers DSN)
      -V ENVID           DSN envelope id
      -B8BITMIME         accepted; 8-bit bodies are detected
      -o*, -od*, -oem    accepted and ignored
      --config FILE      configuration file
      --at WHEN          send later: +2h, 09:00, tomorrow@09:00, friday@14:00, 2026-12-24@18:30, or an
                         RFC 3339 time (local zone). An X-Mo-Send-At: field in the message does the same
                         (set it in the editor); it is removed before sending. The message is dated then.
      --cancel ID|last   take a message out of the queue before it goes and print it (undo send with
                         general.send-delay; a send later changed); --to-drafts puts it in Drafts instead
      --queue, -bp       list queued messages, one per line
      --flush, -q        send queued messages now
      --retry ID         queue a failed or in-doubt message again
      --drop ID          forget a queued, failed or in-doubt message
      -h, --help         this text
      --version          print the version

    Exit status (sysexits.h): 0 sent or queued, 64 bad usage, 65 bad message, 69 refused by the server,
    74 local I/O error, 75 temporary failure, 76 protocol error, 77 authentication or TLS refused,
    78 configuration error.
    """

let tool = "mo-sendmail"

/// Queue and flush lines quote SMTP replies and recipients: escaped for the terminal.
func say(_ line: String) { print(escapedForMessage(line)) }

do {
    let args = try Arguments(Array(CommandLine.arguments.dropFirst()))
    switch args.mode {
    case .help:
        print(usage)
        exit(0)
    case .version:
        print("mo-sendmail \(MoVersion.string)")
        exit(0)
    default: break
    }
    let config = try ConfigLoader.load(explicitPath: args.config)
    let runner = JournalRunner(config: config)
    switch args.mode {
    case .queue:
        for line in try runner.queue() { say(line) }
    case .flush:
        let report = try runner.flush(force: true)
        if let skipped = report.skipped { CommandLineRunner.fail(tool: tool, GenericError(.busy, skipped)) }
        for line in report.lines { say(line) }
        if report.retrying > 0 || report.failed > 0 { exit(SysExit.tempFail.rawValue) }
    case .retry(let id):
        try runner.retry(id: id)
    case .drop(let id):
        try runner.drop(id: id)
    case .cancel(let selector):
        try CancelCommand.run(selector, toDrafts: args.toDrafts, config: config, runner: runner)
    case .sendDue(let due):
        // The waiter: until the message's time, then every due message (a cancelled one is not). While
        // another process flushes (a mo-sync that began just before the time may pass over it), again.
        while WallClock.now() < due { sleep(UInt32(min(max(due - WallClock.now(), 1), 60))) }
        for _ in 0..<60 where try runner.flush().skipped != nil { sleep(5) }
    case .send:
        let input = try readStandardInput()
        switch try SendCommand.run(args, config: config, input: input) {
        case .sent:
            break
        case .queued(let id, let reason):
            CommandLineRunner.printError(
                "\(tool): queued: \(escapedForMessage(reason)) (\(id); mo-sync or mo-sendmail --flush sends it later)")
        case .scheduled(let id, let due):
            let now = WallClock.now()
            CommandLineRunner.printError(
                "\(tool): \(id) sends \(WhenText.describe(due, now: now)); mo-sendmail --cancel \(id) takes it back")
            // A short wait gets a waiter of its own; a longer one is for mo-sync (--watch, or its timer).
            if due - now <= CancelCommand.waiterHorizon { CancelCommand.startWaiter(due: due, config: args.config) }
        case .inDoubt(let id, let reason):
            CommandLineRunner.printError(
                "\(tool): in doubt: \(escapedForMessage(reason)) (\(id) is kept and not resent; see mo-sendmail --queue)")
        }
    case .help, .version:
        break
    }
    exit(0)
} catch let error as any MoError {
    CommandLineRunner.fail(tool: tool, error)
} catch {
    CommandLineRunner.fail(tool: tool, GenericError(.software, "\(error)"))
}
