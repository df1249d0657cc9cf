import MailMessage
import Testing
import Threading

/// Raw header values to thread inputs. The id parser itself is MailMessage's ``MessageID``
/// (tested in MailMessageTests); these cases pin the notmuch quirks threading depends on.
@Suite struct ThreadInputHeaderTests {
    static func input(references: String = "", inReplyTo: String? = nil, messageID: String? = "<me@x>") -> ThreadInput {
        ThreadInput(
            messageIDHeader: messageID, inReplyToHeader: inReplyTo, referencesHeader: references,
            syntheticMessageID: "synthetic")
    }

    /// References / In-Reply-To values and the ids notmuch takes from them.
    @Test(arguments: [
        ("<a@b>", ["a@b"]),
        ("  <a@b>  <c@d>", ["a@b", "c@d"]),
        ("<a@b><c@d>", ["a@b", "c@d"]),
        ("<a@b>\t\t<c@d> <a@b>", ["a@b", "c@d", "a@b"]),  // duplicates kept, order kept
        ("a@b c@d", []),  // ids without brackets are ignored
        ("a@b <c@d>", ["c@d"]),
        ("Your message of \"Mon, 12 Aug 2002 10:00\" <id@x>", ["id@x"]),
        ("<id@x> (John Doe's message of Mon, 12 Aug)", ["id@x"]),
        ("(comment <no@x>) <yes@x>", ["yes@x"]),  // a leading comment hides its brackets
        ("(nested (comment) \\) <no@x>) <yes@x>", ["yes@x"]),
        ("<(comment)id@x>", ["id@x"]),
        ("< spaced@x >", ["spaced@x"]),
        ("<a b@x>", ["ab@x"]),
        ("<a  b@x>", ["a b@x"]),  // notmuch removes every other blank of a run
        ("<a \t b@x>", ["a\tb@x"]),
        ("<a>", []),  // one-character ids are rejected (notmuch off-by-one)
        ("<>", []),
        ("<open@x", ["open@x"]),  // no closing bracket: to the end
        ("Joe <joe@example.com>", ["joe@example.com"]),  // addresses in In-Reply-To become links
        ("", []),
        ("   ", [])
    ])
    func ids(raw: String, expected: [String]) {
        #expect(Self.input(references: raw).references == expected)
        #expect(Self.input(inReplyTo: raw).inReplyTo == expected)
    }

    @Test(
        arguments: [
            ("<a@b>", "a@b"),
            (" <a@b> \t", "a@b"),
            ("<a@b> (comment)", nil),
            ("<a b@x>", nil),
            ("junk <a@b>", nil),
            ("<a@b", nil),
            ("<a@b> <c@d>", nil),
            ("<>", nil)
        ] as [(String, String?)])
    func strictID(raw: String, expected: String?) {
        #expect(Self.input(inReplyTo: raw).strictInReplyTo == expected)
    }

    @Test(
        arguments: [
            ("<x@y>", "x@y"),
            ("  <x@y> (comment)", "x@y"),
            ("PM200011:12:45 AM", "PM200011:12:45 AM"),  // not RFC-compliant: taken whole
            ("<a>", "<a>"),
            ("", "synthetic")
        ] as [(String, String)])
    func ownMessageID(raw: String, expected: String) {
        #expect(Self.input(messageID: raw).messageID == expected)
    }

    @Test func rawHeadersToInput() {
        let input = ThreadInput(
            messageIDHeader: " <me@x> ", inReplyToHeader: "Your mail of today <p@x>",
            referencesHeader: "<r1@x>\t<r2@x> r3@x", syntheticMessageID: "unused")
        #expect(input.messageID == "me@x")
        #expect(input.inReplyTo == ["p@x"])
        #expect(input.references == ["r1@x", "r2@x"])
        #expect(input.strictInReplyTo == nil)  // junk around the id: not "sane"

        let bare = ThreadInput(
            messageIDHeader: nil, inReplyToHeader: nil, referencesHeader: nil,
            syntheticMessageID: ParsedMessage.syntheticMessageID(for: Array("abc".utf8)))
        #expect(bare.messageID == "notmuch-sha1-a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    /// notmuch hashes long ids *with* their NUL terminator (`_notmuch_sha1_of_string` hashes
    /// `strlen + 1` bytes); the former Threading copy hashed without it and disagreed.
    @Test func longIDsAreStoredAsTheirSHA1() {
        let long = String(repeating: "x", count: 186) + "@a.b"  // 190 bytes
        let edge = String(repeating: "x", count: 185) + "@a.b"  // 189 bytes: kept
        #expect(MessageID.notmuchKey(edge) == edge)
        let stored = MessageID.notmuchKey(long)
        #expect(stored == "notmuch-sha1-" + SHA1.hexDigest(Array(long.utf8) + [0]))
        let reply = ThreadInput(
            messageIDHeader: "<r@x>", inReplyToHeader: "<\(long)>",
            referencesHeader: "<\(long)>", syntheticMessageID: "")
        #expect(reply.references == [stored] && reply.inReplyTo == [stored] && reply.strictInReplyTo == stored)
    }

    /// The input built from a parsed message equals the one built from its raw headers.
    @Test func parsedMessageInputMatchesHeaderInput() {
        let raw = "Message-ID: <m@x>\nIn-Reply-To: Joe <j@x> <p@x>\nReferences: <a@x> <p@x>\nSubject: s\n\nbody\n"
        let parsed = ParsedMessage.parse(Array(raw.utf8))
        let fromParse = ThreadInput(parsed)
        let fromHeaders = ThreadInput(
            messageIDHeader: "<m@x>", inReplyToHeader: "Joe <j@x> <p@x>",
            referencesHeader: "<a@x> <p@x>", date: parsed.date, syntheticMessageID: "")
        #expect(fromParse == fromHeaders)
    }
}
