#if canImport(Glibc)
    import Glibc
#endif
import ActionJournal
import MailMessage
import MoCLI
import MoConfig
import MoCore
import SMTPClient

/// Turns the message on stdin and the command line into an envelope and a complete message, and hands
/// them to the journal runner, which stores them durably before sending.
enum SendCommand {
    static func run(_ args: Arguments, config: Config, input: [UInt8]) throws -> SubmitOutcome {
        let fromValue = HeaderEdit.value("From", in: input)
        let fromHeader = fromValue.flatMap { OutgoingMessage.addressSpecs(in: $0).first }
        let explicitFrom = args.from.map { $0 == "<>" ? "" : (OutgoingMessage.addressSpecs(in: $0).first ?? $0) }
        let account = try chooseAccount(args, config: config, from: explicitFrom, header: fromHeader)

        let sender = explicitFrom ?? (args.readEnvelopeFrom ? fromHeader : nil) ?? account.address
        var message = input
        if fromHeader == nil && fromValue == nil {
            let address = sender.isEmpty ? account.address : sender
            message = HeaderEdit.adding(
                ["From: " + (args.fullName.map { "\(quotedIfNeeded($0)) <\(address)>" } ?? address)], to: message)
        }
        let now = WallClock.now()
        let (due, scheduled) = try when(args, config: config, message: &message, now: now)
        // Sent later: the message is dated when it goes, as the recipient will see it arrive.
        if scheduled { message = OutgoingMessage.removing(fields: ["date"], from: message) }
        message = OutgoingMessage.addingMissingDateAndMessageID(
            message, fallbackDomain: domain(of: account.address), now: scheduled ? due ?? now : now)

        var seen: Set<String> = []
        var recipients = args.recipients.flatMap { arg in
            let parsed = OutgoingMessage.addressSpecs(in: arg)
            return parsed.isEmpty ? [arg] : parsed
        }
        if args.readRecipients { recipients += OutgoingMessage.recipients(fromHeadersOf: message) }
        recipients = recipients.filter { seen.insert($0.lowercased()).inserted }
        guard !recipients.isEmpty else {
            throw GenericError(.usage, "no recipients: give them as arguments or use -t to read To, Cc and Bcc")
        }
        // Recipients only on the command line are the Bcc ones (neomutt passes them so, and with -t any given
        // besides the header's); the Sent copy records them in its one Bcc field (RFC 5322 §3.6), after the
        // addresses already there. Bcc is removed before sending.
        if account.keepsSent {
            let visible = Set(OutgoingMessage.recipients(fromHeadersOf: message).map { $0.lowercased() })
            let hidden = recipients.filter { !visible.contains($0.lowercased()) }
            if !hidden.isEmpty {
                let bcc = OutgoingMessage.bccRecipients(of: message) + hidden
                message = HeaderEdit.adding(
                    ["Bcc: " + bcc.joined(separator: ", ")], to: OutgoingMessage.removing(fields: ["bcc"], from: message))
            }
        }
        if let notify = args.notify, DSNNotify(sendmailArgument: notify) == nil {
            throw GenericError(.usage, "-N \(notify): expected never, or a list of success, failure, delay")
        }
        if let ret = args.ret, DSNReturn(rawValue: ret.uppercased()) == nil {
            throw GenericError(.usage, "-R \(ret): expected hdrs or full")
        }
        let runner = JournalRunner(config: config)
        do {
            return try runner.submit(
                message: message, envelope: SMTPEnvelope(sender: sender, recipients: recipients),
                account: account, dsn: (args.notify, args.ret, args.envelopeID), due: due, now: now)
        } catch let error as SMTPError where error.code == .signIn {
            // The one line every program gives for a lapsed OAuth2 grant: `ACCOUNT: sign-in expired ...`.
            throw GenericError(.authentication, "\(account.name): \(error)")
        }
    }

    /// The field people set in their editor to send later (neomutt: `edit_headers`); taken out before
    /// the message is stored.
    static let sendAtField = "X-Mo-Send-At"

    /// When the message may go: `--at`, else its `X-Mo-Send-At:` field (removed from `message`), else
    /// `send-delay` from now; nil for at once. `scheduled` says the user chose the time (the message is
    /// then dated with it). A time that cannot be read, or one already past, is a usage error naming it.
    static func when(_ args: Arguments, config: Config, message: inout [UInt8], now: Int) throws -> (due: Int?, scheduled: Bool) {
        let field = HeaderEdit.value(sendAtField, in: message)
        if field != nil { message = OutgoingMessage.removing(fields: [sendAtField.lowercased()], from: message) }
        let (text, source) = args.at.map { ($0, "--at") } ?? field.map { ($0, sendAtField + ":") } ?? ("", "")
        guard !text.isEmpty else { return (config.sendDelay > 0 ? now + config.sendDelay : nil, false) }
        guard let t = WhenText.parse(text, now: now) else {
            throw GenericError(.usage, "\(source) \"\(escapedForMessage(text))\": not a time (\(WhenText.expected))")
        }
        guard t >= now else {
            throw GenericError(.usage, "\(source) \"\(escapedForMessage(text))\" is in the past (\(WhenText.describe(t, now: now)))")
        }
        return (max(t, now + config.sendDelay), true)
    }

    /// `-a`, else the account owning the `-f` address, else the one owning the From address, else the first
    /// that can send (an `[smtp]` table, or a JMAP account). (`submit` names a chosen account's missing `[smtp]`.)
    static func chooseAccount(_ args: Arguments, config: Config, from: String?, header: String?) throws -> Account {
        if let name = args.account {
            return try config.selectAccounts([name])[0]
        }
        for address in [from, header].compactMap({ $0 }) where !address.isEmpty {
            if let account = config.account(forAddress: address) { return account }
        }
        return config.accounts.first { $0.smtp != nil || $0.sendsByJMAP } ?? config.accounts[0]
    }

    static func domain(of address: String) -> String {
        address.split(separator: "@").last.map(String.init) ?? "localhost"
    }

    /// A display name as an RFC 5322 phrase: quoted when it holds anything but letters, digits and spaces.
    static func quotedIfNeeded(_ name: String) -> String {
        if name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == " " }) { return name }
        return "\"" + name.replacingBackslashesAndQuotes() + "\""
    }
}

extension String {
    func replacingBackslashesAndQuotes() -> String {
        var out = ""
        for ch in self {
            if ch == "\\" || ch == "\"" { out.append("\\") }
            out.append(ch)
        }
        return out
    }
}

/// All of stdin.
func readStandardInput() throws -> [UInt8] {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = read(0, &buffer, buffer.count)
        if n > 0 { data.append(contentsOf: buffer[0..<n]); continue }
        if n == 0 { return data }
        if errno == EINTR { continue }
        throw GenericError(.localIO, "cannot read the message from stdin: \(errnoDescription(errno))")
    }
}
