import Testing
import MoCore

@Suite struct BoundedNameTests {
    private func bounded(_ s: String, _ limit: Int = 255) -> String {
        String(decoding: BoundedName.bounded(Array(s.utf8), limit: limit), as: UTF8.self)
    }

    @Test func shortNamesAreKept() {
        #expect(bounded(String(repeating: "x", count: 255)) == String(repeating: "x", count: 255))
        #expect(!BoundedName.isShortened(Array("50%25%2Foff".utf8)))
    }

    @Test func longNameBecomesPrefixMarkerAndHash() {
        // Pinned: a change would move folders and state files that were written before it.
        let name = String(repeating: "x", count: 300)
        #expect(bounded(name) == String(repeating: "x", count: 160) + "%%0d4e2ca9e9cbced7a7a5380eb29e1a37")
        #expect(BoundedName.isShortened(Array(bounded(name).utf8)))
        #expect(bounded(name) == bounded(name))
        #expect(bounded(name) != bounded(name + "y"))
        #expect(bounded(name).utf8.count == 194)
    }

    @Test func cutSplitsNeitherUTF8NorEscape() {
        // 159 ASCII bytes, then "ü" (2 bytes) across the cut at 160: the whole letter goes.
        let umlaut = bounded(String(repeating: "a", count: 159) + String(repeating: "ü", count: 100))
        #expect(umlaut.hasPrefix(String(repeating: "a", count: 159) + "%%"))
        // "%2F" across the cut: the escape goes whole.
        let escape = bounded(String(repeating: "a", count: 159) + String(repeating: "%2F", count: 40))
        #expect(escape.hasPrefix(String(repeating: "a", count: 159) + "%%"))
        let after = bounded(String(repeating: "a", count: 157) + String(repeating: "%2F", count: 40))
        #expect(after.hasPrefix(String(repeating: "a", count: 157) + "%2F%%"))
    }
}
