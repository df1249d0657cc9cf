import Maildir
import XapianKit

/*
 The mo-index database schema (format 9). This comment and `IndexSchema` below are the one place it is
 defined; docs/index-schema.md explains it for users.

 Documents
   One document per *message* (per notmuch-style Message-ID, `MessageID.notmuchKey`): several files with the
   same Message-ID are one document listing every file. No other document types: ghosts (ids referenced but
   not present) are not stored, because each message's thread links are stored with it (document data) and
   the thread partition is recomputed from those links whenever messages come or go. That makes an
   incrementally updated index identical to a fresh one (notmuch instead keeps ghost documents and never
   splits a thread after a removal).

 Terms (see `IndexSchema.fields`; the query name of each is the `name` column)
   free text, positions kept (the whole body since format 6; formats 4 and 5: its first 4 KiB only),
   each word once (no stemmed copies: English stemming goes through the synonym table, below):
     ""        body text (text parts, HTML converted, embedded messages; attachments excluded)
     S         Subject
     XFROM     From: display names and addresses
     XTO       To: names and addresses
     XCC       Cc: names and addresses
     XATTACH   attachment file names
     XU<NAME>  a header a notmuch configuration names (`index.header.NAME`, `UserHeader`); searched unstemmed
   boolean (exact, no positions, no weight):
     Q         the Message-ID (unique per document)
     G         the thread id (16 hex digits, see Threading.ThreadID)
     XFOLDER:  each file's folder, relative to its root ("" for a root that is itself a Maildir)
     XPATH:    each file's directory relative to its root ("Lists/dev/cur")
     XFILE:    each file: directory + "/" + file name, relative; the incremental update diffs these
     XLIST:    List-Id, lower-cased
     XMIME:    the MIME type of every part, lower-cased
     XFLAG:    Maildir flags as words: seen, replied, flagged, draft, trashed, passed, and unread
               (= no file of the message has S); a flag is set if any file has it
     XHAS:     "attachment" when the message has an attachment
     XIS:      "placeholder" when the document's content is a placeholder's (`Maildir.Placeholder`: a message
               over mo-sync's max-size, its header only); an update that finds the file filled since (same
               name, `mo-sync fetch`) indexes it again
     XGMTHRID: Gmail's thread id (X-GM-THRID, decimal) of each file whose name carries it (`,G=`, written
               by mo-sync in Gmail mode); file-derived, so it follows the files
     K         each tag (TagTerms), exact and case-kept, no separator ("Kwork", "Kunread"): the union over the
               files of their tags (flag tags as TagVocabulary.flagTags, `unread` only when no file has S;
               keyword letters through the file's folder `dovecot-keywords`, named by TagVocabulary with
               the config's [keywords]), plus the message's entries in the local tag store (LocalTagStore,
               beside the index directory). Rewritten with the file terms, so a rename retags without a reparse

 Values
   0  date: Date header as seconds since 1970, Xapian sortable_serialise (absent: 0)
   1  size: bytes of the first file, sortable_serialise
   2  thread id (16 hex digits), for grouping results into threads without reading document data
   3  Message-ID (as `MessageRecord.id`)
   4  From as shown (`MessageRecord.from`)
   5  Subject (`MessageRecord.subject`)
   6  flags of the files: "u" if no file has S (unread), then the letters of `flagWords` any file has,
      in that order ("uRF"); rewritten with the file terms (renames included)
   7  "1" if the message has no Date header (slot 0 then holds 0), else unset
   8  lastmod: the index revision (`mo-index-revision`) of the update that last wrote the message's file
      terms (added it, or changed its files or tags), sortable_serialise; notmuch's `lastmod:`. A document
      written before slot 8 existed has none and counts as revision 0 (so no rebuild was needed)
   Slots 3-7 exist so that result lists (summary, messages, message-ids, threads) are read from value
   streams, one sequential pass per slot, instead of one document-data read per message (~15x slower).

 Document data: `MessageRecord` (fields separated by 0x1E, list items by 0x1F): id, date, subject, from,
 recipients, In-Reply-To ids, References ids, strict In-Reply-To, files. Enough to print results and to
 rebuild the thread index without reading any mail file.

 Synonyms (English stemming, `XapianStemSynonyms`)
   "Z" + prefix + stem -> every indexed word term (prefix + word) with that stem, for the free-text prefixes
   and the words Xapian's STEM_SOME would stem (those starting with a letter). The query parser (STEM_SOME,
   auto synonyms) searches a word as its Z term ORed with that list as one term: the documents that a
   stemmed "Z" term would match, while each document stores its words once (a third less to write).
   Entries of words whose last document went stay; they match nothing.

 Metadata
   mo-index-format  "9": a reader refuses other values than 4-9; `update` rebuilds 1-8 from the mail and
                    refuses others (a newer build's) with the "delete the directory" message. 4-8 could
                    keep a renamed file of a root's own folder (a Maildir++ INBOX, a --maildir tree that is
                    itself a Maildir) under its old name as well as its new one. 4-7 indexed
                    one alternative of a multipart/alternative (8: all, as notmuch). 6 had no K terms.
                    5 kept body positions for the first 4 KiB only. 4 stored
                    "Z" + prefix + stem terms in every document instead of the synonyms; the same query
                    parser reads it (its Z terms match; an index of 4 updated by this build has both).
                    1 had positions for all body text, no stub layout (IndexDirectory) and no slots 3-7;
                    2 (positions limit, stub layout) and 3 (slots 3-7) were each one half of 4 and never
                    released
   mo-index-roots   the roots indexed, one per line: name TAB layout TAB absolute path
   mo-index-dirs    directory state, one per line: mtime-nanoseconds TAB kind TAB root-relative path
                    (kind f = folder cur/ or new/, h = hierarchy level); a no-op update stats these only
   mo-index-keywords   the [keywords] table the K terms were written with (keyword TAB tag lines); another
                    table makes the next update rewrite every document's file terms (no mail read)
   mo-index-local-tags the local tag store as last applied; the messages whose entries differ from the file
                    now get their file terms rewritten
   mo-index-rules-pending  ids of new messages the tag rules have not seen yet (IndexUpdater+Tags)
   mo-index-revision   the revision of the last update that wrote anything (decimal; none: 0); each such
                    update writes the one after
   mo-index-uuid    a random id made by the first update (notmuch's database uuid, `count --lastmod`)
   mo-index-user-headers   the `UserHeader`s the XU terms were written with (NAME TAB Header lines); another
                    list makes the next update rebuild the index from the mail
*/

