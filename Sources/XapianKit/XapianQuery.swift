import CXapian

/// An immutable Xapian query: built from terms and operators, or parsed by `XapianQueryParser`.
///
/// Not thread-safe (Xapian shares query parts with non-atomic reference counts).
public final class XapianQuery: CustomStringConvertible {
    /// How subqueries combine.
    public enum Operator: Sendable {
        /// Documents matching all.
        case and
        /// Documents matching any.
        case or
        /// Documents matching the first and none of the others.
        case andNot
        /// Documents matching an odd number.
        case xor
        /// Documents matching the first; the others only add weight.
        case andMaybe
        /// Documents matching the first, filtered by the others, which add no weight.
        case filter
        /// Terms near each other (within as many positions as there are terms), in any order.
        case near
        /// Terms next to each other, in order.
        case phrase

        var raw: Int32 {
            switch self {
            case .and: Int32(MO_XAPIAN_OP_AND)
            case .or: Int32(MO_XAPIAN_OP_OR)
            case .andNot: Int32(MO_XAPIAN_OP_AND_NOT)
            case .xor: Int32(MO_XAPIAN_OP_XOR)
            case .andMaybe: Int32(MO_XAPIAN_OP_AND_MAYBE)
            case .filter: Int32(MO_XAPIAN_OP_FILTER)
            case .near: Int32(MO_XAPIAN_OP_NEAR)
            case .phrase: Int32(MO_XAPIAN_OP_PHRASE)
            }
        }
    }

    let raw: OpaquePointer

    init(raw: OpaquePointer) { self.raw = raw }

    deinit { mo_xapian_query_free(raw) }

    /// Documents that have `term`; `wqf` weights repeated query terms.
    public convenience init(term: some XapianBytes, wqf: UInt32 = 1) {
        self.init(
            raw: xapianMustCreate("query") { err in
                term.withXapianBytes { mo_xapian_query_new_term($0, $1, wqf, err) }
            })
    }

    /// `subqueries` combined with `op`; no subqueries matches nothing. Throws for combinations Xapian
    /// refuses (e.g. `.phrase` over non-term queries).
    public convenience init(_ op: Operator, _ subqueries: [XapianQuery]) throws(XapianError) {
        let raws: [OpaquePointer?] = subqueries.map(\.raw)
        let raw = try xapianCreate { err in
            raws.withUnsafeBufferPointer { mo_xapian_query_new_combine(op.raw, $0.baseAddress, $0.count, err) }
        }
        // The C side copied what it needs; the Swift queries only had to live through the call.
        withExtendedLifetime(subqueries) {}
        self.init(raw: raw)
    }

    /// Documents whose value in `slot` lies in `low ... high`, compared bytewise (so numbers must be
    /// `XapianValue.sortable(_:)` encoded).
    public convenience init(valueRangeIn slot: UInt32, from low: some XapianBytes, to high: some XapianBytes) {
        self.init(
            raw: xapianMustCreate("query") { err in
                low.withXapianBytes { l, ln in
                    high.withXapianBytes { h, hn in mo_xapian_query_new_value_range(slot, l, ln, h, hn, err) }
                }
            })
    }

    /// Every document.
    public static func matchAll() -> XapianQuery {
        XapianQuery(raw: xapianMustCreate("query") { mo_xapian_query_new_match_all($0) })
    }

    /// No document.
    public static func matchNothing() -> XapianQuery {
        XapianQuery(raw: xapianMustCreate("query") { mo_xapian_query_new_match_nothing($0) })
    }

