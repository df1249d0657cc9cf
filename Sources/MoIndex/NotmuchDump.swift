import Foundation
import MoCore

/// notmuch's tag dump, `batch-tag` format (what `notmuch dump` writes and `notmuch restore` reads), so a
/// notmuch user brings every tag over with `mo-index restore` and can take them back:
///
///     #notmuch-dump batch-tag:3 tags
///     +inbox +to%20do +unread -- id:plain@example.org
///     +work -- id:"odd""id)@example.org"
///
/// - A line is `+TAG`… then `--` then `id:MESSAGE-ID`. Lines starting with `#` and blank lines are
///   comments (notmuch writes its header and config/property lines there).
/// - Tags are hex-escaped as notmuch does: every byte outside `A-Za-z0-9+-_@=.,` as `%xx` (lowercase).
/// - The id is quoted as notmuch's `make_boolean_term` does (`booleanTerm`): in double quotes, each `"`
///   doubled, when it holds a space, a control or non-ASCII byte, `"`, `(` or `)`.
/// Reading is strict about the shape (one line names what is wrong) and tolerant of notmuch's variations
/// (`-tag` items are accepted and mean removal, as in `notmuch tag --batch`).
public enum NotmuchDump {
    public static let header = "#notmuch-dump batch-tag:3 tags"

    /// One line: tag changes for one message.
    public struct Line: Sendable, Equatable {
        public var add: [String]
        public var remove: [String]
        public var messageID: String
        public init(add: [String], remove: [String] = [], messageID: String) {
            self.add = add
            self.remove = remove
            self.messageID = messageID
        }
    }

