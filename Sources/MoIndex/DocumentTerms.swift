import MailMessage
import Maildir
import Threading
import XapianKit

/// Builds the terms, values and data of message documents (schema: `IndexSchema`).
enum DocumentTerms {
    /// Xapian refuses terms longer than this.
    static let maximumTermLength = 245

    /// Adds `term` if Xapian can store it; over-long values (a 300-byte List-Id) are dropped, not fatal.
    static func addBoolean(_ doc: XapianDocument, _ term: String) throws(XapianError) {
        if term.utf8.count <= maximumTermLength { try doc.addBooleanTerm(term) }
    }

    /// Content terms, values and data of a new document for `message`, whose first file is `file`.
    /// Runs on parser threads: `generator` and `doc` belong to the calling thread.
    static func fill(
        _ doc: XapianDocument, generator: XapianTermGenerator, message: ParsedMessage,
        record: MessageRecord, size: Int64, userHeaders: [UserHeader] = []
    ) throws(XapianError) {
        try generator.setDocument(doc)
        func text(_ s: String, _ prefix: String) throws(XapianError) {
            guard !s.isEmpty else { return }
            try generator.indexText(TextFolding.fold(s), prefix: prefix)
            try generator.increaseTermPosition()
        }
        try text(message.subject, IndexSchema.Prefix.subject)
        func addresses(_ list: [MailAddress], _ prefix: String) throws(XapianError) {
            for a in list { try text((a.name.map { $0 + " " } ?? "") + a.address, prefix) }
        }
        try addresses(message.from, IndexSchema.Prefix.from)
        try addresses(message.to, IndexSchema.Prefix.to)
        try addresses(message.cc, IndexSchema.Prefix.cc)
        let attachments = attachmentParts(message.root)
        for part in attachments { if let name = part.filename { try text(name, IndexSchema.Prefix.attachmentName) } }
        try body(message.bodyText, generator)
        for user in userHeaders {
            for field in message.headers.fields(named: user.header) { try text(field.text, user.prefix) }
        }

        try addBoolean(doc, IndexSchema.Prefix.id + record.id)
        if let list = message.listID { try addBoolean(doc, IndexSchema.Prefix.list + list.lowercased()) }
        for type in Set(message.mimeTypes) { try addBoolean(doc, IndexSchema.Prefix.mimeType + type) }
        if !attachments.isEmpty { try doc.addBooleanTerm(IndexSchema.Prefix.has + "attachment") }
        if message.headers.first(Placeholder.fieldName) != nil { try doc.addBooleanTerm(IndexSchema.Prefix.state + "placeholder") }
        try doc.setValue(XapianValue.sortable(Double(message.date ?? 0)), slot: IndexSchema.Slot.date)
        try doc.setValue(XapianValue.sortable(Double(size)), slot: IndexSchema.Slot.size)
        try setListingValues(doc, record: record)
    }

    /// Slots 3, 4, 5 and 7 (what result lists print); they depend only on the first file parsed, so they
    /// are set once. Slot 6 (flags) follows the files: `setFileTerms`.
    static func setListingValues(_ doc: XapianDocument, record: MessageRecord) throws(XapianError) {
        try doc.setValue(record.id, slot: IndexSchema.Slot.messageID)
        try doc.setValue(record.from, slot: IndexSchema.Slot.from)
        try doc.setValue(record.subject, slot: IndexSchema.Slot.subject)
        if record.date == nil { try doc.setValue("1", slot: IndexSchema.Slot.noDate) }
    }

    /// Indexes body text with positions throughout, so a phrase (or NEAR) matches anywhere in a long
    /// message, as in notmuch and mu. (Formats 4 and 5 kept positions for the first 4 KiB only: the position
    /// table was 24% smaller on the 32,500-message benchmark, and 4 of notmuch's 57 hits for a phrase on
    /// one corpus were missed; docs/index-schema.md.)
    static func body(_ s: String, _ generator: XapianTermGenerator) throws(XapianError) {
        guard !s.isEmpty else { return }
        try generator.indexText(TextFolding.fold(s), prefix: IndexSchema.Prefix.body)
    }

