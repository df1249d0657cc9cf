import Testing
@testable import MailMessage

@Suite struct MessageIDTests {
    @Test(
        "notmuch's _notmuch_message_id_parse",
        arguments: [
            ("<a@b>", "a@b"),
            ("  (comment) <a@b> junk", "a@b"),
            ("junk text <a@b>", "a@b"),
            ("< a@b >", "a@b"),
            ("<a b@c>", "ab@c"),
            ("<00004ee7187c$0@        .>", "00004ee7187c$0@    ."),  // notmuch keeps half of a blank run
            ("<x@y", "x@y"),  // no closing '>'
            ("<(c) x@y>", "x@y")
        ])
    func parse(input: String, expected: String) {
        #expect(MessageID.fromHeader(input) == expected)
    }

    @Test func fallbacksAndRejects() {
        #expect(MessageID.fromHeader("PM200011:12:45 AM") == "PM200011:12:45 AM")  // no <>: whole header
        #expect(MessageID.fromHeader("") == nil)
        #expect(MessageID.fromHeader(nil) == nil)
        #expect(MessageID.parse(Array("<a>".utf8)).id == nil)  // notmuch's off-by-one rejects 1-byte ids
        #expect(MessageID.fromHeader("<a>") == "<a>")
        #expect(MessageID.parse(Array("<>".utf8)).id == nil)
    }

    @Test func referencesOrderSelfAndJunk() {
        let refs = "<r1@x> (c) <r2@x>\n\t<self@x> junk <r3@x>"
        #expect(MessageID.parseList(refs, excluding: "self@x") == ["r1@x", "r2@x", "r3@x"])
        #expect(MessageID.parseList("Your message of Tue <p@q> and <z@w>") == ["p@q", "z@w"])
        #expect(MessageID.parseList("no ids at all") == [])
    }

    @Test("notmuch's parent choice")
    func parent() {
        func msg(_ h: String) -> ParsedMessage {
            ParsedMessage.parse(Array("From: a@b\nMessage-ID: <m@x>\n\(h)\n\nbody".utf8))
        }
        // 1. strict In-Reply-To wins over References.
        #expect(msg("References: <a@x> <b@x>\nIn-Reply-To: <c@x>").parentID == "c@x")
        // 2. a messy In-Reply-To: last reference.
        #expect(msg("References: <a@x> <b@x>\nIn-Reply-To: <c@x> (Joe's message)").parentID == "b@x")
        // 3. no References: the last id of In-Reply-To.
        #expect(msg("In-Reply-To: <c@x> <d@x>").parentID == "d@x")
        #expect(msg("In-Reply-To: <c@x> <d@x>").threadLinks == ["c@x", "d@x"])
        #expect(msg("References: <m@x> <a@x>").references == ["a@x"])
    }

    @Test func compression() {
        let long = String(repeating: "x", count: 190) + "@y"
        #expect(MessageID.notmuchKey("a@b") == "a@b")
        #expect(MessageID.notmuchKey(long).hasPrefix("notmuch-sha1-"))
        #expect(MessageID.notmuchKey(long).count == 13 + 40)
    }

    @Test func sha1Vectors() {
        #expect(SHA1.hexDigest([UInt8]()) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(SHA1.hexDigest(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            SHA1.hexDigest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(SHA1.hexDigest([UInt8](repeating: 0x61, count: 1_000_000)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test("no Message-ID: synthetic id is notmuch's sha1 of the file, stable")
    func synthetic() {
        let bytes = Fixtures.bytes("mu-no-message-id.eml")
        let m = ParsedMessage.parse(bytes)
        #expect(m.messageID == nil)
        #expect(m.id == "notmuch-sha1-" + SHA1.hexDigest(bytes))
        #expect(m.id == ParsedMessage.parse(bytes).id)
        #expect(m.id == "notmuch-sha1-cd26d5f5cb112f17c29724e856f0792d1ffa0532")  // `sha1sum` of the file
    }
}
