import Glibc
import MailMessage
import Maildir
import MoCLI
import MoCore
import MoIndex
import NotmuchCompat
import XapianKit

/// `notmuch address`, `dump`, `restore`, `new` and `insert`: notmuch's options and words over mo-index's
/// own work (the index update, `mo-index restore`, Maildir delivery).
extension NotmuchCommand {
    static func address(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args,
            shared.merging([
                "output": .keyword(["sender", "recipients", "count", "address"]), "exclude": .keyword(["true", "false"]),
                "deduplicate": .keyword(NotmuchAddress.Dedup.allCases.map(\.rawValue)),
                "sort": .keyword(["oldest-first", "newest-first"]), "format": .keyword(Sprinter.Format.allCases.map(\.rawValue)),
                "format-version": .int
            ]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        var a = NotmuchAddress()
        let outputs = Set(o.values["output"] ?? [])
        a.recipients = outputs.contains("recipients")
        a.senders = outputs.contains("sender") || !a.recipients
        a.count = outputs.contains("count")
        a.addressOnly = outputs.contains("address")
        a.dedup = o.last("deduplicate").flatMap(NotmuchAddress.Dedup.init(rawValue:)) ?? .mailbox
        if a.count && a.dedup == .no {
            writeError("--output=count is not applicable with --deduplicate=no\n")
            exit(1)
        }
        _ = try formatVersion(o)
        let text = o.rest.joined(separator: " ")
        if text.isEmpty {
            writeError("Error: notmuch search requires at least one search term.\n")  // notmuch's words, shared with search
            exit(1)
        }
        let index = try MailIndex(path: try location.forReading().indexPath)
        let format = o.last("format").flatMap(Sprinter.Format.init(rawValue:)) ?? .text
        var p = Sprinter(format, sink: writeStandardOutput)
        p.beginList()
        try index.forEachMessage(
            try query(index, text, o), order: o.last("sort") == "oldest-first" ? .oldest : .newest
        ) { m in
            // Only the header block is read: the addresses are the file's, as notmuch reads them.
            guard let path = m.record.files.first.map(index.absolutePath), case .success(let bytes) = readMessageFile(path) else { return }
            a.add(HeaderBlock.parse(bytes), to: &p)
        }
        a.finish(to: &p)
        p.end()
        p.flush()
    }

    /// `notmuch dump [--output=FILE] [--] [QUERY]`: notmuch's batch-tag format, every message's tags.
    static func dump(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args,
            shared.merging([
                "format": .keyword(["sup", "batch-tag"]), "include": .keyword(["config", "properties", "tags"]),
                "output": .string, "gzip": .bool
            ]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        if o.last("format") == "sup" { refuse("dump --format=sup") }
        let index = try MailIndex(path: try location.forReading().indexPath)
        // notmuch's header names what it includes (by default config and properties too, of which mo keeps
        // none in its index, so no line of them follows).
        let include = Set(o.values["include"] ?? [])
        let header =
            "#notmuch-dump batch-tag:3 "
            + (include.isEmpty
                ? "config,properties,tags" : ["config", "properties", "tags"].filter(include.contains).joined(separator: ","))
        var out = Array((header + "\n").utf8)
        if let setup, include.isEmpty || include.contains("config") {
            for key in setup.database.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                let value = setup.database.values(key)?.joined(separator: ";") ?? ""
                out += Array((NotmuchDump.renderConfig(key: key, value: value) + "\n").utf8)
            }
        }
        if include.isEmpty || include.contains("tags") {
            try dumpTags(index, try query(index, o.rest.joined(separator: " "), o), into: &out)
        }
        if o.flag("gzip") {
            do {
                out = try Gzip.compress(out)
            } catch {
                writeError("Error: cannot compress the dump: \(error)\n")
                exit(1)
            }
        }
        if let file = o.last("output") {
            if case .failure(let e) = replaceFileAtomically(file, out, mode: 0o644) {
                writeError("Error opening \(file) for writing: \(errnoDescription(e.code))\n")
                exit(1)
            }
        } else {
            writeStandardOutput(out)
        }
    }

    /// Every message's tags as notmuch has them, `attachment`, `signed` and `encrypted` included.
    static func dumpTags(_ index: MailIndex, _ query: XapianQuery, into out: inout [UInt8]) throws {
        let indexed = try IndexedTags(index)
        // In document order, as notmuch dumps (unsorted), so a dump of some messages lists them as the
        // whole dump does, and two dumps of one index are alike.
        var lines: [(UInt32, String)] = []
        try index.forEachMessage(query, order: .relevance) { m in
            let tags = NotmuchThread.byteSorted(Set(try indexed.tags(of: m.documentID, index)))
            lines.append((m.documentID, NotmuchDump.render(tags: tags, messageID: m.record.id) + "\n"))
        }
        for (_, line) in lines.sorted(by: { $0.0 < $1.0 }) { out += Array(line.utf8) }
    }

    /// `notmuch restore [--accumulate] [--input=FILE]`: `mo-index restore`'s work, silent as notmuch.
    static func restore(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args,
            shared.merging([
                "format": .keyword(["auto", "batch-tag", "sup"]), "include": .keyword(["config", "properties", "tags"]),
                "accumulate": .bool, "input": .string
            ]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        if o.last("format") == "sup" { refuse("restore --format=sup") }
        if let extra = o.rest.first {
            writeError("Unused positional parameter: \(extra)\n")
            exit(1)
        }
        var bytes = batchInput(o)
        do {
            bytes = try Gzip.uncompressedIfCompressed(bytes)
        } catch {
            writeError("Error reading (gzipped) input: \(error)\n")
            exit(1)
        }
        let include = Set(o.values["include"] ?? [])
        if var current = setup, include.isEmpty || include.contains("config") {
            // The database's own values (`#@` lines): each set to the dump's (the others stay), as notmuch's restore does.
            let pairs = bytes.split(separator: UInt8(ascii: "\n")).compactMap {
                NotmuchDump.parseConfig(Substring(decoding: $0, as: UTF8.self))
            }
            if !pairs.isEmpty { try setValues(pairs.map { ($0.key, [$0.value]) }, in: &current, database: true) }
        }
        let (_, _, bad) = try MoIndexCommand.Restore.restore(
            bytes, from: o.last("input") ?? "standard input", accumulate: o.flag("accumulate"), location.forUpdate())
        if bad > 0 { exit(1) }
    }

    /// A tag in `new.tags` starting with "-" is notmuch's error (exit 1), before anything is done.
    static func checkNewTags(_ values: [(key: String, value: [String], isList: Bool)]) {
        for tag in values.first(where: { $0.key == "new.tags" })?.value ?? [] where tag.hasPrefix("-") {
            writeError("Error: tag '\(tag)' in new.tags: tag starting with '-' forbidden\n")
            exit(1)
        }
    }

    /// `notmuch reindex QUERY`: the index brought up to date, and rebuilt from the mail when the
    /// `index.header.*` settings changed (they are all a notmuch configuration changes in mo's terms; a
    /// rebuild keeps every tag: they live in file names and the local tag store). Silent, as notmuch.
    static func reindex(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(args, shared.merging(["decrypt": .string]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        if o.rest.isEmpty {
            writeError("Error: notmuch reindex requires at least one search term.\n")
            exit(1)
        }
        let resolved = try location.forUpdate()
        let (s, _) = try Tagging.update(resolved)
        try tagNew(s.newMessageIDs, resolved)
    }

    /// `notmuch new`: the index update, and notmuch's closing line.
    static func new(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args, shared.merging(["quiet": .bool, "verbose": .bool, "debug": .bool, "decrypt": .string, "try-decrypt": .bool]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        let resolved = try location.forUpdate()
        checkNewTags(configValues(resolved))
        var (s, _) = try Tagging.update(resolved)
        // A rebuild (other index.header.* settings) adds every message again; only those the index did not
        // hold before are new mail (newMessageIDs).
        if s.rebuilt { (s.added, s.addedFiles, s.removed, s.renamed) = (s.newMessageIDs.count, 0, 0, 0) }
        try tagNew(s.newMessageIDs, resolved)
        for file in s.skippedFiles.sorted() { writeError("Note: Ignoring non-mail file: \(file)\n") }
        for link in s.brokenLinks { writeError("Error reading file \(link): No such file or directory\n") }
        if o.flag("quiet") { return }
        var out = ""
        let processed = s.added + s.addedFiles
        if processed > 0 {
            var end = timespec()
            clock_gettime(CLOCK_MONOTONIC, &end)
            let elapsed = Double(end.tv_sec - start.tv_sec) + Double(end.tv_nsec - start.tv_nsec) / 1e9
            out += "Processed \(processed) \(processed == 1 ? "file" : "total files") in \(Self.seconds(elapsed)).\n"
        }
        out += s.added > 0 ? "Added \(s.added) new \(s.added == 1 ? "message" : "messages") to the database." : "No new mail."
        if s.removed > 0 { out += " Removed \(s.removed) \(s.removed == 1 ? "message" : "messages")." }
        if s.renamed > 0 { out += " Detected \(s.renamed) file \(s.renamed == 1 ? "rename" : "renames")." }
        writeStandardOutput(Array((out + "\n").utf8))
    }

    /// `new.tags` on the messages `new` added (a notmuch configuration's; mo's has none). A message with a
    /// file in a Maildir keeps the `unread` its file names give.
    static func tagNew(_ ids: [String], _ resolved: IndexLocation.Resolved) throws {
        let tags = configValues(resolved).first { $0.key == "new.tags" }?.value.filter { !$0.isEmpty } ?? []
        guard !tags.isEmpty, !ids.isEmpty else { return }
        let index = try MailIndex(path: resolved.indexPath)
        var plain: [String] = [], maildir: [String] = []
        for id in ids {
            let files = try index.messages(XapianQuery(term: IndexSchema.Prefix.id + id), limit: 1).first?.record.files ?? []
            if files.contains(where: { IndexedFile($0).isInMaildir }) { maildir.append(id) } else { plain.append(id) }
        }
        var lines: [MoIndexCommand.TagChange] = []
        // A few thousand ids per query: one line (one undo entry, one write of the local tag store) per
        // batch, not per message; few batches even for a first `new` of 100,000 messages, each of which
        // rewrites the whole store. `unread` of a Maildir file is its name's (no S); the other flag tags
        // in new.tags set their flags, as notmuch does.
        for (group, add) in [(plain, tags), (maildir, tags.filter { $0 != "unread" })] where !add.isEmpty {
            for start in stride(from: 0, to: group.count, by: 8192) {
                let ids = Array(group[start..<min(group.count, start + 8192)])
                lines.append(.init(add: add, remove: [], query: NotmuchThread.idQuery(ids) ?? ""))
            }
        }
        if !lines.isEmpty { _ = try MoIndexCommand.retag(lines, resolved) }
    }

    /// notmuch's `notmuch_time_print_formatted_seconds`.
    static func seconds(_ t: Double) -> String {
        if t < 1 { return "almost no time" }
        let s = Int(t)
        if s >= 3600 { return "\(s / 3600)h \(s / 60 % 60)m" }
        if s >= 60 { return "\(s / 60)m \(s % 60)s" }
        return "\(s)s"
    }

    /// `notmuch insert [--folder=F] [--create-folder] [+TAG|-TAG …]`: the message on standard input
    /// delivered into the Maildir folder F under the mail root (tmp, then new, as any delivery), indexed,
    /// and, when it is a new message, given `new.tags` and the changes, as `notmuch tag` would (so
    /// `-unread`, or tags without `unread`, mark it seen). Under notmuch's root only that folder is indexed,
    /// as notmuch indexes only the delivered file. Under an account's Maildir the next mo-sync uploads it.
    static func insert(_ args: [String], _ location: LocationValues) throws {
        let parsed = NotmuchArguments.parse(
            args,
            shared.merging([
                "folder": .string, "create-folder": .bool, "keep": .bool, "no-hooks": .bool, "world-readable": .bool,
                "decrypt": .string
            ]) { $1 })
        guard case .success(let o) = parsed else { fail(parsed) }
        guard let (add, remove) = Tagging.changes(o.rest) else {
            writeError("Error: unexpected query string: \(o.rest.joined(separator: " "))\n")
            exit(1)
        }
        let resolved = try location.forUpdate()
        let values = configValues(resolved)
        checkNewTags(values)
        let root = values.first { $0.key == "database.mail_root" }?.value.first ?? ""
        var folderName = o.last("folder") ?? ""
        while folderName.hasSuffix("/") { folderName.removeLast() }
        if folderName.split(separator: "/").contains("..") || folderName.hasPrefix("/") {
            writeError("Error: invalid folder name: '\(folderName)'\n")
            exit(1)
        }
        let path = folderName.isEmpty ? root : root + "/" + folderName
        let folder = MaildirFolder(path: path)
        if o.flag("create-folder") || (folderName.isEmpty && folder.isDirectoryPresent) {
            try folder.create()
        } else if !folder.exists {
            writeError("Error: invalid folder name: '\(folderName)'\n")
            exit(1)
        }
        guard case .success(let bytes) = readWholeFile("/dev/stdin") else {
            writeError("Error: reading from standard input: failed\n")
            exit(1)
        }
        let message = ParsedMessage.parse(bytes)
        guard !bytes.isEmpty, message.looksLikeMail else {
            writeError("Error: delivery of non-mail file\n")
            exit(1)
        }
        let id = MessageID.notmuchKey(message.id)
        let known =
            try (try? MailIndex(path: resolved.indexPath)).map { try $0.count(XapianQuery(term: IndexSchema.Prefix.id + id)) > 0 } ?? false
        let delivered = try folder.deliver(bytes)
        // Under notmuch's root: this folder only (an all-files root's folders are its directories).
        let only = setup == nil ? nil : ["new", "cur"].map { folderName.isEmpty ? $0 : folderName + "/" + $0 }
        _ = try Tagging.update(resolved) { $0.onlyFolders = only }
        guard !known else { return }  // a copy of a message already here keeps its tags, as in notmuch
        let newTags = values.first { $0.key == "new.tags" }?.value.filter { !$0.isEmpty } ?? []
        var tags = Set(newTags).union(add)
        tags.subtract(remove)
        let tagger = try resolved.tagger()
        _ = try tagger.apply(add: tags.sorted(), remove: tags.contains("unread") ? [] : ["unread"], messageID: id, files: [delivered])
        try tagger.save()
        _ = try Tagging.update(resolved) { $0.onlyFolders = only }
    }
}
