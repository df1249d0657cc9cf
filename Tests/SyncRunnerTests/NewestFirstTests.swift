@testable import SyncRunner

/// Issues #26 and #29, "first the newest": a first sync of a folder larger than one FETCH chunk downloads
/// the chunk of the highest UIDs first, so recent mail is readable while the rest arrives.
@Suite struct NewestFirstTests {
    @Test func aLargeFirstSyncFetchesTheNewestChunkFirst() throws {
        let f = try SyncFixture(seed: false)
        let c = try f.imap()
        defer { c.logout() }
        let total = PreparedFolder.fetchChunk * 2 + 100
        for i in 0..<total {
            try c.append(to: MailboxName.inbox, flags: [], message: SyncFixture.message("newest-first-\(i)"))
        }
        let (s, lines) = try f.run(keeping: .trace)
        #expect(s["INBOX"]?.new == total)
        // The body FETCHes in the order sent: each names a lower range than the one before.
        let firsts: [UInt32] = lines.filter { $0.hasPrefix("C: ") && $0.contains("BODY.PEEK[]") }.compactMap { line in
            guard let set = line.split(separator: " ").dropFirst(4).first else { return nil }
            return UIDSet(String(set))?.normalized().ranges.first?.lowerBound
        }
        #expect(firsts.count == 3, "\(firsts) \(lines.filter { $0.hasPrefix("C: ") && $0.contains("FETCH") }.prefix(8))")
        #expect(firsts == firsts.sorted(by: >), "\(firsts)")
        try f.expectInSync("after a first sync, newest first")
    }
}
