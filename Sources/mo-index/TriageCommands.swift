#if canImport(Glibc)
    import Glibc
#endif
import ArgumentParser
import Maildir
import MoCLI
import MoConfig
import MoCore
import MoIndex
import SyncState

// Scripted triage: change the Maildir at once (and the index with it); the next `mo-sync` carries the
// change to the server as UID STORE (a flag rename) or UID MOVE (a file that moved between folders keeps
// its unique name, which is how mo-sync recognises a move) — never as a re-upload. The rename itself is the
// durable record of the intent: it survives a crash and needs no journal entry of its own.

extension MoIndexCommand {
    struct FlagMessages: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "flag",
            abstract: "Change flags of the messages a query matches: mo-index flag +flagged -unread -- QUERY",
            discussion: """
                Changes: +WORD or -WORD with WORD one of unread, seen, flagged, replied, draft, trashed, passed \
                (-unread is +seen). Every file of each matching message is renamed (Maildir :2, letters); \
                the next mo-sync stores the flags on the server.

                Example: mo-index flag -unread -- 'folder:INBOX date:..1w'
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("+WORD/-WORD changes, then the query.", valueName: "changes-and-query"))
        var words: [String] = []

        func run() throws {
            var add = MaildirFlags(), remove = MaildirFlags()
            var query: [String] = []
            for w in words where w != "--" {
                guard let sign = w.first, sign == "+" || sign == "-", let letter = Triage.letter(for: String(w.dropFirst())) else {
                    query.append(w)
                    continue
                }
                // "unread" is the absence of S.
                let inverted = w.dropFirst() == "unread"
                if (sign == "+") != inverted {
                    add.insert(letter); remove.remove(letter)
                } else {
                    remove.insert(letter); add.remove(letter)
                }
            }
            guard !add.isEmpty || !remove.isEmpty else {
                throw ValidationError("No change given: use +WORD or -WORD (unread, seen, flagged, replied, draft, trashed, passed).")
            }
            let (location, files) = try Triage.matchingFiles(global.merged(self.location), query: query)
            // The real changes only, so that undo puts back what was there.
            var steps: [Triage.FileStep] = []
            for path in files {
                guard let name = try? MaildirFilename(parsing: Triage.fileName(path)) else { continue }
                let flags = name.flags.union(add).subtracting(remove)
                if flags == name.flags { continue }
                let change = KeywordMove.Change(addFlags: flags.subtracting(name.flags), removeFlags: name.flags.subtracting(flags))
                steps.append(Triage.FileStep(path: path, to: Triage.folderDirectory(of: path), change: change))
            }
            let changed = try Triage.perform(steps, location: location) { step in
                let name = try MaildirFilename(parsing: Triage.fileName(step.path))
                let flags = name.flags.union(step.change.addFlags).subtracting(step.change.removeFlags)
                _ = try MaildirFolder(path: step.to).setFlags(path: step.path, flags: flags, moveToCur: true)
                return true
            }
            try Triage.reindex(location)
            print("mo-index: \(changed) file(s) changed; mo-sync will store the flags on the server")
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "move",
            abstract: "Move the messages a query matches to a folder: mo-index move QUERY FOLDER",
            discussion: """
                FOLDER is a mailbox name as on the server (Lists/dev), or @archive, @trash, @junk, @sent, \
                @drafts for the account's SPECIAL-USE folders (as the last mo-sync recorded them). Each file \
                moves within its own account, keeping its tags (keyword letters re-mapped to the folder's \
                dovecot-keywords; keywords with no free letter there go to its mo-keywords); the next mo-sync \
                moves the message on the server (UID MOVE). In Gmail mode the folders are INBOX, Sent, Drafts \
                and Archive, and @trash deletes the files (mo-sync moves the messages to Gmail's Trash); with \
                gmail-folders, @trash and @junk are the folders Trash and Spam.

                Example: mo-index move 'folder:INBOX from:newsletter' @archive
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Argument(help: ArgumentHelp("The query, then the folder (last argument).", valueName: "query-and-folder"))
        var words: [String] = []

        func run() throws {
            guard words.count >= 2, let target = words.last else {
                throw ValidationError("Give a query and a folder: mo-index move QUERY FOLDER")
            }
            let merged = global.merged(self.location)
            let config = try ConfigLoader.load(explicitPath: merged.config.config)
            let (location, files) = try Triage.matchingFiles(merged, query: Array(words.dropLast()))
            var moved = 0
            var steps: [Triage.FileStep] = []
            for path in files {
                guard let account = config.accounts.first(where: { $0.maildir.map { path.hasPrefix($0 + "/") } ?? false }),
                    let root = account.maildir
                else { continue }
                if target.lowercased() == "@trash", AccountFiles.isGmailMode(config.stateDirectory + "/" + account.name),
                    !account.sync.gmailFolders.contains(.trash)
                {
                    // Gmail mode without its Trash folder: a file deleted here is moved to Gmail's Trash by mo-sync.
                    try MaildirFolder(path: Triage.folderDirectory(of: path)).remove(path: path, sync: true)
                    moved += 1
                    continue
                }
                let mailbox = try Triage.mailbox(target, account: account, config: config)
                let destination = try FolderNameMapper.folderPath(root: root, mailbox: mailbox, layout: account.layout)
                if destination == Triage.folderDirectory(of: path) { continue }
                steps.append(Triage.FileStep(path: path, to: destination, change: KeywordMove.Change()))
            }
            // Keyword letters re-mapped to the target folder's table, so tags stay (KeywordMove).
            moved += try Triage.perform(steps, location: location) { try KeywordMove.move($0.path, to: $0.to) != nil }
            try Triage.reindex(location)
            print("mo-index: \(moved) file(s) moved to \(target); mo-sync will move them on the server")
        }
    }
}

