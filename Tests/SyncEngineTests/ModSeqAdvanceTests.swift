import Testing
@testable import SyncEngine

/// `ModSeqAdvance`, row by row of its table: how far a saved mod-sequence may move past the SELECT's.
@Suite struct ModSeqAdvanceTests {
    @Test func noOwnValuesKeepTheBase() {
        #expect(ModSeqAdvance(base: 10).advanced == 10)
    }

    @Test func contiguousOwnValuesAdvance() {
        var a = ModSeqAdvance(base: 10)
        for v: UInt64 in [12, 11, 11, 13] { a.noteOwn(v) }
        #expect(a.advanced == 13)
    }

    @Test func aGapStopsTheAdvance() {
        var a = ModSeqAdvance(base: 10)
        for v: UInt64 in [11, 13, 14] { a.noteOwn(v) }  // 12 may be another session's change
        #expect(a.advanced == 11)
    }

    @Test func valuesAtOrBelowTheBaseAreIgnored() {
        var a = ModSeqAdvance(base: 10)
        a.noteOwn(9); a.noteOwn(10)
        #expect(a.advanced == 10)
    }

    @Test func aCompletionCountsOnlyWithoutForeignSigns() {
        var a = ModSeqAdvance(base: 10)
        a.noteOwn(11)
        a.noteCompletion(12, foreignSeen: true)
        #expect(a.advanced == 11)
        a.noteCompletion(12, foreignSeen: false)
        #expect(a.advanced == 12)
        a.noteCompletion(nil, foreignSeen: false)
        #expect(a.advanced == 12)
    }
}
