import Foundation
import Testing

@testable import MoIndex

/// `AuthorName.of` trims as the Foundation calls it replaced did, scalar for scalar.
@Suite struct AuthorNameTests {
    static func foundation(_ from: String) -> String {
        if let lt = from.lastIndex(of: "<"), lt > from.startIndex {
            let name = from[..<lt].trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { return name.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        return from.trimmingCharacters(in: CharacterSet(charactersIn: "<> "))
    }

    @Test(arguments: [
        "Alice Smith <a@x>", "\"Alice Smith\" <a@x>", "  \"Bob\"\t <b@x>", "<c@x>", "c@x", " <d@x> ", "", "<", "a<", "\"\" <e@x>",
        "Zoë\u{00A0}<z@x>", "\u{3000}名前\u{2003}<n@x>", "x\u{200B} <zw@x>", "\t\"Q\"\" <q@x>", "a <b> <c@x>", "Ünal, Zoë <u@x>",
        "é\u{301} <comb@x>", "\u{1680}\u{202F}a\u{205F} <o@x>", "\u{2028}b <ls@x>", "\u{FEFF}c <bom@x>", " \u{00A0}\"\u{00A0}\" <nb@x>"
    ])
    func trimsAsFoundationDid(from: String) {
        #expect(AuthorName.of(from) == Self.foundation(from))
    }
}
