import MoIndex
import XapianKit

/// A thread as `notmuch search` summarises it (notmuch's thread.cc), from every message of the thread,
/// oldest first, and which of them the query matched:
///
/// - `newest`/`oldest`: the dates of the matched messages (a message without Date counts as 0);
/// - `subject`: the newest match's (the oldest's when sorted oldest first; on equal dates the first
///   seen), one leading "Re: ", "Aw: ", "Vs: " or "Sv: " taken off;
/// - `authors`: each name once, the matched messages' first in thread order, then the others after
///   "| " ("Alice, Bob| Carol");
/// - `tags`: every message's, sorted;
/// - `matchedIDs`/`otherIDs`: for the JSON `query` pair.
public struct NotmuchThread: Equatable {
    public var id: String
    public var matched = 0
    public var total = 0
    public var newest: Int64 = 0
    public var oldest: Int64 = 0
    public var subject = ""
    public var authors = ""
    public var tags: [String] = []
    public var matchedIDs: [String] = []
    public var otherIDs: [String] = []

    public struct Member {
        public var id: String
        public var date: Int64
        public var from: String
        public var subject: String
        public var tags: [String]
        public var matched: Bool
        public init(id: String, date: Int64, from: String, subject: String, tags: [String], matched: Bool) {
            self.id = id
            self.date = date
            self.from = from
            self.subject = subject
            self.tags = tags
            self.matched = matched
        }
    }

    /// `members` oldest first, as notmuch builds a thread.
    public init(id: String, members: [Member], oldestFirst: Bool) {
        self.id = id
        var matchedAuthors: [String] = [], allAuthors: [String] = []
        var seenMatched = Set<String>(), seenAll = Set<String>()
        var tagSet = Set<String>()
        for m in members {
            total += 1
            tagSet.formUnion(m.tags)
            let author = m.from.isEmpty ? "" : AuthorName.of(m.from)
            if !author.isEmpty, seenAll.insert(author).inserted { allAuthors.append(author) }
            guard m.matched else {
                otherIDs.append(m.id)
                continue
            }
            matchedIDs.append(m.id)
            if matched == 0 || m.date < oldest {
                oldest = m.date
                if oldestFirst { subject = Self.cleaned(m.subject) }
            }
            if matched == 0 || m.date > newest {
                newest = m.date
                if !oldestFirst { subject = Self.cleaned(m.subject) }
            }
            matched += 1
            if !author.isEmpty, seenMatched.insert(author).inserted { matchedAuthors.append(author) }
        }
        var text = matchedAuthors.joined(separator: ", ")
        var firstOther = true
        for a in allAuthors where !seenMatched.contains(a) {
            text += (firstOther ? "| " : ", ") + a
            firstOther = false
        }
        authors = text
        tags = tagSet.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    static func cleaned(_ subject: String) -> String {
        let head = subject.utf8.prefix(4)
        guard head.count == 4 else { return subject }
        let lower = String(decoding: head, as: UTF8.self).lowercased()
        return ["re: ", "aw: ", "vs: ", "sv: "].contains(lower) ? String(decoding: subject.utf8.dropFirst(4), as: UTF8.self) : subject
    }

    /// notmuch's `id:` query of several ids, each quoted when it holds a space, a control byte, `)` or `"`
    /// (`make_boolean_term`).
    public static func idQuery(_ ids: [String]) -> String? {
        guard !ids.isEmpty else { return nil }
        return ids.map { "id:" + booleanTerm($0) }.joined(separator: " ")
    }

    public static func booleanTerm(_ term: String) -> String {
        guard term.utf8.contains(where: { $0 <= 32 || $0 == UInt8(ascii: ")") || $0 == UInt8(ascii: "\"") }) else { return term }
        return "\"" + term.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
