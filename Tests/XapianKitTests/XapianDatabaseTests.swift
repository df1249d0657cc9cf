import MoTestSupport
import MoCore
@testable import XapianKit
import Testing

/// Slots and prefixes used by the fixture, in the style the indexer will use.
private enum Slot {
    static let date: UInt32 = 0  // YYYYMMDD
    static let timestamp: UInt32 = 1  // XapianValue.sortable(seconds)
}

private struct Message {
    let id: String
    let subject: String
    let body: String
    let tags: [String]
    let date: String
    let timestamp: Double
}

private let messages = [
    Message(
        id: "a@x", subject: "Project meeting", body: "The quick brown fox jumps over the lazy dog",
        tags: ["inbox", "work"], date: "20240105", timestamp: 1_704_450_000),
    Message(
        id: "b@x", subject: "Hello world", body: "hello there, the world says hello",
        tags: ["inbox"], date: "20240120", timestamp: 1_705_750_000),
    Message(
        id: "c@x", subject: "Cheap pills", body: "brown quick offers for the world",
        tags: ["spam"], date: "20240301", timestamp: 1_709_290_000)
]

/// Builds a document the way the indexer will: text fields through a term generator, boolean tag and id
/// terms, values for sorting and ranges, and the id as data.
private func makeDocument(_ m: Message, generator: XapianTermGenerator) throws -> XapianDocument {
    let doc = XapianDocument()
    try generator.setDocument(doc)
    try generator.indexText(m.subject, prefix: "S")
    try generator.increaseTermPosition()
    try generator.indexText(m.subject)
    try generator.increaseTermPosition()
    try generator.indexText(m.body)
    for tag in m.tags { try doc.addBooleanTerm("K" + tag) }
    try doc.addBooleanTerm("Q" + m.id)
    try doc.setValue(m.date, slot: Slot.date)
    try doc.setValue(XapianValue.sortable(m.timestamp), slot: Slot.timestamp)
    try doc.setData(m.id)
    return doc
}

private func populate(_ path: String, stemming: String? = nil) throws {
    let db = try WritableXapianDatabase(path: path)
    let generator = try XapianTermGenerator(stemmingLanguage: stemming)
    try db.withTransaction {
        for m in messages {
            try db.replaceDocument(uniqueTerm: "Q" + m.id, with: makeDocument(m, generator: generator))
        }
        try db.setMetadata("version", "1")
    }
    try db.close()
}

private func makeParser(stemming: String? = nil) throws -> XapianQueryParser {
    let parser = try XapianQueryParser(stemmingLanguage: stemming)
    try parser.addPrefix(field: "subject", prefix: "S")
    try parser.addBooleanPrefix(field: "tag", prefix: "K")
    try parser.addBooleanPrefix(field: "id", prefix: "Q")
    try parser.addRange(.date(), slot: Slot.date, marker: "date:")
    try parser.addRange(.number, slot: Slot.timestamp, marker: "ts:")
    return parser
}

/// The data (message ids) of the matches, in result order.
private func ids(_ db: XapianDatabase, _ query: XapianQuery, sort: XapianSort = .relevance) throws -> [String] {
    try db.search(query, sort: sort, limit: 100, checkAtLeast: 100).map { try utf8(db.document($0.documentID).data()) }
}

private func search(
    _ db: XapianDatabase, _ parser: XapianQueryParser, _ text: String,
    flags: XapianQueryParser.Flags = .default
) throws -> Set<String> {
    Set(try ids(db, parser.parse(text, flags: flags, database: db)))
}

