#if canImport(Glibc)
    import Glibc
#endif
import XapianKit

/// notmuch's `field:/regex/` (and `field:"/regex/"`): a POSIX extended regular expression, as notmuch's
/// `regcomp` reads it, unanchored and case-sensitive. An exact field (tag, folder, path, id, thread) is
/// matched against its terms; `from` and `subject` against the header as the index keeps it (every
/// message's is read once).
extension QueryCompiler {
    func regex(_ spec: IndexField, _ pattern: String, _ position: Int) throws -> XapianQuery {
        var re = regex_t()
        let status = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB)
        guard status == 0 else {
            var buffer = [CChar](repeating: 0, count: 256)
            regerror(status, &re, &buffer, buffer.count)
            // notmuch's words ("Regexp error: " and regerror's).
            throw QueryError(
                position,
                "Regexp error: \(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) in \(quoted(pattern))"
            )
        }
        defer { regfree(&re) }
        func matches(_ s: String) -> Bool { regexec(&re, s, 0, nil, 0) == 0 }
        switch (spec.kind, spec.name) {
        case (.boolean, _):
            var terms: [XapianQuery] = []
            for prefix in spec.prefixes {
                let skip = prefix.utf8.count
                for (term, _) in try index.db.allTerms(withPrefix: prefix) {
                    let value = String(decoding: term.dropFirst(skip), as: UTF8.self)
                    if matches(value) { terms.append(XapianQuery(term: String(decoding: term, as: UTF8.self))) }
                }
            }
            // The tags notmuch adds as it indexes (attachment, signed, encrypted) are terms of their own.
            if spec.name == "tag" {
                for (tag, term) in IndexSchema.indexedTags where matches(tag) { terms.append(XapianQuery(term: term)) }
            }
            return try XapianQuery(.or, terms)
        case (.text, "from"), (.text, "subject"):
            let listing = try index.listing(.matchAll(), order: .relevance, fields: spec.name == "from" ? [.id, .from] : [.id, .subject])
            let ids = (0..<listing.count).filter { matches(spec.name == "from" ? listing.from($0) : listing.subject($0)) }.map(listing.id)
            return try XapianQuery(.or, ids.map { XapianQuery(term: IndexSchema.Prefix.id + $0) })
        default:
            throw QueryError(position, "\(spec.name): does not take regular expressions (notmuch's /…/)")
        }
    }
}