/// How a field's terms are made and searched.
public enum IndexFieldKind: Sendable, Equatable {
    /// Words from free text, with positions (phrases) and stems.
    case text
    /// One exact term per value (ids, folders, flags).
    case boolean
}

/// One row of the prefix table: a query name and the term prefix(es) it searches.
public struct IndexField: Sendable, Equatable {
    /// The name in queries (`from` in `from:alice`).
    public let name: String
    /// Term prefixes searched; several are ORed (`to:` is To and Cc, as in notmuch).
    public let prefixes: [String]
    public let kind: IndexFieldKind
    /// One line for docs and error messages.
    public let summary: String
}

/// The schema as data (see the block comment above).
public enum IndexSchema {
    /// The `mo-index-format` metadata value this build writes and reads.
    public static let formatVersion = "9"
    /// Formats this build reads (see the block comment).
    public static let readableFormats: Set<String> = ["4", "5", "6", "7", "8", formatVersion]
    /// Older formats: readers refuse them; `mo-index update` rebuilds them from the mail (derived data).
    public static let rebuiltFormats: Set<String> = ["1", "2", "3"]
    /// Formats still read, but rebuilt by the next `mo-index update`, which must not mix them with this
    /// one: 4 and 5 kept body positions for the first 4 KiB only (a phrase further on was not found); 4–7
    /// indexed one alternative of a multipart/alternative (a word only its HTML held was not found); 4–8
    /// could keep a renamed file of a root's own folder under its old name too (a file that is gone).
    public static let rebuiltOnUpdate: Set<String> = rebuiltFormats.union(["4", "5", "6", "7", "8"])
    /// The language words are stemmed in (queries; the synonym table).
    public static let stemmingLanguage = "english"

    public enum Metadata {
        public static let format = "mo-index-format"
        public static let roots = "mo-index-roots"
        public static let directories = "mo-index-dirs"
        public static let keywords = "mo-index-keywords"
        public static let localTags = "mo-index-local-tags"
        public static let userHeaders = "mo-index-user-headers"
        public static let revision = "mo-index-revision"
        public static let uuid = "mo-index-uuid"
    }

    public enum Slot {
        public static let date: UInt32 = 0
        public static let size: UInt32 = 1
        public static let thread: UInt32 = 2
        public static let messageID: UInt32 = 3
        public static let from: UInt32 = 4
        public static let subject: UInt32 = 5
        public static let flags: UInt32 = 6
        public static let noDate: UInt32 = 7
        public static let lastmod: UInt32 = 8
    }

    /// The flags value (slot 6) of a message whose files have `flags` in all, and of which none has S
    /// if `unread`.
    public static func flagsValue(_ flags: MaildirFlags, unread: Bool) -> String {
        var value = unread ? "u" : ""
        for (letter, _) in flagWords where flags.contains(MaildirFlags(letter: letter.asciiValue!)!) {
            value.append(letter)
        }
        return value
    }