@Suite struct XapianDatabaseTests {
    @Test func writesAndReadsBack() throws {
        let dir = TempDirectory()
        try populate(dir.path)
        let db = try XapianDatabase(path: dir.path)
        #expect(try db.documentCount == 3)
        #expect(try db.lastDocumentID == 3)
        #expect(try utf8(db.metadata("version")) == "1")
        #expect(try db.metadata("unset").isEmpty)
        #expect(try db.termExists("Kinbox"))
        #expect(try !db.termExists("Knope"))
        #expect(try db.termFrequency("Kinbox") == 2)
        #expect(try db.termFrequency("brown") == 2)
        #expect(try db.allTerms(withPrefix: "K").map { utf8($0.term) } == ["Kinbox", "Kspam", "Kwork"])
        #expect(try db.allTerms(withPrefix: "K").map(\.frequency) == [2, 1, 1])

        let doc = try db.document(1)
        #expect(try doc.id == 1)
        #expect(try utf8(doc.data()) == "a@x")
        #expect(try utf8(doc.value(slot: Slot.date)) == "20240105")
        #expect(try XapianValue.number(fromSortable: doc.value(slot: Slot.timestamp)) == 1_704_450_000)
        #expect(try doc.value(slot: 9).isEmpty)
        #expect(try doc.terms(withPrefix: "K").map(utf8) == ["Kinbox", "Kwork"])
        #expect(try doc.terms(withPrefix: "S").map(utf8) == ["Smeeting", "Sproject"])
        #expect(try doc.terms().count > 10)
    }

    @Test func searchesWithTheQueryParser() throws {
        let dir = TempDirectory()
        try populate(dir.path)
        let db = try XapianDatabase(path: dir.path)
        let parser = try makeParser()

        // Free text, ANDed by default.
        #expect(try search(db, parser, "brown world") == ["c@x"])
        #expect(try search(db, parser, "brown OR hello") == ["a@x", "b@x", "c@x"])
        // A free-text field and boolean fields.
        #expect(try search(db, parser, "subject:hello") == ["b@x"])
        #expect(try search(db, parser, "subject:brown").isEmpty)
        #expect(try search(db, parser, "tag:inbox") == ["a@x", "b@x"])
        #expect(try search(db, parser, "world tag:inbox") == ["b@x"])
        #expect(try search(db, parser, "tag:inbox tag:spam") == ["a@x", "b@x", "c@x"])  // exclusive: ORed
        #expect(try search(db, parser, "world NOT tag:spam") == ["b@x"])
        #expect(try search(db, parser, "world -tag:spam") == ["b@x"])
        #expect(try search(db, parser, "id:b@x") == ["b@x"])
        // Boolean values keep their case.
        #expect(try search(db, parser, "tag:INBOX").isEmpty)
        // Phrases need positions and order.
        #expect(try search(db, parser, "\"quick brown fox\"") == ["a@x"])
        #expect(try search(db, parser, "\"brown quick\"") == ["c@x"])
        // A phrase does not match across two indexed fields (the position gap).
        #expect(try search(db, parser, "\"meeting the\"").isEmpty)
        // Wildcards, expanded against the database.
        #expect(try search(db, parser, "subject:meet*", flags: [.default, .wildcard]) == ["a@x"])
        #expect(try search(db, parser, "wor*", flags: [.default, .wildcard]) == ["b@x", "c@x"])
        // Xapian 1.4 expands wildcards when the query runs, so parsing needs no database.
        #expect(try Set(ids(db, parser.parse("bro*", flags: [.default, .wildcard]))) == ["a@x", "c@x"])
        // Ranges on value slots.
        #expect(try search(db, parser, "date:20240101..20240131") == ["a@x", "b@x"])
        #expect(try search(db, parser, "date:2024-01-10..2024-12-31") == ["b@x", "c@x"])
        #expect(try search(db, parser, "world date:20240201..") == ["c@x"])
        #expect(try search(db, parser, "ts:1705000000..1710000000") == ["b@x", "c@x"])
    }

    @Test func sortsAndPages() throws {
        let dir = TempDirectory()
        try populate(dir.path)
        let db = try XapianDatabase(path: dir.path)
        let all = XapianQuery.matchAll()
        #expect(try ids(db, all, sort: .value(slot: Slot.timestamp)) == ["a@x", "b@x", "c@x"])
        #expect(try ids(db, all, sort: .value(slot: Slot.date, descending: true)) == ["c@x", "b@x", "a@x"])

        let page = try db.search(all, sort: .value(slot: Slot.date), offset: 1, limit: 1, checkAtLeast: 3)
        #expect(page.count == 1)
        #expect(page.estimatedCount == 3 && page.lowerBound == 3 && page.upperBound == 3)
        #expect(page[0].rank == 1)
        #expect(try utf8(db.document(page[0].documentID).data()) == "b@x")

        // Relevance: "hello" three times beats none.
        let parser = try makeParser()
        let ranked = try db.search(parser.parse("hello OR brown"), limit: 10)
        #expect(try utf8(db.document(ranked[0].documentID).data()) == "b@x")
        #expect(ranked[0].weight > ranked[1].weight)
    }