    /// Xapian's rendering, e.g. `Query((Shello@1 AND world@2))`; for logs and tests.
    public var description: String {
        let bytes = (try? xapianBytesCall { mo_xapian_query_description(raw, $0, $1, $2) }) ?? []
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Turns a user's search string into a `XapianQuery`: words, "phrases", AND/OR/NOT, +/-, `field:value`,
/// wildcards and `a..b` ranges, depending on the flags and on what was registered.
///
/// Not thread-safe.
public final class XapianQueryParser {
    /// Syntax the parser accepts.
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// AND, OR, NOT, XOR and brackets.
        public static let boolean = Flags(rawValue: UInt32(MO_XAPIAN_QP_FLAG_BOOLEAN))
        /// "Quoted phrases" (documents need positions).
        public static let phrase = Flags(rawValue: UInt32(MO_XAPIAN_QP_FLAG_PHRASE))
        /// +required and -excluded words.
        public static let loveHate = Flags(rawValue: UInt32(MO_XAPIAN_QP_FLAG_LOVEHATE))
        /// and, or, not in lower case are operators too.
        public static let booleanAnyCase = Flags(rawValue: UInt32(MO_XAPIAN_QP_FLAG_BOOLEAN_ANY_CASE))
        /// A trailing `*` matches any ending (expanded when the query runs).
        public static let wildcard = Flags(rawValue: UInt32(MO_XAPIAN_QP_FLAG_WILDCARD))
        /// A query may be only `NOT x`.
        public static let pureNot = Flags(rawValue: UInt32(MO_XAPIAN_QP_FLAG_PURE_NOT))
        /// The last word may be incomplete (search as you type).
        public static let partial = Flags(rawValue: UInt32(MO_XAPIAN_QP_FLAG_PARTIAL))
        /// Each word is searched together with its synonyms in the database, as one term; with a stemmer, the
        /// synonyms of its stem when it has none of its own (`XapianStemSynonyms`).
        public static let autoSynonyms = Flags(rawValue: UInt32(MO_XAPIAN_QP_FLAG_AUTO_SYNONYMS))
        /// Xapian's default: boolean operators, phrases, +/-.
        public static let `default`: Flags = [.boolean, .phrase, .loveHate]
    }

    /// How the bounds of an `a..b` range compare with a value slot.
    public enum RangeKind: Sendable {
        /// Bytewise, with the slot's value as it is.
        case string
        /// As numbers; the slot holds `XapianValue.sortable(_:)` encodings.
        case number
        /// As dates (20240131, 2024-01-31, 31/01/2024, ...); the slot holds "YYYYMMDD". `preferMDY` reads
        /// 01/02/2024 as January 2nd; two-digit years fall in `epochYear ..< epochYear + 100`.
        case date(preferMDY: Bool = false, epochYear: Int32 = 1970)
    }

    /// Where a range's marker string (e.g. "date:") goes.
    public struct RangeFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// The marker is a suffix ("10..20kb"), not a prefix ("size:10..20").
        public static let suffix = RangeFlags(rawValue: UInt32(MO_XAPIAN_RANGE_SUFFIX))
        /// The marker may appear on both bounds ("size:10..size:20").
        public static let repeated = RangeFlags(rawValue: UInt32(MO_XAPIAN_RANGE_REPEATED))
    }

    private let raw: OpaquePointer

    /// A parser combining bare words with `defaultOperator`, stemming them like a `XapianTermGenerator` with
    /// the same `stemmingLanguage` (an unknown language throws).
    public init(defaultOperator: XapianQuery.Operator = .and, stemmingLanguage: String? = nil) throws(XapianError) {
        raw = xapianMustCreate("query parser") { mo_xapian_qp_new($0) }
        _ = try xapianCall { mo_xapian_qp_set_default_op(raw, defaultOperator.raw, $0) }
        if let stemmingLanguage {
            _ = try xapianCall { err in stemmingLanguage.withXapianBytes { mo_xapian_qp_set_stemmer(raw, $0, $1, err) } }
        }
    }

    deinit { mo_xapian_qp_free(raw) }

    /// Makes `field:words` search the words as terms with `prefix` (e.g. "subject" → "S").
    public func addPrefix(field: String, prefix: String) throws(XapianError) {
        _ = try xapianCall { err in
            field.withXapianBytes { f, fn in
                prefix.withXapianBytes { p, pn in mo_xapian_qp_add_prefix(raw, f, fn, p, pn, err) }
            }
        }
    }