    public enum Prefix {
        public static let body = ""
        public static let subject = "S"
        public static let from = "XFROM"
        public static let to = "XTO"
        public static let cc = "XCC"
        public static let attachmentName = "XATTACH"
        public static let id = "Q"
        public static let thread = "G"
        public static let folder = "XFOLDER:"
        public static let path = "XPATH:"
        public static let file = "XFILE:"
        public static let list = "XLIST:"
        public static let mimeType = "XMIME:"
        public static let flag = "XFLAG:"
        public static let has = "XHAS:"
        public static let state = "XIS:"
        public static let tag = "K"
        public static let gmailThread = "XGMTHRID:"
    }

    /// Prefixes that free words (no field) search: notmuch's unprefixed terms cover body, subject and
    /// addresses; here they are stored once, under their own prefixes, and ORed at query time.
    public static let freeTextPrefixes = [Prefix.body, Prefix.subject, Prefix.from, Prefix.to, Prefix.cc]
    /// Prefixes of word terms (free text; stemmed through the synonym table).
    public static let wordPrefixes = freeTextPrefixes + [Prefix.attachmentName]

    /// Fields whose words are matched as written, never by their stem, as notmuch 0.37 does: it answers
    /// `from:` and `subject:` through field processors whose query parser has no stemmer, so `subject:rpm`
    /// does not match "RPM's" and `from:run` not "Running" (checked against Debian's notmuch), while bare
    /// words and `to:` are stemmed.
    public static let unstemmedFields: Set<String> = ["from", "subject"]

    /// A collector of the stem synonyms of new words (one per writing thread).
    public static func stemSynonyms() throws(XapianError) -> XapianStemSynonyms {
        try XapianStemSynonyms(stemmingLanguage: stemmingLanguage, prefixes: wordPrefixes)
    }

    /// The query fields with term prefixes. `date:`, `size:` (values), `thread:{...}` and `path:...**`
    /// are handled by the query compiler on top of these.
    public static let fields: [IndexField] = [
        IndexField(name: "from", prefixes: [Prefix.from], kind: .text, summary: "From names and addresses"),
        IndexField(name: "to", prefixes: [Prefix.to, Prefix.cc], kind: .text, summary: "To and Cc (as notmuch)"),
        IndexField(name: "cc", prefixes: [Prefix.cc], kind: .text, summary: "Cc only"),
        IndexField(name: "subject", prefixes: [Prefix.subject], kind: .text, summary: "Subject words"),
        IndexField(name: "body", prefixes: [Prefix.body], kind: .text, summary: "body text"),
        IndexField(name: "attachment", prefixes: [Prefix.attachmentName], kind: .text, summary: "attachment file names"),
        IndexField(name: "id", prefixes: [Prefix.id], kind: .boolean, summary: "Message-ID, exact"),
        IndexField(name: "mid", prefixes: [Prefix.id], kind: .boolean, summary: "alias of id"),
        IndexField(name: "thread", prefixes: [Prefix.thread], kind: .boolean, summary: "thread id, or thread:{query}"),
        IndexField(name: "folder", prefixes: [Prefix.folder], kind: .boolean, summary: "folder, exact"),
        IndexField(name: "path", prefixes: [Prefix.path], kind: .boolean, summary: "directory; dir/** recursive"),
        IndexField(name: "list", prefixes: [Prefix.list], kind: .boolean, summary: "List-Id"),
        IndexField(name: "mimetype", prefixes: [Prefix.mimeType], kind: .boolean, summary: "MIME type of any part"),
        IndexField(name: "flag", prefixes: [Prefix.flag], kind: .boolean, summary: "unread seen flagged replied draft trashed passed"),
        IndexField(name: "has", prefixes: [Prefix.has], kind: .boolean, summary: "has:attachment"),
        IndexField(name: "tag", prefixes: [Prefix.tag], kind: .boolean, summary: "tag, exact and case-sensitive"),
        IndexField(name: "is", prefixes: [Prefix.state], kind: .boolean, summary: "is:placeholder; is:TAG is tag:TAG (as notmuch)"),
        IndexField(
            name: "gmail-thread", prefixes: [Prefix.gmailThread], kind: .boolean,
            summary: "Gmail's conversation (X-GM-THRID, decimal), or gmail-thread:{query}")
    ]

    /// Fields whose values are lower-cased before lookup (the others are exact).
    public static let caseFoldedBooleanFields: Set<String> = ["list", "mimetype", "flag", "has"]

    /// The tags notmuch adds as it indexes, and the term mo keeps for each instead (`tag:NAME` matches
    /// either the term or a tag of that name set by hand).
    public static let indexedTags: [(tag: String, term: String)] = [
        ("attachment", Prefix.has + "attachment"), ("signed", Prefix.mimeType + "multipart/signed"),
        ("encrypted", Prefix.mimeType + "multipart/encrypted")
    ]

    /// Maildir flag letters and their query words.
    public static let flagWords: [(letter: Character, word: String)] = [
        ("S", "seen"), ("R", "replied"), ("F", "flagged"), ("D", "draft"), ("T", "trashed"), ("P", "passed")
    ]

    public static func field(named name: String) -> IndexField? {
        fields.first { $0.name == name }
    }
}