    /// Why a line was not read.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    static func keptInTag(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "+-_@=.,".utf8.contains(b)
        }
    }

    /// The dump line for a message with `tags` (sorted, as notmuch writes them).
    public static func render(tags: [String], messageID: String) -> String {
        let items = tags.sorted().map { "+" + PercentEscape.escape($0, lowercase: true, where: { !keptInTag($0) }) }
        // notmuch writes " -- id:…" (a leading space) for a message without tags; so does this.
        return items.joined(separator: " ") + " -- id:" + booleanTerm(messageID)
    }

    /// A term after `id:` (or any boolean prefix) as notmuch's `make_boolean_term` writes it: in double
    /// quotes, each `"` doubled, when empty or holding a space or control byte, `"`, `(`, `)` or a byte
    /// above 0x7F; else as it is. The dump and the notmuch command line's `query` pairs both use it.
    public static func booleanTerm(_ term: String) -> String {
        let needsQuotes =
            term.isEmpty
            || term.utf8.contains {
                $0 <= 0x20 || $0 > 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "(") || $0 == UInt8(ascii: ")")
            }
        guard needsQuotes else { return term }
        return "\"" + term.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A configuration line (`#@ KEY VALUE`, both escaped as tags are), as notmuch dumps what its
    /// database keeps (`config set --database`, saved queries).
    public static func renderConfig(key: String, value: String) -> String {
        "#@ " + PercentEscape.escape(key, lowercase: true, where: { !keptInTag($0) }) + " "
            + PercentEscape.escape(value, lowercase: true, where: { !keptInTag($0) })
    }

    /// The key and value of a `#@ KEY VALUE` line; nil for any other line (or a malformed one).
    public static func parseConfig(_ line: Substring) -> (key: String, value: String)? {
        guard line.hasPrefix("#@ ") else { return nil }
        let words = line.dropFirst(3).split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        guard let key = words.first.flatMap({ PercentEscape.unescape($0) }), !key.isEmpty,
            let value = PercentEscape.unescape(words.count > 1 ? words[1] : "")
        else { return nil }
        return (key, value)
    }

    /// Reads one line; nil for a comment or a blank line.
    public static func parse(_ line: Substring) throws(ParseError) -> Line? {
        guard let (add, remove, query) = try parseDumpLine(line) else { return nil }
        guard query.hasPrefix("id:") else {
            throw ParseError(reason: "only id:MESSAGE-ID queries are restored, not '\(query)'")
        }
        var id = String(query.dropFirst(3))
        if id.hasPrefix("\"") {
            guard id.count >= 2, id.hasSuffix("\"") else { throw ParseError(reason: "unterminated quoted id") }
            let inner = id.dropFirst().dropLast()
            // Inside quotes every `"` is doubled; a single one would end the term early.
            guard !inner.replacingOccurrences(of: "\"\"", with: "").contains("\"") else {
                throw ParseError(reason: "a quoted id with an undoubled '\"'")
            }
            id = String(inner).replacingOccurrences(of: "\"\"", with: "\"")
        }
        guard !id.isEmpty else { throw ParseError(reason: "empty message id") }
        return Line(add: add, remove: remove, messageID: id)
    }

    /// A dump line, strictly: `+TAG`/`-TAG` items, ` -- `, the query. A line without the separator is
    /// damage here (the local store's lines are all written so), where `notmuch tag --batch` would take the
    /// first other word as the query (`parseTagLine`).
    static func parseDumpLine(_ line: Substring) throws(ParseError) -> (add: [String], remove: [String], query: Substring)? {
        var text = line
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text = text.dropLast() }
        if text.isEmpty || text.hasPrefix("#") { return nil }
        guard
            let separator = text.range(of: " -- ")
                ?? (text.hasPrefix("-- ") ? text.startIndex..<text.index(text.startIndex, offsetBy: 3) : nil)
        else {
            throw ParseError(reason: "no ' -- ' between the tags and the message")
        }
        var add: [String] = [], remove: [String] = []
        for item in text[..<separator.lowerBound].split(separator: " ") {
            guard let sign = item.first, sign == "+" || sign == "-", item.count > 1 else {
                throw ParseError(reason: "'\(item)' is not +TAG or -TAG")
            }
            guard let tag = PercentEscape.unescape(item.dropFirst()) else {
                throw ParseError(reason: "'\(item)' has a bad %xx escape")
            }
            if sign == "+" { add.append(tag) } else { remove.append(tag) }
        }
        return (add, remove, text[separator.upperBound...])
    }

    /// One line of `notmuch tag --batch`, as notmuch's `parse_tag_line` reads it: words
    /// split at blanks; `+TAG`/`-TAG` items, %-escaped, up to an optional `--` or the first other word,
    /// and the rest is the query; nil for a comment or a blank line. Errors use notmuch's words. `generous`
    /// (restore) lets an empty tag or one starting with `-` through.
    public static func parseTagLine(_ line: Substring, generous: Bool = false) throws(ParseError) -> (
        add: [String], remove: [String], query: Substring
    )? {
        var text = line
        if text.last == "\r" { text = text.dropLast() }
        let content = text.drop { $0 == " " || $0 == "\t" }
        if content.isEmpty || content.hasPrefix("#") { return nil }
        var add: [String] = [], remove: [String] = []
        var rest = content
        while true {
            rest = rest.drop { $0 == " " }
            guard !rest.isEmpty else { throw ParseError(reason: "missing query string") }
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            let word = rest[..<end]
            if word == "--" {
                let query = rest[end...].drop { $0 == " " }
                guard !query.isEmpty else { throw ParseError(reason: "no query string after --") }
                return (add, remove, query)
            }
            guard let sign = word.first, sign == "+" || sign == "-" else { return (add, remove, rest) }
            guard end < rest.endIndex else { throw ParseError(reason: "no query string") }
            let raw = word.dropFirst()
            if !generous {
                if raw.isEmpty && sign == "+" { throw ParseError(reason: "empty tag forbidden") }
                if raw.hasPrefix("-") && sign == "+" { throw ParseError(reason: "tag starting with '-' forbidden") }
            }
            guard let tag = PercentEscape.unescape(raw) else { throw ParseError(reason: "hex decoding of tag \(raw) failed") }
            // Applied in order, as notmuch does: a tag's last change wins (`+a -a` takes it off).
            if sign == "+" {
                remove.removeAll { $0 == tag }
                add.append(tag)
            } else {
                add.removeAll { $0 == tag }
                remove.append(tag)
            }
            rest = rest[end...]
        }
    }
}