    /// Makes `field:value` filter by the single term `prefix` + value, unsplit and case kept (e.g. "tag" →
    /// "K"). With `exclusive`, several values of the field are alternatives (ORed); otherwise all must match.
    public func addBooleanPrefix(field: String, prefix: String, exclusive: Bool = true) throws(XapianError) {
        _ = try xapianCall { err in
            field.withXapianBytes { f, fn in
                prefix.withXapianBytes { p, pn in
                    mo_xapian_qp_add_boolean_prefix(raw, f, fn, p, pn, exclusive ? 1 : 0, err)
                }
            }
        }
    }

    /// Makes `marker` + `a..b` (e.g. "date:20240101..20241231") a range on value `slot`. An empty marker
    /// takes any `a..b` no earlier range claimed. Ranges are tried in the order added.
    public func addRange(_ kind: RangeKind, slot: UInt32, marker: String = "", flags: RangeFlags = [])
        throws(XapianError)
    {
        var allFlags = flags.rawValue
        let kindRaw: Int32
        var epochYear: Int32 = 1970
        switch kind {
        case .string:
            kindRaw = Int32(MO_XAPIAN_RANGE_STRING)
        case .number:
            kindRaw = Int32(MO_XAPIAN_RANGE_NUMBER)
        case .date(let preferMDY, let epoch):
            kindRaw = Int32(MO_XAPIAN_RANGE_DATE)
            epochYear = epoch
            if preferMDY { allFlags |= UInt32(MO_XAPIAN_RANGE_PREFER_MDY) }
        }
        _ = try xapianCall { err in
            marker.withXapianBytes { mo_xapian_qp_add_range(raw, kindRaw, slot, $0, $1, allFlags, epochYear, err) }
        }
    }

    /// Parses `text`. Words without a field get `defaultPrefix`. `database` is lent to the parser for this
    /// call only, for features that consult one (Xapian 1.4 expands wildcards when the query runs, so they
    /// need none). A syntax error throws a `.usage` error; empty text gives a query that matches nothing.
    public func parse(
        _ text: String, flags: Flags = .default, defaultPrefix: String = "", database: XapianDatabase? = nil
    ) throws(XapianError) -> XapianQuery {
        let db = database?.handle.raw
        let query = try xapianCreate { err in
            text.withXapianBytes { t, tn in
                defaultPrefix.withXapianBytes { p, pn in mo_xapian_qp_parse(raw, db, t, tn, flags.rawValue, p, pn, err) }
            }
        }
        withExtendedLifetime(database) {}
        return XapianQuery(raw: query)
    }
}

/// The order of search results.
public enum XapianSort: Sendable, Equatable {
    /// Best match first.
    case relevance
    /// By the bytes of value `slot`, ascending unless `descending`; ties in document id order.
    case value(slot: UInt32, descending: Bool = false)
}

/// One search result.
public struct XapianMatch: Sendable, Equatable {
    public let documentID: XapianDocumentID
    /// The relevance weight (0 for purely boolean queries).
    public let weight: Double
    /// The position in the whole sorted result list, 0-based (the search's offset + index in the page).
    public let rank: Int
}

/// One page of search results, in order, with how many documents match in all.
public struct XapianMatchSet: Sendable, Equatable, RandomAccessCollection {
    public let matches: [XapianMatch]
    /// The number of matching documents: exact if the search checked at least as many documents as the
    /// database has, else Xapian's estimate within `lowerBound ... upperBound`.
    public let estimatedCount: Int
    public let lowerBound: Int
    public let upperBound: Int

    public var startIndex: Int { matches.startIndex }
    public var endIndex: Int { matches.endIndex }
    public subscript(position: Int) -> XapianMatch { matches[position] }

    /// The document ids of the page, in order.
    public var documentIDs: [XapianDocumentID] { matches.map(\.documentID) }
}
