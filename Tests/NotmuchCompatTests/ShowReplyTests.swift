import Glibc
import MailMessage
import Testing

@testable import NotmuchCompat

/// `notmuch show`'s thread tree and part layout, and `notmuch reply`'s recipients and header lines,
/// against notmuch 0.37's rules (lib/thread.cc, notmuch-show.c, notmuch-reply.c, GMime 3.2).
@Suite struct ShowReplyTests {
    typealias M = NotmuchThreadTree.Member

    static func render(_ nodes: [NotmuchThreadTree.Node]) -> String {
        nodes.map { $0.replies.isEmpty ? $0.id : "\($0.id)(\(render($0.replies)))" }.joined(separator: " ")
    }

    /// Members oldest first; the expected tree as `id(replies…)`.
    @Test(arguments: [
        // A plain chain: each reply under its In-Reply-To.
        (
            [
                M(id: "a", replyTo: nil, references: [], date: 1), M(id: "b", replyTo: "a", references: ["a"], date: 2),
                M(id: "c", replyTo: "b", references: ["a", "b"], date: 3)
            ], "a(b(c))"
        ),
        // Replies come back in date order, whatever their order of arrival under the parent.
        (
            [
                M(id: "a", replyTo: nil, references: [], date: 1), M(id: "c", replyTo: "a", references: ["a"], date: 3),
                M(id: "b", replyTo: "a", references: ["a"], date: 2)
            ], "a(b c)"
        ),
        // The root is missing: the last maybe-top-level message stays top level, the others hang under
        // the deepest reference they have in the thread.
        (
            [
                M(id: "b", replyTo: "root", references: ["root"], date: 2),
                M(id: "c", replyTo: "root", references: ["root", "b"], date: 3)
            ], "b(c)"
        ),
        // No reference in the thread: two top-level messages.
        (
            [M(id: "x", replyTo: "gone1", references: ["gone1"], date: 1), M(id: "y", replyTo: "gone2", references: ["gone2"], date: 2)],
            "x y"
        ),
        // The oldest replies to a later message: a cycle's oldest is top level.
        ([M(id: "p", replyTo: "q", references: ["q"], date: 1), M(id: "q", replyTo: "p", references: ["p"], date: 2)], "p(q)")
    ])
    func threadTree(_ members: [M], _ expected: String) {
        #expect(Self.render(NotmuchThreadTree.layout(members)) == expected)
    }

    static let user = NotmuchReply.User(name: "Test User", primary: "me@example.com", other: ["me@other.org"])

    static func headers(_ text: String) -> HeaderBlock { HeaderBlock.parse(Array((text + "\n\nbody\n").utf8)) }

    static func reply(_ header: String, all: Bool = true) -> NotmuchReply.Headers {
        var r = NotmuchReply(user: user)
        r.replyAll = all
        let m = ShownMessage(id: "orig@x", matched: true, files: [], date: 0, tags: [], from: "")
        return r.headers(m, headers(header), limited: false)
    }

    static func list(_ a: [MailAddress]) -> String { a.map(\.address).joined(separator: ",") }

    /// (headers, reply to all, To, Cc, From).
    @Test(arguments: [
        ("From: A <a@x>\nTo: me@example.com, b@x\nCc: c@x", true, "a@x,b@x", "c@x", "Test User <me@example.com>"),
        ("From: A <a@x>\nTo: me@example.com, b@x\nCc: c@x", false, "a@x", "", "Test User <me@example.com>"),
        // A Reply-To naming one address already in To (a list's munging) is passed over for From.
        ("From: A <a@x>\nReply-To: list@x\nTo: list@x", true, "a@x,list@x", "", "Test User <me@example.com>"),
        ("From: A <a@x>\nReply-To: private@x\nTo: list@x", false, "private@x", "", "Test User <me@example.com>"),
        // The user's own message: the reply goes back to its recipients; from the address it came from.
        ("From: Me <ME@other.org>\nTo: b@x", false, "b@x", "", "Test User <ME@other.org>"),
        // To the user only: the reply goes to the user.
        ("From: me@example.com\nTo: me@other.org", true, "me@example.com", "", "Test User <me@example.com>"),
        // No header names the user: Delivered-To does.
        ("From: a@x\nTo: list@x\nDelivered-To: me@other.org", false, "a@x", "", "Test User <me@other.org>"),
        // Nor that: a Received `for`.
        ("From: a@x\nTo: list@x\nReceived: from h by mx.other.org for <me@other.org>; Tue", false, "a@x", "", "Test User <me@other.org>")
    ])
    func recipients(_ header: String, _ all: Bool, _ to: String, _ cc: String, _ from: String) {
        let r = Self.reply(header, all: all)
        #expect(Self.list(r.to) == to)
        #expect(Self.list(r.cc) == cc)
        #expect(r.from == from)
    }

