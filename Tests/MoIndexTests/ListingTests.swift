import Foundation
import Maildir
@testable import MoIndex
import Testing
import XapianKit

/// Listings read value slots 2-7 instead of document data: they must say exactly what the records say,
/// after renames and extra files too, and the thread sizes must equal the `G` term frequencies.
@Suite struct ListingTests {
    static func expectListingMatchesRecords(
        _ index: MailIndex, _ text: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let query = try index.query(text)
        for order in ResultOrder.allCases {
            let records = try index.messages(query, order: order)
            let listing = try index.listing(query, order: order, fields: Set(ListingField.allCases), threadSizes: true)
            #expect(listing.count == records.count, "\(text) \(order)", sourceLocation: sourceLocation)
            guard listing.count == records.count else { continue }
            for (i, m) in records.enumerated() {
                #expect(listing.documentIDs[i] == m.documentID, sourceLocation: sourceLocation)
                #expect(listing.id(i) == m.record.id, sourceLocation: sourceLocation)
                #expect(listing.thread(i) == m.thread, sourceLocation: sourceLocation)
                #expect(listing.date(i) == m.record.date, "\(m.record.id)", sourceLocation: sourceLocation)
                #expect(listing.from(i) == m.record.from, sourceLocation: sourceLocation)
                #expect(listing.subject(i) == m.record.subject, sourceLocation: sourceLocation)
                #expect(listing.flags(i) == m.flags, "\(m.record.files)", sourceLocation: sourceLocation)
                #expect(listing.isUnread(i) == m.isUnread, "\(m.record.files)", sourceLocation: sourceLocation)
                #expect(listing.threadSize(i) == (try index.threadSize(m.thread)), sourceLocation: sourceLocation)
            }
            // A page of a listing is the same page of the records.
            let page = try index.listing(query, order: order, fields: [.id], offset: 2, limit: 3)
            #expect(
                (0..<page.count).map(page.id) == records.dropFirst(2).prefix(3).map(\.record.id),
                sourceLocation: sourceLocation)
        }
    }

    @Test func listingEqualsRecordsAcrossRenamesAndExtraFiles() throws {
        let tree = try IndexedTree(folders: ["INBOX": IndexedTree.fixtureNames, "Archive": ["sa-plain-mbox.eml"]])
        // A message without a Date header (slot 7) and one dated 1970-01-01 (slot 0 alone cannot tell them apart).
        try "From: Nobody <n@x>\nSubject: undated\nMessage-ID: <undated@x>\n\nbody\n"
            .write(toFile: "\(tree.maildir)/INBOX/new/1.undated.host", atomically: false, encoding: .utf8)
        try "From: e@x\nSubject: epoch\nMessage-ID: <epoch@x>\nDate: Thu, 1 Jan 1970 00:00:00 +0000\n\nbody\n"
            .write(toFile: "\(tree.maildir)/INBOX/cur/2.epoch.host:2,RF", atomically: false, encoding: .utf8)
        try tree.update()
        let queries = ["*", "flag:unread", "flag:flagged", "from:a*", "thread:{subject:test}", "id:undated@x", "id:nonexistent"]
        for q in queries { try Self.expectListingMatchesRecords(try tree.index(), q) }
        #expect(try tree.index().listing(XapianQuery(term: "Qundated@x"), fields: [.date]).date(0) == nil)
        #expect(try tree.index().listing(XapianQuery(term: "Qepoch@x"), fields: [.date]).date(0) == 0)

        // Flag-only renames (seen → flagged unread, and the other copy of a two-file message) rewrite slot 6.
        let inbox = tree.files(in: "INBOX")
        let mbox = inbox.first { $0.contains("sa-plain-mbox") }!
        let other = inbox.first { $0.contains("sa-alternative") }!
        for name in [mbox, other] {
            let base = name[..<name.range(of: ":2,")!.lowerBound]
            try FileManager.default.moveItem(
                atPath: "\(tree.maildir)/INBOX/cur/\(name)",
                toPath: "\(tree.maildir)/INBOX/cur/\(base):2,FT")
        }
        tree.touchLater("\(tree.maildir)/INBOX/cur")
        let s = try tree.update()
        #expect(s.renamed == 2)
        for q in queries + ["flag:trashed"] { try Self.expectListingMatchesRecords(try tree.index(), q) }
        let index = try tree.index()
        let flagged = try index.listing(try index.query("flag:trashed"), fields: [.flags, .id])
        #expect(flagged.count == 2)
        for i in 0..<flagged.count { #expect(flagged.flags(i).isSuperset(of: [.flagged, .trashed])) }
        // The mbox message has a seen copy in Archive: not unread; the other one is.
        #expect((0..<flagged.count).filter(flagged.isUnread).count == 1)
    }

    /// Over 256 results the thread sizes come from one pass over the thread value stream.
    @Test func manyThreadsUseTheValueStream() throws {
        let tree = try IndexedTree(folders: ["INBOX": []])
        for n in 0..<300 {
            var text = "From: p\(n % 7)@x\nSubject: topic \(n / 3)\nMessage-ID: <m\(n)@x>\n"
            if n % 3 != 0 { text += "In-Reply-To: <m\(n - n % 3)@x>\n" }
            text += "Date: Mon, \(1 + n % 28) Jan 2024 10:00:00 +0000\n\nbody \(n)\n"
            try text.write(
                toFile: "\(tree.maildir)/INBOX/cur/\(n).m.host:2,\(n % 5 == 0 ? "S" : "")",
                atomically: false, encoding: .utf8)
        }
        try tree.update()
        let index = try tree.index()
        try Self.expectListingMatchesRecords(index, "*")
        try Self.expectListingMatchesRecords(index, "NOT flag:unread")
        let all = try index.listing(.matchAll(), fields: [.thread], threadSizes: true)
        #expect(all.count == 300 && (0..<all.count).allSatisfy { all.threadSize($0) == 3 })
    }

    @Test func anOlderFormatIsRebuiltByUpdateAndAnUnknownOneRefused() throws {
        let tree = try IndexedTree(folders: ["INBOX": ["sa-plain-mbox.eml"]])
        try tree.update()
        let ids = try tree.ids("*")
        func setFormat(_ format: String) throws {
            let db = try WritableXapianDatabase(path: tree.indexPath)
            try db.setMetadata(IndexSchema.Metadata.format, format)
            try db.close()
        }
        // A newer build's format: refused by readers and by update alike.
        let newer = String(Int(IndexSchema.formatVersion)! + 1)
        try setFormat(newer)
        for attempt in [{ _ = try MailIndex(path: tree.indexPath) }, { _ = try tree.update() }] as [() throws -> Void] {
            #expect {
                try attempt()
            } throws: { error in
                "\(error)".contains("has format \"\(newer)\"") && "\(error)".contains("delete the directory and run `mo-index update`")
            }
        }
        // An older one: readers say to update; update rebuilds it.
        try setFormat("3")
        #expect {
            _ = try MailIndex(path: tree.indexPath)
        } throws: { error in
            "\(error)".contains("has format \"3\"") && "\(error)".contains("run `mo-index update` to rebuild it")
        }
        let summary = try tree.update()
        #expect(summary.rebuiltFromFormat == "3" && summary.added == ids.count)
        #expect(try tree.ids("*") == ids)
        #expect(String(decoding: try tree.index().db.metadata(IndexSchema.Metadata.format), as: UTF8.self) == IndexSchema.formatVersion)
    }

    @Test func threadKeyTableGrowsAndKeepsNonHexKeys() {
        var table = ThreadKeyTable()
        for n in 0..<5000 { table[.hex(UInt64(n) &* 0x1_0000_0001)] = n }
        table[.other("not-hex")] = -1
        #expect((0..<5000).allSatisfy { table[.hex(UInt64($0) &* 0x1_0000_0001)] == $0 })
        #expect(table[.hex(7)] == nil && table[.other("not-hex")] == -1)
        let bytes = Array("00000000000000ff".utf8)
        #expect(bytes.withUnsafeBytes { ThreadKey($0) } == .hex(255))
        #expect(Array("00000000000000FF".utf8).withUnsafeBytes { ThreadKey($0) } == .other("00000000000000FF"))
    }
}