    @Test func buildsQueriesWithoutTheParser() throws {
        let dir = TempDirectory()
        try populate(dir.path)
        let db = try XapianDatabase(path: dir.path)
        let inbox = XapianQuery(term: "Kinbox")
        let world = XapianQuery(term: "world")
        #expect(try Set(ids(db, XapianQuery(.and, [inbox, world]))) == ["b@x"])
        #expect(try Set(ids(db, XapianQuery(.andNot, [world, inbox]))) == ["c@x"])
        #expect(try Set(ids(db, XapianQuery(.phrase, [XapianQuery(term: "lazy"), XapianQuery(term: "dog")]))) == ["a@x"])
        #expect(try Set(ids(db, XapianQuery(valueRangeIn: Slot.date, from: "20240110", to: "20240401"))) == ["b@x", "c@x"])
        #expect(try ids(db, XapianQuery.matchNothing()).isEmpty)
        #expect(try ids(db, XapianQuery(.or, [])).isEmpty)
        #expect(try XapianQuery(.and, [inbox, world]).description == "Query((Kinbox AND world))")
    }

    @Test func stemsWhenAskedTo() throws {
        let dir = TempDirectory()
        try populate(dir.path, stemming: "english")
        let db = try XapianDatabase(path: dir.path)
        #expect(try search(db, makeParser(stemming: "english"), "jumping dogs") == ["a@x"])
        #expect(try search(db, makeParser(), "jumping dogs").isEmpty)
        #expect(throws: XapianError.self) { try XapianTermGenerator(stemmingLanguage: "klingon") }
    }

    @Test func stemsThroughTheSynonymTable() throws {
        let dir = TempDirectory()
        try populate(dir.path)  // no Z terms
        let writer = try WritableXapianDatabase(path: dir.path, mode: .open)
        let synonyms = try XapianStemSynonyms(stemmingLanguage: "english", prefixes: ["", "S"])
        try synonyms.addAllWords(of: writer)
        try synonyms.write(to: writer)
        try writer.close()
        let db = try XapianDatabase(path: dir.path)
        let flags: XapianQueryParser.Flags = [.boolean, .phrase, .autoSynonyms]
        #expect(try search(db, makeParser(stemming: "english"), "jumping dogs", flags: flags) == ["a@x"])
        #expect(try search(db, makeParser(stemming: "english"), "subject:meetings", flags: flags) == ["a@x"])
        #expect(try search(db, makeParser(stemming: "english"), "offer", flags: flags) == ["c@x"])
        #expect(try search(db, makeParser(stemming: "english"), "jumping dogs").isEmpty)  // without the flag
        #expect(try search(db, makeParser(stemming: "english"), "tag:inboxes", flags: flags).isEmpty)  // boolean: exact
        #expect(throws: XapianError.self) { try XapianStemSynonyms(stemmingLanguage: "klingon", prefixes: [""]) }
    }

