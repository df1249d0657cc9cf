@testable import SyncRunner

/// `FlagTranslation.unstorableLetters`, one row per rule of its table (issue 17).
@Suite struct FlagTranslationTests {
    static let table = MaildirKeywords(parsing: Array("0 $Known\n1 project-x\n3 Other\n".utf8))

    @Test(
        arguments: [
            (nil, "", "PERMANENTFLAGS not sent: all flags permanent"),
            ("\\Seen \\*", "", "\\* allows new keywords"),
            ("\\Seen $known", "bd", "without \\*: a listed keyword (any case) is stored, the others are not"),
            ("\\Seen $Known project-x other", "", "every keyword of the table listed"),
            ("", "abd", "an empty list (a read-only mailbox): nothing is stored")
        ] as [(String?, String, String)])
    func unstorable(permanent: String?, letters: String, reason: String) {
        let flags = permanent.map { $0.split(separator: " ").compactMap { Flag(String($0)) } }
        #expect(FlagTranslation.unstorableLetters(Self.table, permanentFlags: flags) == MaildirFlags(letters: letters)!, "\(reason)")
    }
}

/// `KeywordFindings.items`, one row per rule of its table: what a folder's run found, and which previous
/// lines stay when a side was seen only in part.
@Suite struct KeywordFindingsTests {
    static let refused = UnsyncedKeyword.refusedByServer, full = UnsyncedKeyword.folderFull

    static func findings(local: String = "", whole: Bool = true, unmapped: Set<String> = []) -> KeywordFindings {
        KeywordFindings(
            mailbox: "INBOX", table: MaildirKeywords(parsing: Array("0 $Known\n1 project-x\n2 gone\n".utf8)),
            unstorable: MaildirFlags(letters: "bc")!, localLetters: MaildirFlags(letters: local)!,
            unmapped: unmapped, localSeenWhole: whole, remoteSeenWhole: whole)
    }

    @Test(
        arguments: [
            (findings(local: "Sab"), [], ["project-x " + refused], "a refused letter on a local file"),
            (findings(local: "Sa"), [], [], "only stored letters"),
            (findings(unmapped: ["k27"]), [], ["k27 " + full], "a server keyword with no letter"),
            (findings(), ["project-x " + refused, "k27 " + full], [], "seen whole: the previous lines go"),
            (
                findings(whole: false), ["project-x " + refused, "k27 " + full, "$Known " + refused, "gone " + full],
                ["k27 " + full, "project-x " + refused], "seen in part: lines whose cause holds stay"
            ),
            (findings(whole: false), ["x " + refused], [], "seen in part: a keyword no longer in the table goes")
        ] as [(KeywordFindings, [String], [String], String)])
    func items(found: KeywordFindings, previous: [String], expected: [String], reason: String) {
        func item(_ s: String) -> UnsyncedKeyword {
            let parts = s.split(separator: " ", maxSplits: 1)
            return UnsyncedKeyword(mailbox: "INBOX", keyword: String(parts[0]), reason: String(parts[1]))
        }
        let other = UnsyncedKeyword(mailbox: "Other", keyword: "project-x", reason: Self.refused)
        #expect(found.items(previous: previous.map(item) + [other]) == expected.map(item).sorted(), "\(reason)")
    }
}
