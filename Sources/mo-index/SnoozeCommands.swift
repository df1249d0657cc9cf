#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import MailMessage
import Maildir
import MoCLI
import MoConfig
import MoCore
import MoIndex
import SyncState

// Snooze: the messages move to the snooze folder (general.snooze-folder) with a keyword that names their
// time (`SnoozeMark`); the keyword travels with the message, so whichever device's mo-sync runs first
// after the time brings it back to INBOX, unread (`SnoozedFiles`), and the others see it come back.

extension MoIndexCommand {
    struct Snooze: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put the messages a query matches away until a time: mo-index snooze QUERY UNTIL",
            discussion: """
                UNTIL is the last argument: +2h, 09:00, tomorrow, 'tomorrow 09:00' (or tomorrow@09:00), \
                monday, 2026-12-24@18:30, or an RFC 3339 time, in the local time zone. The messages move to \
                the snooze folder (general.snooze-folder, default Snoozed; mo-sync creates it on the \
                server), marked with the time; at the time mo-sync (a timer run, or within a few seconds when \
                watching) moves them back to INBOX, unread. Snoozing a snoozed message changes its time.
                --cancel QUERY brings snoozed messages back now. mo-index snoozed lists them; mo-index undo \
                takes a snooze back.

                Example: mo-index snooze 'thread:{id:abc@x}' tomorrow@09:00
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Flag(help: "Bring the snoozed messages the query matches back to INBOX now.")
        var cancel = false

        @Argument(help: ArgumentHelp("The query, then (without --cancel) the time.", valueName: "query-and-until"))
        var words: [String] = []

        func run() throws {
            guard words.count >= (cancel ? 1 : 2) else {
                throw ValidationError(
                    cancel ? "Give a query: mo-index snooze --cancel QUERY" : "Give a query and a time: mo-index snooze QUERY UNTIL")
            }
            let now = WallClock.now()
            var until: Int?
            if !cancel {
                guard let t = WhenText.parse(words.last!, now: now) else {
                    throw GenericError(.usage, "\"\(escapedForMessage(words.last!))\": not a time (\(WhenText.expected))")
                }
                guard t > now else { throw GenericError(.usage, "\"\(escapedForMessage(words.last!))\" is not in the future") }
                until = t
            }
            let merged = global.merged(self.location)
            let config = try ConfigLoader.load(explicitPath: merged.config.config)
            let (location, messages) = try Triage.matchingMessages(merged, query: Array(cancel ? words : words.dropLast()))
            var plan: [Triage.FileStep] = []
            for files in messages {
                // A message with files in several folders (a copy in INBOX and one in Archive) is snoozed
                // once: its file in the snooze folder (a new time), else in INBOX, else its first; the other
                // copies stay where they are.
                var chosenRank = -1
                for path in files {
                    guard let account = config.accounts.first(where: { $0.maildir.map { path.hasPrefix($0 + "/") } ?? false }),
                        let root = account.maildir
                    else { continue }
                    if AccountFiles.isGmailMode(config.stateDirectory + "/" + account.name) {
                        throw GenericError(
                            .unavailable,
                            "account \(account.name) is in Gmail mode: snooze moves between IMAP folders, and Gmail's labels have no Snoozed one yet"
                        )
                    }
                    let snoozeFolder = try FolderNameMapper.folderPath(root: root, mailbox: config.snoozeFolder, layout: account.layout)
                    let inbox = try FolderNameMapper.folderPath(root: root, mailbox: "INBOX", layout: account.layout)
                    let folder = Triage.folderDirectory(of: path)
                    if until == nil {
                        if folder == snoozeFolder {
                            plan.append(Triage.FileStep(path: path, to: inbox, change: SnoozedFiles.wakeChange(path)))
                        }
                    } else if let until {
                        let rank = folder == snoozeFolder ? 2 : folder == inbox ? 1 : 0
                        guard rank > chosenRank else { continue }
                        // Only real changes, so that undo puts back what was there (a mark the file had stays).
                        let mark = SnoozeMark.keyword(for: until)
                        let has = KeywordMove.keywords(of: path)
                        let old = has.filter { SnoozeMark.time(of: $0) != nil && $0.lowercased() != mark.lowercased() }
                        let add: Set<String> = has.contains { $0.lowercased() == mark.lowercased() } ? [] : [mark]
                        if chosenRank >= 0 { plan.removeLast() }
                        chosenRank = rank
                        if rank == 2 && add.isEmpty && old.isEmpty { continue }  // snoozed until then already
                        plan.append(
                            Triage.FileStep(path: path, to: snoozeFolder, change: KeywordMove.Change(addKeywords: add, removeKeywords: old))
                        )
                    }
                }
            }
            let done = try Triage.perform(plan, location: location) { try KeywordMove.move($0.path, to: $0.to, change: $0.change) != nil }
            try Triage.reindex(location)
            if let until {
                print(
                    "mo-index: \(done) file(s) snoozed until \(WhenText.describe(until, now: now)) in \(config.snoozeFolder); mo-sync brings them back to INBOX"
                )
            } else {
                print("mo-index: \(done) file(s) back in INBOX; mo-sync will move them on the server")
            }
        }
    }

    struct Snoozed: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the snoozed messages and when each comes back.",
            discussion: "One line each, soonest first: WHEN<TAB>ACCOUNT<TAB>FROM<TAB>SUBJECT.")

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        func run() throws {
            let config = try ConfigLoader.load(explicitPath: global.merged(location).config.config)
            let now = WallClock.now()
            var rows: [(Int, String)] = []
            for account in config.accounts {
                guard let root = account.maildir,
                    let folder = try? FolderNameMapper.folderPath(root: root, mailbox: config.snoozeFolder, layout: account.layout)
                else { continue }
                for (path, until) in SnoozedFiles.list(folder) {
                    let head: [UInt8]
                    if case .success(let bytes) = readWholeFile(path) { head = Array(bytes.prefix(65536)) } else { head = [] }
                    let from = HeaderEdit.value("From", in: head).map(EncodedWords.decode) ?? ""
                    let subject = HeaderEdit.value("Subject", in: head).map(EncodedWords.decode) ?? ""
                    rows.append(
                        (
                            until,
                            [WhenText.describe(until, now: now), account.name, from, subject].map { escapedForMessage($0) }.joined(
                                separator: "\t")
                        ))
                }
            }
            for (_, line) in rows.sorted(by: { $0.0 < $1.0 }) { print(line) }
        }
    }
}
