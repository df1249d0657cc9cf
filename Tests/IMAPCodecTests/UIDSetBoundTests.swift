import IMAPCodec
import Testing

/// A hostile `VANISHED (EARLIER) 1:4000000000` names four billion UIDs; the ways the client reads a set from
/// the server must cost what it knows, not what the set names (issue #14). Were the set listed, these tests
/// would allocate 16 GB and fail; they finish at once.
@Suite struct UIDSetBoundTests {
    static func hostile() throws -> UIDSet {
        let events = try parse(bytes("* VANISHED (EARLIER) 1:4000000000,4000000005\r\n"))
        guard case .untagged(.vanished(earlier: true, uids: let set))? = events.first else {
            Issue.record("no VANISHED: \(events)")
            return UIDSet([])
        }
        return set
    }

    @Test func elementsAmongKnownFollowWhatIsKnown() throws {
        let set = try Self.hostile()
        #expect(set.count == 4_000_000_001)
        let known: Set<UInt32> = [3, 17, 4_000_000_001, 4_000_000_005, 4_100_000_000]
        #expect(Set(set.elements(among: known)) == [3, 17, 4_000_000_005])
        // Small sets are listed and filtered, the same answer.
        #expect(Set(UIDSet("2:5,9")!.elements(among: known)) == [3])
        var visited = 0
        let viaSequence = set.elements(among: known.sorted(), knownCount: known.count) {
            visited += 1; return known.contains($0)
        }
        #expect(Set(viaSequence) == [3, 17, 4_000_000_005])
        #expect(visited == 0, "a set larger than what is known is never listed")
    }

    @Test func clampedToAKnownUIDNext() throws {
        let set = try Self.hostile().clamped(to: 1...99)
        #expect(set.description == "1:99")
        #expect(set.count == 99)
        #expect(UIDSet("5:9,20")!.clamped(to: 10...30).description == "20")
        #expect(UIDSet("5:9")!.clamped(to: 10...30).isEmpty)
    }

    /// The UIDs a CONDSTORE-only listing takes as vanished: below UIDNEXT and not found by UID SEARCH.
    /// Ranges only, whatever the bound; against a model on small random sets.
    @Test func complementWithinABound() throws {
        #expect(UIDSet("2:5,9")!.complement(within: 1...10).description == "1,6:8,10")
        #expect(UIDSet("1:10")!.complement(within: 1...10).isEmpty)
        #expect(UIDSet([]).complement(within: 3...7).description == "3:7")
        #expect(UIDSet("9,2:4,20:30")!.complement(within: 3...25).description == "5:8,10:19")
        #expect(try Self.hostile().complement(within: 1...4_000_000_010).description == "4000000001:4000000004,4000000006:4000000010")
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let uids = (0..<Int.random(in: 0...12, using: &rng)).map { _ in UInt32.random(in: 1...40, using: &rng) }
            let lo = UInt32.random(in: 1...40, using: &rng), hi = UInt32.random(in: lo...45, using: &rng)
            let expected = (lo...hi).filter { !uids.contains($0) }
            #expect(UIDSet(uids: uids).complement(within: lo...hi) == UIDSet(uids: expected), "\(uids) \(lo)...\(hi)")
        }
    }

    @Test func foreignUIDsFoundWithoutListing() throws {
        let set = try Self.hostile()
        #expect(set.hasElement(notIn: [1, 2, 3]))
        #expect(!UIDSet("1:3")!.hasElement(notIn: [1, 2, 3]))
        #expect(UIDSet("1:3,5")!.hasElement(notIn: [1, 2, 3]))
    }
}
