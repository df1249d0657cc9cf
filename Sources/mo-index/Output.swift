import Foundation
import MailMessage
import Maildir
import MoCore
import MoIndex

/// How results are printed (docs/mo-index.1).
enum OutputKind: String, CaseIterable {
    case summary, threads, messages, files, messageIDs = "message-ids", threadMembers = "thread-members"
}

enum OutputFormat: String, CaseIterable { case text, json }

/// One line per thread: what `mo-index query` prints by default. Built from a listing's rows; the
/// definitions (newest date, authors in result order, subject of the oldest match, flags of the matches)
/// are those of the per-message records the listing's value slots copy.
struct ThreadSummary {
    var thread: String
    var matched = 0
    var total = 0
    /// Newest Date of the matches; 0 if none has one.
    var newest: Int64 = 0
    var authors: [String] = []
    /// Of the first match with the smallest date (no date counts as 0).
    var subject = ""
    var flags: [String] = []

    fileprivate var oldest: Int64 = 0
    fileprivate var anyDate = false
    fileprivate var unread = false
    fileprivate var flagUnion = MaildirFlags()
    fileprivate var authorSet = Set<String>()

    init(thread: String) { self.thread = thread }

    /// Threads of `listing` (which has thread, date, from, subject and flags) in the order of their
    /// first match.
    static func all(_ listing: MessageListing, authors names: inout AuthorNames) -> [ThreadSummary] {
        var order: [ThreadSummary] = []
        var position = ThreadKeyTable(capacity: listing.count)
        for row in 0..<listing.count {
            let key = listing.threadKey(row)
            let p: Int
            if let known = position[key] {
                p = known
            } else {
                p = order.count
                position[key] = p
                order.append(ThreadSummary(thread: listing.thread(row)))
                order[p].total = listing.threadSize(row)
            }
            order[p].add(row, listing, &names)
        }
        for i in order.indices {
            order[i].flags = Output.flagWords(unread: order[i].unread, flags: order[i].flagUnion)
        }
        return order
    }

    private mutating func add(_ row: Int, _ listing: MessageListing, _ names: inout AuthorNames) {
        let date = listing.date(row)
        if let date {
            newest = anyDate ? max(newest, date) : date
            anyDate = true
        }
        let sortDate = date ?? 0
        if matched == 0 || sortDate < oldest {
            oldest = sortDate
            subject = listing.subject(row)
        }
        let author = names.author(listing.from(row))
        if authorSet.insert(author).inserted { authors.append(author) }
        if listing.isUnread(row) { unread = true }
        flagUnion.formUnion(listing.flags(row))
        matched += 1
    }
}

/// `Output.author` of each distinct From, computed once (a listing repeats the same senders).
struct AuthorNames {
    private var cache: [String: String] = [:]
    mutating func author(_ from: String) -> String {
        if let known = cache[from] { return known }
        let name = Output.author(from)
        cache[from] = name
        return name
    }
}

enum Output {
    static func escape(_ id: String) -> String { MessageID.listingEscaped(id) }

    /// "Alice Smith <a@x>" → "Alice Smith"; a bare address stays.
    static func author(_ from: String) -> String { AuthorName.of(from) }

    static func flagWords(_ messages: [IndexedMessage]) -> [String] {
        flagWords(
            unread: messages.contains(where: \.isUnread),
            flags: messages.reduce(into: Maildir.MaildirFlags()) { $0.formUnion($1.flags) })
    }

    /// "unread" if any message is unread, then the words of the other flags any has, "seen" left out.
    static func flagWords(unread: Bool, flags: Maildir.MaildirFlags) -> [String] {
        var words: [String] = []
        if unread { words.append("unread") }
        for (letter, word) in IndexSchema.flagWords where word != "seen" {
            if flags.contains(Maildir.MaildirFlags(letter: letter.asciiValue!)!) { words.append(word) }
        }
        return words
    }

    static func date(_ t: Int64?) -> String {
        guard let t else { return "----------" }
        var time = time_t(t)
        var tm = tm()
        localtime_r(&time, &tm)
        let year = Int(tm.tm_year) + 1900
        guard (0...9999).contains(year) else {
            return String(format: "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday)
        }
        // As "%04d-%02d-%02d", without Foundation's formatter (a listing prints tens of thousands).
        let digits: [UInt8] = [
            UInt8(48 + year / 1000), UInt8(48 + year / 100 % 10), UInt8(48 + year / 10 % 10), UInt8(48 + year % 10), 45,
            UInt8(48 + (tm.tm_mon + 1) / 10), UInt8(48 + (tm.tm_mon + 1) % 10), 45,
            UInt8(48 + tm.tm_mday / 10), UInt8(48 + tm.tm_mday % 10)
        ]
        return String(decoding: digits, as: UTF8.self)
    }

    /// `{"format_version":1,"results":[`: the top level of every mo-index JSON output (docs/json.md). An
    /// object, not the bare array of results, so the document can say its version.
    static func beginResults() -> JSONWriter {
        var w = JSONWriter()
        w.beginDocument()
        w.key("results")
        w.beginArray(onePerLine: true)
        return w
    }

    static func endResults(_ w: inout JSONWriter) {
        w.endArray()
        w.endDocument()
    }
}

/// Buffered stdout: results can be tens of thousands of lines.
struct LineWriter {
    private var buffer: [UInt8] = []

    mutating func line(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        buffer.append(UInt8(ascii: "\n"))
        if buffer.count > 1 << 16 { flush() }
    }

    mutating func flush() {
        writeStandardOutput(buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
