import MoIndex
import XapianKit

/// A thread as `notmuch search` summarises it (notmuch's thread.cc), from every message of the thread,
/// oldest first, and which of them the query matched:
///
/// - `newest`/`oldest`: the dates of the matched messages (a message without Date counts as 0);
/// - `subject`: the newest match's (the oldest's when sorted oldest first, or when that is empty; on
///   equal dates the first seen), one leading "Re: ", "Aw: ", "Vs: " or "Sv: " taken off; an empty one
///   never replaces another (the first message's stands until a match has one);
/// - `authors`: each name once, the matched messages' first in thread order, then the others after
///   "| " ("Alice, Bob| Carol");
/// - `tags`: every message's, sorted;
/// - `matchedIDs`/`otherIDs`: for the JSON `query` pair.
public struct NotmuchThread: Equatable {
    public var id: String
    public var matched = 0
    public var total = 0
    /// The files of all its messages (a message may have several): the text summary shows them when
    /// they are not `total`.
    public var files = 0
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
        /// A match that carries an excluded tag (`--exclude=flag`): it names the thread as a match does,
        /// but the matched count leaves it out, as notmuch's does.
        public var excluded = false
        public var files: Int
        public init(id: String, date: Int64, from: String, subject: String, tags: [String], matched: Bool, files: Int = 1) {
            self.files = files
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
        var matchedAny = false
        // notmuch's _thread_set_subject_from_message: an empty subject (once cleaned) never replaces one.
        func takeSubject(_ m: Member) {
            let c = Self.cleaned(m.subject)
            if !c.isEmpty { subject = c }
        }
        var first = true
        for m in members {
            if first { subject = m.subject }
            first = false
            total += 1
            files += m.files
            tagSet.formUnion(m.tags)
            let author = m.from.isEmpty ? "" : Self.cleanedAuthor(AuthorName.of(m.from), from: m.from)
            if !author.isEmpty, seenAll.insert(author).inserted { allAuthors.append(author) }
            guard m.matched else {
                otherIDs.append(m.id)
                continue
            }
            matchedIDs.append(m.id)
            if !matchedAny || m.date < oldest {
                oldest = m.date
                if oldestFirst { takeSubject(m) }
            }
            if !matchedAny || m.date > newest {
                newest = m.date
                if !oldestFirst || subject.isEmpty { takeSubject(m) }
            }
            if !m.excluded { matched += 1 }
            matchedAny = true
            if !author.isEmpty, seenMatched.insert(author).inserted { matchedAuthors.append(author) }
        }
        var text = matchedAuthors.joined(separator: ", ")
        var firstOther = true
        for a in allAuthors where !seenMatched.contains(a) {
            text += (firstOther ? "| " : ", ") + a
            firstOther = false
        }
        authors = text
        tags = Self.byteSorted(tagSet)
    }

    /// Sorted byte by byte (as notmuch's C sorts tags), not by Swift's Unicode order.
    public static func byteSorted(_ strings: Set<String>) -> [String] { strings.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }

    /// notmuch's `_thread_cleanup_author`: "Last, First" becomes "First Last" when "First.Last" is in the
    /// From field (case aside), as in "Bounine, Alexandre <alexandre.bounine@idt.com>"; else unchanged.
    static func cleanedAuthor(_ author: String, from: String) -> String {
        guard let comma = author.firstIndex(of: ","), author.index(after: comma) < author.endIndex else { return author }
        let last = author[..<comma]
        let first = author[author.index(after: comma)...].drop { $0 == " " }
        let candidate = first + " " + last
        return from.lowercased().contains(candidate.replacingOccurrences(of: " ", with: ".").lowercased()) ? String(candidate) : author
    }

    static func cleaned(_ subject: String) -> String {
        let head = subject.utf8.prefix(4)
        guard head.count == 4 else { return subject }
        let lower = String(decoding: head, as: UTF8.self).lowercased()
        return ["re: ", "aw: ", "vs: ", "sv: "].contains(lower) ? String(decoding: subject.utf8.dropFirst(4), as: UTF8.self) : subject
    }

    /// notmuch's `id:` query of several ids (each as `make_boolean_term` writes it); nil for none.
    public static func idQuery(_ ids: [String]) -> String? {
        guard !ids.isEmpty else { return nil }
        return ids.map { "id:" + NotmuchDump.booleanTerm($0) }.joined(separator: " ")
    }
}
