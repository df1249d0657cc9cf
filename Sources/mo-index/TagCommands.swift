import ArgumentParser
import Maildir
import MoCLI
import MoConfig
import MoCore
import MoIndex
import SyncState
import XapianKit

// Tags are IMAP keywords (Maildir keyword letters through each folder's dovecot-keywords), so a tag set
// here reaches the server with the next mo-sync, as a flag change does (see TriageCommands.swift).

extension MoIndexCommand {
    struct Tag: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add and remove tags on the messages a query matches: mo-index tag +work -todo -- QUERY",
            discussion: """
                +TAG adds, -TAG removes; then "--" and the query (without "--", the first word that is not \
                +TAG or -TAG starts the query). Tags are stored as IMAP keywords in the message files \
                (Maildir keyword letters), so the next mo-sync stores them on the server; unread, flagged, \
                replied, passed and draft are the Maildir flags. A folder has 26 keyword letters; further \
                tags go to the folder's mo-keywords file, which mo-sync carries to the server the same way.

                Example: mo-index tag +work -unread -- from:boss@example.com
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Argument(
            parsing: .allUnrecognized, help: ArgumentHelp("+TAG/-TAG changes, then -- and the query.", valueName: "changes-and-query"))
        var words: [String] = []

        func run() throws {
            let split =
                words.firstIndex(of: "--")
                ?? words.firstIndex { !($0.hasPrefix("+") || $0.hasPrefix("-")) } ?? words.count
            let query = words[split...].drop { $0 == "--" }
            guard let (add, remove) = Tagging.changes(Array(words[..<split])) else {
                throw ValidationError("Changes are +TAG or -TAG, before \"--\" and the query.")
            }
            guard !add.isEmpty || !remove.isEmpty else { throw ValidationError("No change given: use +TAG or -TAG.") }
            guard !query.isEmpty else { throw ValidationError("No query given (use '*' for every message).") }
            let totals = try MoIndexCommand.retag(
                [.init(add: add, remove: remove, query: query.joined(separator: " "))], global.merged(self.location).forUpdate())
            if totals.vanished > 0 {
                CommandLineRunner.printError(
                    "mo-index: note: \(totals.vanished) file(s) were renamed or removed by another "
                        + "program meanwhile and were passed over; run the command again for them")
            }
            print(
                "mo-index: \(totals.messages) message(s) changed, \(totals.files) file(s) renamed; "
                    + "mo-sync will store the tags on the server")
        }
    }

    /// One line of tag changes: `+add -remove` (with `removeAll`, every other tag too) on a query's messages.
    struct TagChange {
        var add: [String]
        var remove: [String]
        var removeAll = false
        var query: String
        /// The query is notmuch's S-expression syntax (`notmuch tag --query=sexp`).
        var sexp = false
    }

    /// Makes tag changes as `mo-index tag` does, for it and for notmuch's `tag` (several lines with
    /// `--batch`): the index brought up to date (renames since the last update); then per line, what each
    /// message really gains and loses, judged on the index as the lines before left it, logged for undo
    /// before the line's first rename (one triage-log entry per line), and the files renamed
    /// (`Tagging.apply`: keywords and flag letters); the index updated again.
    static func retag(_ lines: [TagChange], _ resolved: IndexLocation.Resolved) throws -> Tagging.Totals {
        _ = try Tagging.update(resolved)
        var index = try MailIndex(path: resolved.indexPath)
        let log = Triage.log(resolved)
        var totals = Tagging.Totals()
        // The tagger (and its lock on local-tags) goes before the update, whose tag rules take their own.
        try {
            let tagger = try resolved.tagger()
            for (i, line) in lines.enumerated() {
                let q = try index.query(line.query, sexp: line.sexp)
                // With removeAll each message loses every tag it has but those added: all of them are removed.
                var removedAll = Set<String>()
                var changes: [TriageLog.Change] = []
                try index.forEachMessage(q, order: .oldest) { m in
                    let tags = Set(try index.tags(of: m))
                    let gains = line.add.filter { !tags.contains($0) }
                    let losses = line.removeAll ? tags.subtracting(line.add).sorted() : line.remove.filter { tags.contains($0) }
                    removedAll.formUnion(losses)
                    if !gains.isEmpty || !losses.isEmpty { changes.append(.tag(messageID: m.record.id, add: gains, remove: losses)) }
                }
                let remove = line.removeAll ? removedAll.sorted() : line.remove
                let id = try log.begin(Triage.commandLine(), changes: changes)
                CrashPoint.step("triage-logged")
                let t = try Tagging.apply(add: line.add, remove: remove, query: q, index: index, tagger: tagger)
                if let id { try log.end(id) }
                totals.messages += t.messages
                totals.files += t.files
                totals.extra += t.extra
                totals.vanished += t.vanished
                // The next line finds the files under their new names (a rename-only update).
                if i + 1 < lines.count && (t.files > 0 || t.extra > 0 || t.localChanged) {
                    _ = try resolved.updater().run()
                    index = try MailIndex(path: resolved.indexPath)
                }
            }
        }()
        _ = try Tagging.update(resolved)
        return totals
    }

    struct Tags: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List every tag with its number of messages, or (--unsynced) the tags that cannot reach the server.",
            discussion: """
                Text: TAG<TAB>MESSAGES per line, sorted by tag. --unsynced: TAG<TAB>WHERE: REASON per line, \
                for the tags an older version kept in the local-tags file and the \
                keywords mo-sync could not store on the server (recorded per account in the state directory).
                """)

        @OptionGroup var location: IndexLocation
        @OptionGroup(title: "Global") var global: GlobalLocation

        @Flag(help: "List the tags that cannot reach the server, with the reason.")
        var unsynced = false

        @Option(help: "text or json.")
        var format: OutputFormat = .text

        @Option(help: ArgumentHelp("JSON format version to print (docs/json.md); only 1 is supported.", valueName: "n"))
        var formatVersion: Int?

        func run() throws {
            try JSONFormat.check(formatVersion)
            let resolved = try global.merged(location).forReading()
            var out = LineWriter()
            defer { out.flush() }
            var json = format == .json ? JSONWriter() : nil
            json?.beginDocument()
            json?.key(unsynced ? "unsynced" : "tags")
            json?.beginArray(onePerLine: true)
            if unsynced {
                for item in try UnsyncedTags.all(resolved) {
                    if json != nil {
                        var fields: [(String, JSONValue)] = [("tag", .string(item.tag))]
                        if let account = item.account { fields.append(("account", .string(account))) }
                        if let mailbox = item.mailbox { fields.append(("mailbox", .string(mailbox))) }
                        if let keyword = item.keyword { fields.append(("keyword", .string(keyword))) }
                        if let messages = item.messages { fields.append(("messages", .int(messages))) }
                        fields.append(("reason", .string(item.reason)))
                        json?.write(.object(fields))
                    } else {
                        out.line(escapedForMessage(item.tag) + "\t" + escapedForMessage(item.place) + ": " + escapedForMessage(item.reason))
                    }
                }
            } else {
                for (tag, messages) in try MailIndex(path: resolved.indexPath).tagCounts() {
                    if json != nil {
                        json?.write(["tag": .string(tag), "messages": .int(messages)])
                    } else {
                        out.line(escapedForMessage(tag) + "\t\(messages)")
                    }
                }
            }
            json?.endArray()
            json?.endDocument()
        }
    }
}

/// A tag that cannot reach the server, and why.
struct UnsyncedTags {
    var tag: String
    var account: String?
    var mailbox: String?
    var keyword: String?
    var messages: Int?
    var reason: String

    var place: String {
        if let account, let mailbox { return account + "/" + mailbox }
        return LocalTagStore.fileName + (messages.map { " (\($0) message\($0 == 1 ? "" : "s"))" } ?? "")
    }

    /// The local store's tags (with their message counts), then each account's `unsynced-keywords`.
    static func all(_ location: IndexLocation.Resolved) throws -> [UnsyncedTags] {
        let local = try LocalTagStore.load(location.localTagsPath)
        var counts: [String: Int] = [:]
        for tags in local.tagsByID.values { for tag in tags { counts[tag, default: 0] += 1 } }
        var out = counts.keys.sorted().map {
            UnsyncedTags(
                tag: $0, messages: counts[$0]!,
                reason: "the folder's keyword table is full (26 keywords, the most a Maildir folder can); kept on this machine only")
        }
        guard let config = location.config else { return out }
        let vocabulary = location.vocabulary
        for account in config.accounts {
            out += AccountFiles.unsyncedKeywords(in: config.stateDirectory + "/" + account.name).map {
                UnsyncedTags(
                    tag: vocabulary.tag(forKeyword: $0.keyword), account: account.name, mailbox: $0.mailbox,
                    keyword: $0.keyword, reason: $0.reason)
            }
        }
        return out
    }
}