    @Test func replacesAndDeletesByUniqueTerm() throws {
        let dir = TempDirectory()
        try populate(dir.path)
        let reader = try XapianDatabase(path: dir.path)
        let db = try WritableXapianDatabase(path: dir.path, mode: .open)

        let doc = XapianDocument()
        try doc.addBooleanTerm("Qb@x")
        try doc.addTerm("replaced")
        try doc.setData("b@x v2")
        #expect(try db.replaceDocument(uniqueTerm: "Qb@x", with: doc) == 2)
        #expect(try db.reader.documentCount == 3)
        #expect(try utf8(db.reader.document(2).data()) == "b@x v2")
        #expect(try !db.reader.termExists("hello"))
        // Found by its unique term before the commit too (the writer's view sees its own changes).
        #expect(try db.reader.document(uniqueTerm: "Qb@x")?.id == 2)
        #expect(try db.reader.document(uniqueTerm: "Qnobody") == nil)

        try db.deleteDocuments(uniqueTerm: "Qa@x")
        try db.deleteDocuments(uniqueTerm: "Qnobody")
        #expect(try db.reader.documentCount == 2)
        #expect(try db.reader.document(uniqueTerm: "Qa@x") == nil)
        #expect(throws: XapianError.self) { try db.reader.document(1) }

        // Not committed yet: an open reader still sees the old revision until it reopens.
        #expect(try reader.documentCount == 3)
        try db.commit()
        #expect(try reader.reopen())
        #expect(try reader.documentCount == 2)
        #expect(try reader.termExists("replaced"))
        #expect(try !reader.reopen())

        let missing = #expect(throws: XapianError.self) { try db.deleteDocument(99) }
        #expect(missing?.type == "DocNotFoundError")
    }

    @Test func cancelsATransactionThatThrows() throws {
        struct Oops: Error {}
        let dir = TempDirectory()
        try populate(dir.path)
        let db = try WritableXapianDatabase(path: dir.path)
        #expect(throws: Oops.self) {
            try db.withTransaction {
                try db.deleteDocuments(uniqueTerm: "Qa@x")
                try db.setMetadata("version", "2")
                throw Oops()
            }
        }
        #expect(try db.reader.documentCount == 3)
        #expect(try utf8(db.reader.metadata("version")) == "1")
    }

    @Test func binaryBytesRoundTrip() throws {
        let dir = TempDirectory()
        let term: [UInt8] = [0x58, 0x00, 0xFF, 0x80, 0x0A, 0x00]
        let blob: [UInt8] = [0x00, 0x01, 0xFE, 0xFF, 0x00]
        let db = try WritableXapianDatabase(path: dir.path)
        let doc = XapianDocument()
        try doc.addTerm(term, wdf: 3)
        try doc.addPosting([0x58, 0x01], position: 7)
        try doc.setData(blob)
        try doc.setValue(blob, slot: 5)
        try db.addDocument(doc)
        try db.setMetadata(term, blob)
        try db.commit()

        let reader = try XapianDatabase(path: dir.path)
        #expect(try reader.termExists(term))
        #expect(try !reader.termExists(Array(term.dropLast())))
        #expect(try reader.metadata(term) == blob)
        #expect(try reader.allTerms(withPrefix: [0x58]).map(\.term) == [term, [0x58, 0x01]])
        let found = try reader.search(XapianQuery(term: term), limit: 10)
        #expect(found.documentIDs == [1])
        let back = try reader.document(1)
        #expect(try back.data() == blob)
        #expect(try back.value(slot: 5) == blob)
        #expect(try back.terms(withPrefix: [0x58, 0x00]) == [term])
    }

    @Test func sortableNumbersKeepTheirOrder() {
        let numbers: [Double] = [-1e9, -2.5, 0, 1, 2.5, 1_700_000_000, 1e12]
        let encoded = numbers.map(XapianValue.sortable)
        #expect(encoded.map { XapianValue.number(fromSortable: $0) } == numbers)
        #expect(encoded == encoded.sorted { $0.lexicographicallyPrecedes($1) })
    }
}

@Suite struct XapianErrorTests {
    @Test func secondWriterIsBusy() throws {
        let dir = TempDirectory()
        let first = try WritableXapianDatabase(path: dir.path)
        let error = #expect(throws: XapianError.self) { try WritableXapianDatabase(path: dir.path) }
        #expect(error?.kind == .busy)
        #expect(error?.type == "DatabaseLockError")
        #expect(error?.description.hasPrefix("xapian: DatabaseLockError: ") == true)
        #expect(error?.message.contains("lock") == true)
        #expect(error?.message.contains(dir.path) == true)

        // Closing the first releases the lock; so does releasing the last reference.
        try first.close()
        var second: WritableXapianDatabase? = try WritableXapianDatabase(path: dir.path)
        #expect(second != nil)
        second = nil
        _ = try WritableXapianDatabase(path: dir.path)
    }