    @Test func subjectAndThreading() {
        let r = Self.reply("From: a@x\nSubject: RE: hello\nReferences: <p@x>")
        #expect(r.subject == "RE: hello")
        #expect(r.references == "<p@x> <orig@x>")
        #expect(r.inReplyTo == "<orig@x>")
        #expect(Self.reply("From: a@x\nSubject: hello").subject == "Re: hello")
        #expect(Self.reply("From: a@x").subject == nil)
    }

    /// GMime's folding of address lists (lines measured against real notmuch output on the notmuch-test corpus).
    @Test func addressFolding() {
        let to = [
            MailAddress(name: "Mark Brown", address: "broonie@opensource.wolfsonmicro.com"),
            MailAddress(name: "Joe Perches", address: "joe@perches.com")
        ]
        #expect(
            NotmuchReply.addressHeader("To", to)
                == "To: Mark Brown <broonie@opensource.wolfsonmicro.com>, Joe Perches\n\t<joe@perches.com>\n")
        let encoded = [
            MailAddress(name: "Antoine Beaupré", address: "anarcat@orangeseeds.org"),
            MailAddress(name: "David Bremner", address: "david@tethera.net"), MailAddress(name: nil, address: "notmuch@notmuchmail.org")
        ]
        #expect(
            NotmuchReply.addressHeader("To", encoded)
                == "To: Antoine =?iso-8859-1?q?Beaupr=E9?= <anarcat@orangeseeds.org>,\n\tDavid Bremner <david@tethera.net>, notmuch@notmuchmail.org\n"
        )
        #expect(
            NotmuchReply.folded("References", ["<a@b>", String(repeating: "x", count: 70)]) == "References: <a@b>\n\t"
                + String(repeating: "x", count: 70) + "\n")
    }

    @Test func quoting() {
        #expect(NotmuchReply.quoted("a\n\nb\n") == "> a\n>\n> b\n")
        #expect(NotmuchReply.quoted("no end") == "> no end")
    }

    /// Part numbers and layout: a multipart holding text, an attachment and an embedded message.
    @Test func partLayout() throws {
        let raw = """
            From: A <a@x>\r
            To: b@x\r
            Subject: s\r
            Date: Tue, 05 Jan 2010 15:43:56 -0500\r
            Content-Type: multipart/mixed; boundary=B\r
            \r
            --B\r
            Content-Type: text/plain\r
            \r
            hello\r
            --B\r
            Content-Type: application/pdf\r
            Content-Disposition: attachment; filename=f.pdf\r
            Content-Transfer-Encoding: base64\r
            \r
            AAAA\r
            --B\r
            Content-Type: message/rfc822\r
            \r
            From: C <c@x>\r
            Subject: inner\r
            \r
            inside\r
            --B--\r

            """
        let bytes = Array(raw.utf8)
        let body = ShownMessage.Body(bytes: bytes, root: MIMEParser.parse(bytes))
        var out: [UInt8] = []
        var p = Sprinter(.sexp) { out += $0 }
        ShowFormat(now: 0).part(body.root, 1, body, to: &p)
        p.flush()
        #expect(
            String(decoding: out, as: UTF8.self)
                == "(:id 1 :content-type \"multipart/mixed\" :content ((:id 2 :content-type \"text/plain\" :content \"hello\")"
                + " (:id 3 :content-type \"application/pdf\" :content-disposition \"attachment\" :filename \"f.pdf\""
                + " :content-transfer-encoding \"base64\" :content-length 4) (:id 4 :content-type \"message/rfc822\" :content"
                + " ((:headers (:Subject \"inner\" :From \"C <c@x>\" :Date \"Thu, 01 Jan 1970 00:00:00 +0000\") :body ((:id 5"
                + " :content-type \"text/plain\" :content \"inside\")))))))\n")
        #expect(body.part(5).map { String(decoding: body.raw($0), as: UTF8.self) } == "inside")
        #expect(ShownHeaders.date(body.root.headers) == "Tue, 05 Jan 2010 15:43:56 -0500")
    }
}

