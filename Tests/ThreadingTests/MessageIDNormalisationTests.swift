import Testing
import Threading

@Suite struct MessageIDNormalisationTests {
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
        ("   ", []),
    ])
    func ids(raw: String, expected: [String]) {
        #expect(MessageIDNormalisation.ids(in: raw) == expected)
    }

    @Test(arguments: [
        ("<a@b>", "a@b"),
        (" <a@b> \t", "a@b"),
        ("<a@b> (comment)", nil),
        ("<a b@x>", nil),
        ("junk <a@b>", nil),
        ("<a@b", nil),
        ("<a@b> <c@d>", nil),
        ("<>", nil),
    ] as [(String, String?)])
    func strictID(raw: String, expected: String?) {
        #expect(MessageIDNormalisation.strictID(in: raw) == expected)
    }

    @Test(arguments: [
        ("<x@y>", "x@y"),
        ("  <x@y> (comment)", "x@y"),
        ("PM200011:12:45 AM", "PM200011:12:45 AM"),  // not RFC-compliant: taken whole
        ("<a>", "<a>"),
        ("", nil),
    ] as [(String, String?)])
    func ownMessageID(raw: String, expected: String?) {
        #expect(MessageIDNormalisation.messageID(fromHeader: raw) == expected)
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
            syntheticMessageID: SHA1.notmuchSyntheticMessageID(fileContents: Array("abc".utf8)))
        #expect(bare.messageID == "notmuch-sha1-a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test func longIDsAreStoredAsTheirSHA1() {
        let long = String(repeating: "x", count: 186) + "@a.b"  // 190 bytes
        let edge = String(repeating: "x", count: 185) + "@a.b"  // 189 bytes: kept
        #expect(MessageIDNormalisation.notmuchStoredID(edge) == edge)
        let stored = MessageIDNormalisation.notmuchStoredID(long)
        #expect(stored == "notmuch-sha1-" + SHA1.hexDigest(Array(long.utf8)))
        let reply = ThreadInput(messageIDHeader: "<r@x>", inReplyToHeader: "<\(long)>",
                                referencesHeader: "<\(long)>", syntheticMessageID: "")
        #expect(reply.references == [stored] && reply.inReplyTo == [stored] && reply.strictInReplyTo == stored)
    }

    @Test(arguments: [
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        (String(repeating: "a", count: 1000), "291e9a6c66994949b57ba5e650361e98fc36b1ba"),
    ])
    func sha1(text: String, hex: String) {
        #expect(SHA1.hexDigest(Array(text.utf8)) == hex)
    }
}
