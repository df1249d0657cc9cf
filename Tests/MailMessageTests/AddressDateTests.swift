import Testing
@testable import MailMessage

@Suite struct AddressTests {
    @Test(arguments: [
        ("Name <a@b.c>", [MailAddress(name: "Name", address: "a@b.c")]),
        ("a@b.c (Comment Here)", [MailAddress(name: "Comment Here", address: "a@b.c")]),
        (
            "\"Last, First \\\"Q\\\"\" <a@b>, c@d",
            [
                MailAddress(name: "Last, First \"Q\"", address: "a@b"),
                MailAddress(name: nil, address: "c@d")
            ]
        ),
        ("undisclosed-recipients:;", []),
        (
            "Team: a@b, Bob <c@d>; e@f",
            [
                MailAddress(name: nil, address: "a@b"), MailAddress(name: "Bob", address: "c@d"),
                MailAddress(name: nil, address: "e@f")
            ]
        ),
        ("=?utf-8?Q?Ren=C3=A9_Z?= <r@z>", [MailAddress(name: "René Z", address: "r@z")]),
        ("\"=?utf-8?B?w6k=?=, x\" <e@x>", [MailAddress(name: "é, x", address: "e@x")]),
        ("<@route1,@route2:a@b>", [MailAddress(name: nil, address: "a@b")]),
        ("John Q. Public <jqp@x . org>", [MailAddress(name: "John Q. Public", address: "jqp@x.org")]),
        ("Broken <a@b", [MailAddress(name: "Broken", address: "a@b")]),
        ("\"unterminated <a@b>", [MailAddress(name: nil, address: "unterminated <a@b>")]),
        (",,, a@b ,,", [MailAddress(name: nil, address: "a@b")]),
        // A quoted local part is one addr-spec, its quotes removed as the index stores it (a sender keeps
        // them: `keepingQuotes`, OutgoingMessageTests).
        (
            "\"quoted local\"@y, Name <\"a b\"@c>",
            [MailAddress(name: nil, address: "quoted local@y"), MailAddress(name: "Name", address: "a b@c")]
        ),
        ("a@b,\r\n\tc@d", [MailAddress(name: nil, address: "a@b"), MailAddress(name: nil, address: "c@d")]),
        ("", [])
    ])
    func parse(input: String, expected: [MailAddress]) {
        #expect(AddressParser.parse(input) == expected)
    }

    @Test func latin1Name() {
        let raw: [UInt8] = Array("Ren".utf8) + [0xE9] + Array(" <r@z>".utf8)
        #expect(AddressParser.parse(raw) == [MailAddress(name: "René", address: "r@z")])
    }
}

@Suite struct DateTests {
    // 2002-03-05 20:34:56 UTC = 1015360496
    @Test(arguments: [
        ("Tue, 5 Mar 2002 12:34:56 -0800 (PST)", Int64(1015360496)),
        ("Tue, 05 Mar 2002 20:34:56 +0000", 1015360496),
        ("5 Mar 2002 20:34:56 GMT", 1015360496),
        ("5 Mar 02 20:34:56 UT", 1015360496),
        ("Tue, 5 Mar 2002 15:34:56 EST", 1015360496),
        ("Tue, 5 Mar 2002 13:34:56 PDT", 1015360496),
        ("Tue, 5 Mar 2002 20:34:56 Z", 1015360496),
        ("Tue, 5 Mar 2002 20:34:56 A", 1015360496),  // military: read as +0000
        ("Tue, 5 Mar 2002 20:34 +0000", 1015360440),  // no seconds
        ("Tue Mar  5 20:34:56 2002", 1015360496),  // ctime
        ("2002-03-05T20:34:56Z", 1015360496),
        ("2002-03-05 21:34:56 +01:00", 1015360496),
        ("Tuesday, March 5, 2002 20:34:56 +0000 junk junk", 1015360496),
        ("5-Mar-2002 20:34:56 +0000", 1015360496),
        ("Thu, 01 Jan 1970 00:00:00 +0000", 0),
        ("1 Jan 99 00:00:00 +0000", 915148800),
        ("1 Jan 102 00:00:00 +0000", 1009843200),  // 3-digit year = 1900 + y
        // Malformed dates of real spam (spamassassin-2002), read as notmuch (GMime) reads them:
        ("Tue, 5 Mar 2002 01:34:56 -1900", 1015360496),  // a zone of 19 hours
        ("2002/03/05 Tue 20:34:56 GMT", 1015360496),  // slashes
        ("2002/03/05 Tue 14:34:56 CST", 1015360496)
    ])
    func parse(input: String, expected: Int64) {
        #expect(DateParser.parse(input) == expected)
    }

    @Test(arguments: [
        "", "garbage", "32 Foo 2002", "Tue, 5 2002", "Wed, 18 Sep 0102 04:15:01 +0600" /* the year 102, not 2002 */, "\u{0}\u{1}\u{2}",
        "99999999999999999999 Mar 5",
        String(repeating: "9", count: 10_000)
    ])
    func rejects(input: String) {
        #expect(DateParser.parse(input) == nil)
    }
}
