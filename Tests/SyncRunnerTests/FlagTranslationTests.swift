import Testing
import IMAPCodec
import Maildir
@testable import SyncRunner

/// `FlagTranslation.unstorableLetters`, one row per rule of its table (issue 17).
@Suite struct FlagTranslationTests {
    static let table = MaildirKeywords(parsing: Array("0 $Known\n1 project-x\n3 Other\n".utf8))

    @Test(arguments: [
        (nil, "", "PERMANENTFLAGS not sent: all flags permanent"),
        ("\\Seen \\*", "", "\\* allows new keywords"),
        ("\\Seen $known", "bd", "without \\*: a listed keyword (any case) is stored, the others are not"),
        ("\\Seen $Known project-x other", "", "every keyword of the table listed"),
        ("", "abd", "an empty list (a read-only mailbox): nothing is stored"),
    ] as [(String?, String, String)])
    func unstorable(permanent: String?, letters: String, reason: String) {
        let flags = permanent.map { $0.split(separator: " ").compactMap { Flag(String($0)) } }
        #expect(FlagTranslation.unstorableLetters(Self.table, permanentFlags: flags) == MaildirFlags(letters: letters)!, "\(reason)")
    }
}
