import MoCore

/// What mo-sendmail was asked to do.
enum Mode: Equatable {
    case send, queue, flush, help, version
    case retry(String), drop(String), cancel(String)
    /// The waiter mo-sendmail leaves behind for a message that waits a short time (send-delay, a near
    /// `--at`): sleeps until `due`, then sends what is due (not in --help: mo-sendmail starts it itself).
    case sendDue(Int)
}

/// The sendmail command line, parsed by hand: sendmail's options (`-oi`, `-fADDR`, `-B8BITMIME`) do not fit
/// an option library. Options and recipients may mix; `--` ends the options.
struct Arguments: Equatable {
    var mode = Mode.send
    var recipients: [String] = []
    /// `-t`: recipients also from To, Cc and Bcc.
    var readRecipients = false
    /// `-f`/`-r`: the envelope sender ("<>" for the null sender).
    var from: String?
    /// `-F`: full name for a From field that is missing.
    var fullName: String?
    /// `-a`: account name.
    var account: String?
    /// `-N`, `-R`, `-V`: DSN wishes.
    var notify: String?
    var ret: String?
    var envelopeID: String?
    /// `--read-envelope-from`: the envelope sender is the From address.
    var readEnvelopeFrom = false
    var config: String?
    /// `--at WHEN`: send later (`WhenText`).
    var at: String?
    /// `--cancel ... --to-drafts`: the cancelled message goes to the account's Drafts instead of stdout.
    var toDrafts = false
    /// Options accepted and ignored, for `--debug`-style reporting in tests.
    var ignored: [String] = []

    /// Single-letter sendmail flags that change nothing here (verbose, me-too, no aliasing, initial
    /// submission, gateway submission, the -i of `-ti`).
    static let noOpFlags: Set<Character> = ["i", "m", "n", "v", "U", "G", "t"]
    /// sendmail options that take a value, accepted and ignored: body type, queue id tag, config file,
    /// log file, hop count, option.
    static let ignoredWithValue: Set<String> = ["-B", "-L", "-C", "-X", "-h", "-O"]

    init(_ argv: [String]) throws(GenericError) {
        var i = 0
        var optionsEnded = false
        func value(_ option: String, attached: Substring) throws(GenericError) -> String {
            if !attached.isEmpty { return String(attached) }
            guard i < argv.count else { throw GenericError(.usage, "option \(option) needs a value (see mo-sendmail --help)") }
            i += 1
            return argv[i - 1]
        }
        while i < argv.count {
            let a = argv[i]
            i += 1
            if optionsEnded || !a.hasPrefix("-") || a == "-" {
                recipients.append(a)
                continue
            }
            if a.hasPrefix("--") {
                let (name, inline) =
                    a.firstIndex(of: "=").map { (String(a[..<$0]), Optional(String(a[a.index(after: $0)...]))) } ?? (a, nil)
                func long() throws(GenericError) -> String {
                    if let inline { return inline }
                    return try value(name, attached: "")
                }
                switch name {
                case "--": optionsEnded = true
                case "--help": mode = .help
                case "--version": mode = .version
                case "--queue": mode = .queue
                case "--flush": mode = .flush
                case "--retry": mode = .retry(try long())
                case "--drop": mode = .drop(try long())
                case "--cancel": mode = .cancel(try long())
                case "--to-drafts": toDrafts = true
                case "--at": at = try long()
                case "--send-due":
                    let text = try long()
                    guard let due = Int(text) else { throw GenericError(.usage, "--send-due \(text): not a Unix time") }
                    mode = .sendDue(due)
                case "--config": config = try long()
                case "--account": account = try long()
                case "--read-envelope-from": readEnvelopeFrom = true
                default: throw GenericError(.usage, "unknown option \(name) (see mo-sendmail --help)")
                }
                continue
            }
            let letter = a.dropFirst().first!
            let rest = a.dropFirst(2)
            switch letter {
            case "f", "r": from = try value("-\(letter)", attached: rest)
            case "F": fullName = try value("-F", attached: rest)
            case "a": account = try value("-a", attached: rest)
            case "N": notify = try value("-N", attached: rest)
            case "R": ret = try value("-R", attached: rest)
            case "V": envelopeID = try value("-V", attached: rest)
            case "o", "e", "d":
                // -oi, -oem, -odb, -odi, -oQ/dir ...; -e and -d (error mode, debug): nothing to do.
                ignored.append(a)
            case "q":
                // -q alone flushes the queue (sendmail: process the queue); -q15m and the like are daemon modes.
                guard rest.isEmpty else {
                    throw GenericError(.usage, "\(a): queue daemon modes are not supported; use mo-sendmail --flush")
                }
                mode = .flush
            case "b":
                switch rest {
                case "m": ignored.append(a)  // deliver mail: the default
                case "p": mode = .queue  // print the queue
                default: throw GenericError(.usage, "\(a) is not supported: mo-sendmail only sends (-bm) and lists the queue (-bp)")
                }
            case "h" where rest.isEmpty && (i >= argv.count || Int(argv[i]) == nil):
                mode = .help
            case _ where Self.ignoredWithValue.contains("-\(letter)"):
                ignored.append(a + (rest.isEmpty ? " " + (try value("-\(letter)", attached: rest)) : ""))
            case _ where a.dropFirst().allSatisfy(Self.noOpFlags.contains):
                if a.contains("t") { readRecipients = true }
                ignored.append(a)
            default:
                throw GenericError(.usage, "unknown option \(a) (see mo-sendmail --help)")
            }
        }
    }
}