    /// Attachments as notmuch counts them (`_index_mime_part`): leaf parts with Content-Disposition
    /// attachment, not counting the signature of multipart/signed, which notmuch skips.
    static func attachmentParts(_ part: MIMEPart) -> [MIMEPart] {
        if part.contentType.type == "multipart" {
            let signed = part.contentType.subtype == "signed"
            return part.children.enumerated().flatMap { i, child in signed && i == 1 ? [] : attachmentParts(child) }
        }
        if part.contentType.type == "message", let inner = part.children.first { return attachmentParts(inner) }
        return part.disposition?.type == "attachment" ? [part] : []
    }

    /// The record stored as a new message's data.
    static func record(for message: ParsedMessage, file: String) -> MessageRecord {
        let input = ThreadInput(message)
        return MessageRecord(
            id: input.messageID, date: message.date, subject: oneLine(message.subject),
            from: oneLine(message.from.first?.description ?? message.headers["From"] ?? ""),
            recipients: (message.to + message.cc).map { (oneLine($0.name ?? ""), oneLine($0.address)) },
            inReplyTo: input.inReplyTo, references: input.references, strictInReplyTo: input.strictInReplyTo,
            files: [file])
    }

    static func oneLine(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 < 0x20 }) else { return s }
        return String(s.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
    }

    /// The prefixes of terms that depend on a message's files.
    static let filePrefixes = [
        IndexSchema.Prefix.file, IndexSchema.Prefix.folder, IndexSchema.Prefix.path,
        IndexSchema.Prefix.flag, IndexSchema.Prefix.tag, IndexSchema.Prefix.gmailThread
    ]

    /// Replaces the file-derived terms of `doc` (files, folders, directories, flags, tags) with those of
    /// `files`, the files of message `id`. `fresh`: the document has none yet (skips reading its term list).
    static func setFileTerms(
        _ doc: XapianDocument, id: String, files: [String], tags: TagTerms,
        fresh: Bool
    ) throws(XapianError) {
        try doc.setValue(XapianValue.sortable(Double(tags.revision)), slot: IndexSchema.Slot.lastmod)
        if !fresh {
            for prefix in filePrefixes {
                for term in try doc.terms(withPrefix: prefix) {
                    try doc.removeTerm(term)
                }
            }
        }
        var flags = MaildirFlags()
        var anySeen = false
        for path in files {
            let file = IndexedFile(path)
            try addBoolean(doc, IndexSchema.Prefix.file + path)
            try addBoolean(doc, IndexSchema.Prefix.folder + file.folder)
            try addBoolean(doc, IndexSchema.Prefix.path + file.directory)
            if let thread = MaildirFilename.field("G", of: file.name) { try addBoolean(doc, IndexSchema.Prefix.gmailThread + thread) }
            let f = file.flags
            flags.formUnion(f)
            if f.isSeen { anySeen = true }
        }
        for (letter, word) in IndexSchema.flagWords where flags.contains(MaildirFlags(letter: letter.asciiValue!)!) {
            try doc.addBooleanTerm(IndexSchema.Prefix.flag + word)
        }
        if !anySeen { try doc.addBooleanTerm(IndexSchema.Prefix.flag + "unread") }
        for tag in tags.tags(id: id, files: files) where !tag.isEmpty {
            try addBoolean(doc, IndexSchema.Prefix.tag + tag)
        }
        try doc.setValue(IndexSchema.flagsValue(flags, unread: !anySeen), slot: IndexSchema.Slot.flags)
    }

    /// Sets the thread id term and value.
    static func setThread(_ doc: XapianDocument, _ thread: String, previous: String?) throws(XapianError) {
        if let previous, previous != thread {
            try? doc.removeTerm(IndexSchema.Prefix.thread + previous)
        }
        try doc.addBooleanTerm(IndexSchema.Prefix.thread + thread)
        try doc.setValue(thread, slot: IndexSchema.Slot.thread)
    }
}