    @Test func malformedQueryThrows() throws {
        let parser = try XapianQueryParser()
        for text in ["foo NOT", "NOT foo", "AND"] {
            let error = #expect(throws: XapianError.self) { try parser.parse(text) }
            #expect(error?.type == "QueryParserError")
            #expect(error?.kind == .usage)
        }
        // An empty query parses to one that matches nothing.
        #expect(try parser.parse("").description == "Query()")
    }

    @Test func missingDatabaseFailsCleanly() throws {
        let dir = TempDirectory()
        let error = #expect(throws: XapianError.self) { try XapianDatabase(path: dir.path + "/nope") }
        #expect(error?.kind == .localIO)
        #expect(error?.type == "DatabaseNotFoundError")
        #expect(error?.message.contains(dir.path + "/nope") == true)
        // An existing directory that is not a database fails the same way.
        let empty = #expect(throws: XapianError.self) { try XapianDatabase(path: dir.path) }
        #expect(empty?.kind == .localIO)
        // A writer with .open does not create it.
        let notCreated = #expect(throws: XapianError.self) {
            try WritableXapianDatabase(path: dir.path + "/nope", mode: .open)
        }
        #expect(notCreated?.kind == .localIO)
        // .create refuses an existing database.
        _ = try WritableXapianDatabase(path: dir.path + "/db")
        let exists = #expect(throws: XapianError.self) { try WritableXapianDatabase(path: dir.path + "/db", mode: .create) }
        #expect(exists?.kind == .localIO)
    }

    @Test func invalidInputThrowsInsteadOfCrashing() throws {
        let dir = TempDirectory()
        let db = try WritableXapianDatabase(path: dir.path)
        let doc = XapianDocument()
        let empty = #expect(throws: XapianError.self) { try doc.addTerm("") }
        #expect(empty?.type == "InvalidArgumentError")
        #expect(empty?.kind == .software)
        #expect(throws: XapianError.self) { try doc.removeTerm("absent") }
        try doc.addTerm(String(repeating: "a", count: 300))
        #expect(throws: XapianError.self) { try db.addDocument(doc) }
        #expect(throws: XapianError.self) { try db.setMetadata("", "x") }
        #expect(throws: XapianError.self) { try db.reader.metadata("") }
        #expect(throws: XapianError.self) { try db.commitTransaction() }  // none started
    }

    @Test func closedDatabaseThrows() throws {
        let dir = TempDirectory()
        try populate(dir.path)
        let db = try XapianDatabase(path: dir.path)
        let doc = try db.document(1)
        try db.close()
        try db.close()  // harmless
        let error = #expect(throws: XapianError.self) { try doc.data() }
        #expect(error?.type == "DatabaseClosedError")
        #expect(throws: XapianError.self) { try db.document(3).data() }

        let writer = try WritableXapianDatabase(path: dir.path)
        try writer.close()
        #expect(throws: XapianError.self) { try writer.addDocument(XapianDocument()) }
    }
}

@Suite struct XapianErrorKindTests {
    @Test func classifiesByXapianType() {
        let expected: [String: ErrorKind] = [
            "DatabaseLockError": .busy,
            "DatabaseOpeningError": .localIO,
            "DatabaseNotFoundError": .localIO,
            "DatabaseCorruptError": .localIO,
            "DatabaseVersionError": .localIO,
            "DatabaseError": .localIO,
            "DatabaseModifiedError": .temporary,
            "QueryParserError": .usage,
            "InvalidArgumentError": .software,
            "DocNotFoundError": .software,
            "std::bad_alloc": .software
        ]
        for (type, kind) in expected {
            #expect(XapianError(type: type, message: "m").kind == kind, "\(type)")
        }
        #expect(
            "\(XapianError(type: "DatabaseLockError", message: "Unable to get write lock on /x: already locked"))"
                == "xapian: DatabaseLockError: Unable to get write lock on /x: already locked")
    }
}