enum Triage {
    /// One file's change in a triage command: its file, the folder it ends in (its own for a change in
    /// place), and the keyword and flag changes (only the real ones, so that undo puts back what was there).
    struct FileStep {
        var path: String
        var to: String
        var change: KeywordMove.Change
    }

    /// Writes the steps to the triage log (for `undo`), then makes them with `make` in order (true: made),
    /// then ends the command in the log; returns how many were made. A crash in between leaves the log
    /// saying what was meant, which `undo` reverts as far as it was done.
    static func perform(_ steps: [FileStep], location: IndexLocation, make: (FileStep) throws -> Bool) throws -> Int {
        let log = Triage.log(try location.forUpdate())
        let id = try log.begin(
            commandLine(),
            changes: steps.compactMap { step in
                (try? MaildirFilename(parsing: fileName(step.path))).map {
                    .file(from: folderDirectory(of: step.path), to: step.to, unique: $0.unique, change: step.change)
                }
            })
        CrashPoint.step("triage-logged")
        var made = 0
        for step in steps {
            if try make(step) { made += 1 }
            CrashPoint.step("triage-changed")
        }
        if let id { try log.end(id) }
        return made
    }

    static func letter(for word: String) -> MaildirFlags? {
        switch word {
        case "unread", "seen": .seen
        case "flagged": .flagged
        case "replied": .replied
        case "draft": .draft
        case "trashed": .trashed
        case "passed": .passed
        default: nil
        }
    }

    static func fileName(_ path: String) -> String { String(path.split(separator: "/").last ?? "") }

    /// `<folder>/cur/<file>` → `<folder>`.
    static func folderDirectory(of path: String) -> String { String(IndexedFile(path).folder) }

    static func matchingFiles(_ location: IndexLocation, query: [String]) throws -> (IndexLocation, [String]) {
        let (_, messages) = try matchingMessages(location, query: query)
        return (location, messages.flatMap { $0 })
    }

    /// The files of each matching message (absolute paths), oldest message first, from the index brought
    /// up to date first (a sync may have moved or renamed them since the last update), as `tag` does.
    static func matchingMessages(_ location: IndexLocation, query: [String]) throws -> (IndexLocation, [[String]]) {
        try reindex(location)
        let index = try MailIndex(path: try location.forReading().indexPath)
        let q = try index.query(query.joined(separator: " "))
        return (location, try index.messages(q, order: .oldest).map { $0.record.files.map(index.absolutePath) })
    }

    /// `@role` → the mailbox the server marks with that SPECIAL-USE attribute (recorded by mo-sync).
    static func mailbox(_ target: String, account: Account, config: Config) throws -> String {
        guard target.hasPrefix("@") else { return target }
        let role = target.dropFirst().lowercased()
        let directory = config.stateDirectory + "/" + account.name
        // Gmail mode (docs/gmail.md): the roles are its folders; a message leaves for Trash by deletion.
        if AccountFiles.isGmailMode(directory) {
            var views = ["archive": "Archive", "sent": "Sent", "drafts": "Drafts", "inbox": "INBOX", "all": "Archive"]
            for own in account.sync.gmailFolders { views[own == .trash ? "trash" : "junk"] = own.rawValue }  // gmail-folders
            if let view = views[String(role)] { return view }
            throw GenericError(
                .usage,
                "account \(account.name) is in Gmail mode: its folders are INBOX, Sent, Drafts and Archive (@trash deletes, which moves to "
                    + "Gmail's Trash; gmail-folders adds Trash and Spam); no @\(role)"
            )
        }
        if let mailbox = AccountFiles.readRoles(in: directory)[String(role)] { return mailbox }
        let path = directory + "/roles"
        throw GenericError(
            .config,
            "account \(account.name): no \\\(role.capitalized) folder is known yet (run mo-sync once; it records the server's SPECIAL-USE folders in \(path))"
        )
    }

    /// The index brought up to date after a change (the tag rules included, for mail it finds new).
    static func reindex(_ location: IndexLocation) throws {
        _ = try Tagging.update(location.forUpdate())
    }
}
