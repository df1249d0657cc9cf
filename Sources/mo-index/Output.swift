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

/// One line per thread: what `mo-index query` prints by default.
struct ThreadSummary {
    var thread: String
    var messages: [IndexedMessage]  // the matching ones, in result order
    var total: Int

    var newest: Int64 { messages.compactMap(\.record.date).max() ?? 0 }
    var authors: [String] {
        var seen = Set<String>()
        return messages.map { Output.author($0.record.from) }.filter { seen.insert($0).inserted }
    }
    var subject: String {
        messages.min { ($0.record.date ?? 0) < ($1.record.date ?? 0) }?.record.subject ?? ""
    }
    var flags: [String] { Output.flagWords(messages) }
}

enum Output {
    static func escape(_ id: String) -> String { MessageID.listingEscaped(id) }

    /// "Alice Smith <a@x>" → "Alice Smith"; a bare address stays.
    static func author(_ from: String) -> String {
        if let lt = from.lastIndex(of: "<"), lt > from.startIndex {
            let name = from[..<lt].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { return name.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        return from.trimmingCharacters(in: CharacterSet(charactersIn: "<> "))
    }

    static func flagWords(_ messages: [IndexedMessage]) -> [String] {
        var words: [String] = []
        if messages.contains(where: \.isUnread) { words.append("unread") }
        let flags = messages.reduce(into: Maildir.MaildirFlags()) { $0.formUnion($1.flags) }
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
        return String(format: "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday)
    }

    static func json(_ s: String) -> String { jsonQuoted(s) }

    static func jsonArray(_ items: [String]) -> String { "[" + items.map(json).joined(separator: ",") + "]" }
}

/// Buffered stdout: results can be tens of thousands of lines.
struct LineWriter {
    private var buffer: [UInt8] = []

    mutating func line(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        buffer.append(0x0A)
        if buffer.count > 1 << 16 { flush() }
    }

    mutating func flush() {
        var offset = 0
        while offset < buffer.count {
            let n = buffer.withUnsafeBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; break }
            offset += n
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