/// notmuch's configuration file, read and written as GLib's key file (notmuch's T030 cases).
@Suite struct NotmuchConfigTests {
    static let text = "# mine\n[database]\npath=/m\n\n[user]\nname=Me\nother_email=a@x;b@x\n"

    @Test func reads() {
        let c = NotmuchConfig(text: Self.text)
        #expect(c.values("database.path") == ["/m"])
        #expect(c.values("user.other_email") == ["a@x", "b@x"])
        #expect(c.values("new.tags") == nil)
        #expect(c.keys == ["database.path", "user.name", "user.other_email"])
        #expect(NotmuchConfig(text: "[new]\ntags=unread;inbox;\n").values("new.tags") == ["unread", "inbox"])
        #expect(NotmuchConfig(text: "[x]\ny = a\\;b\\nc\n").values("x.y") == ["a;b\nc"])
        #expect(NotmuchConfig(text: " \t[user] \n\tname = Zoë Ünal\n").values("user.name") == ["Zoë Ünal"])
    }

    @Test(arguments: [("", ""), (" \t ", ""), ("a", "a"), (" \tZoë\t ", "Zoë"), ("é", "é"), ("\t名前 = 値 ", "名前 = 値")])
    func trimmedTakesSpacesAndTabsOffBothEnds(input: String, output: String) {
        #expect(NotmuchConfig.trimmed(input) == output)
    }

    @Test func writesOneLineKeepingTheRest() {
        var c = NotmuchConfig(text: Self.text)
        c.set("user.name", ["Other"])
        c.set("foo.list", ["this", "is a", "list value"])
        c.set("database.path", [])
        c.set("user.primary_email", ["me@x"])
        #expect(
            c.text
                == "# mine\n[database]\n\n[user]\nname=Other\nother_email=a@x;b@x\nprimary_email=me@x\n\n[foo]\nlist=this;is a;list value;\n"
        )
        #expect(c.values("foo.list") == ["this", "is a", "list value"])
        #expect(c.rawValue("foo.list") == "this;is a;list value;")
        c.set("new.tags", ["foo;;bar"])  // one value: a string, its ';' kept
        #expect(c.values("new.tags") == ["foo", "", "bar"])
    }

    /// `show.extra_headers`: each named header's first field, as written, unfolded (a fold's tab kept) and
    /// decoded, after Date; one the message lacks is left out.
    @Test func extraHeaders() {
        let bytes = Array("Subject: s\nFrom: a@b\nReceived: from x\n\tby y\nX-Note: =?utf-8?q?caf=C3=A9?=\n\nbody\n".utf8)
        var layout = ShowFormat(now: 0)
        layout.extraHeaders = ["received", "X-Note", "X-Absent"]
        var out: [UInt8] = []
        var p = Sprinter(.json) { out += $0 }
        layout.headers(MIMEParser.parse(bytes).headers, to: &p)
        p.flush()
        #expect(
            String(decoding: out, as: UTF8.self)
                == "{\"Subject\": \"s\", \"From\": \"a@b\", \"Date\": \"Thu, 01 Jan 1970 00:00:00 +0000\", \"Received\": \"from x\\tby y\", \"X-Note\": \"café\"}\n"
        )
    }

    /// `--format=raw --part=N` of a multipart that tops a message (the root, or an embedded message's):
    /// only its `Content-*` fields (GMime keeps the others on the message), then its body; a nested
    /// multipart whole, as it stands.
    @Test func rawTopMultipartKeepsContentFields() {
        let text =
            "From: a@b\nSubject: s\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n--B\n"
            + "Content-Type: multipart/alternative; boundary=C\nX-Inner: 1\n\n--C\n\nalt\n--C--\n--B\n"
            + "Content-Type: message/rfc822\n\nFrom: c@d\nContent-Type: multipart/mixed; boundary=D\n\n--D\n\nin\n--D--\n--B--\n"
        let bytes = Array(text.utf8)
        let body = ShownMessage.Body(bytes: bytes, root: MIMEParser.parse(bytes))
        func raw(_ n: Int) -> String { String(decoding: body.raw(body.part(n)!), as: UTF8.self) }
        #expect(raw(1).hasPrefix("Content-Type: multipart/mixed; boundary=B\n\n--B\n"))
        #expect(raw(2).hasPrefix("Content-Type: multipart/alternative; boundary=C\nX-Inner: 1\n\n--C"))
        #expect(raw(5).hasPrefix("Content-Type: multipart/mixed; boundary=D\n\n--D\n"))
        #expect(raw(4).hasPrefix("From: c@d\nContent-Type: multipart/mixed"))
    }
}
