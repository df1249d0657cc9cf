import Testing
@testable import MailMessage

private func b(_ s: String) -> [UInt8] { Array(s.utf8) }

@Suite struct TransferTests {
    @Test(arguments: [
        ("aGVsbG8gd29ybGQ=", "hello world"),
        ("aGVs\r\nbG8g\nd29y bGQ", "hello world"),  // line breaks, missing padding
        ("aGV*sbG8!!", "hello"),  // junk skipped
        ("aGVsbG8=junk==", "hello")  // decoding goes on past '=': prefix checked
    ])
    func base64(input: String, expected: String) {
        let out = TransferDecoding.base64(b(input))
        #expect(out.starts(with: b(expected)))
    }

    @Test(arguments: [
        ("a=3Db", "a=b"),
        ("soft=\r\nbreak", "softbreak"),
        ("soft= \nbreak", "softbreak"),
        ("bad=ZZescape", "bad=ZZescape"),
        ("end=", "end"),
        ("caf=C3=A9", "café"),
        ("lower=c3=a9", "loweré")
    ])
    func quotedPrintable(input: String, expected: String) {
        #expect(String(decoding: TransferDecoding.quotedPrintable(b(input)), as: UTF8.self) == expected)
    }
}

@Suite struct ContentTypeTests {
    @Test func parameters() {
        let ct = ContentType.parse(b("Text/HTML; charset=\"ISO-8859-1\"; format=flowed (comment); name=My File.txt"))!
        #expect(ct.mimeType == "text/html")
        #expect(ct.parameters["charset"] == "ISO-8859-1")
        #expect(ct.parameters["format"] == "flowed")
        #expect(ct.parameters["name"] == "My File.txt")
        #expect(ContentType.parse(b("garbage")) == nil)
    }

    @Test(arguments: [
        ("attachment; filename*=utf-8''%E2%82%AC%20rates.pdf", "€ rates.pdf"),
        ("attachment; filename*0*=iso-8859-1'fr'caf%E9; filename*1=\"-menu\"; filename*2*=.txt", "café-menu.txt"),
        ("attachment; filename*1=\"b.txt\"; filename*0=\"a\"", "ab.txt"),
        ("attachment; filename=\"=?utf-8?B?w6l0w6kucGRm?=\"", "été.pdf"),
        ("attachment; filename=\"old.txt\"; filename*=utf-8''new.txt", "new.txt"),
        ("inline; filename=\"a\\\"q.txt\"", "a\"q.txt")
    ])
    func rfc2231Filenames(input: String, expected: String) {
        #expect(ContentType.parseDisposition(b(input)).parameters["filename"] == expected)
    }
}

@Suite struct MIMETreeTests {
    static let nested = """
        From: a@b
        Subject: nested
        Content-Type: multipart/mixed; boundary="outer"

        preamble
        --outer
        Content-Type: multipart/alternative; boundary=inner

        --inner
        Content-Type: text/plain; charset=utf-8
        Content-Transfer-Encoding: quoted-printable

        plain caf=C3=A9
        --inner
        Content-Type: text/html

        <p>html</p>
        --inner--
        --outer
        Content-Type: application/pdf; name="doc.pdf"
        Content-Disposition: attachment; filename*=utf-8''r%C3%A9sum%C3%A9.pdf
        Content-Transfer-Encoding: base64

        JVBERi0xLjQK
        --outer
        Content-Type: message/rfc822

        Subject: inner message
        From: c@d

        inner body
        --outer--
        epilogue
        """

    @Test func nestedTree() {
        let m = ParsedMessage.parse(b(Self.nested))
        #expect(
            m.mimeTypes == [
                "multipart/mixed", "multipart/alternative", "text/plain", "text/html",
                "application/pdf", "message/rfc822", "text/plain"
            ])
        #expect(m.attachments == [Attachment(filename: "résumé.pdf", mimeType: "application/pdf", size: 9)])
        #expect(m.bodyText.contains("plain café"))
        #expect(m.bodyText.contains("html"))  // every alternative, as notmuch indexes them
        let reading = ParsedMessage.parse(b(Self.nested), bodyText: .reading)
        #expect(reading.bodyText.contains("plain café"))
        #expect(!reading.bodyText.contains("html"))  // one rendering for a reader
        #expect(m.bodyText.contains("inner message") && m.bodyText.contains("inner body"))
        #expect(!m.bodyText.contains("preamble") && !m.bodyText.contains("epilogue"))
    }

    @Test(
        "broken MIME",
        arguments: [
            // Missing closing boundary: last part runs to the end.
            ("Content-Type: multipart/mixed; boundary=x\n\n--x\n\nfirst\n--x\n\nsecond truncated", ["first", "second truncated"]),
            // Missing boundary parameter: read as text.
            ("Content-Type: multipart/mixed\n\nlooks like text", ["looks like text"]),
            // Boundary never appears: text.
            ("Content-Type: multipart/mixed; boundary=nope\n\njust text", ["just text"]),
            // A boundary that is a prefix of another line is not matched.
            ("Content-Type: multipart/mixed; boundary=ab\n\n--ab\n\none\n--abc\nstill one\n--ab--", ["one\n--abc\nstill one"]),
            // Part without headers (no blank line) and unknown charset.
            (
                "Content-Type: multipart/mixed; boundary=b\n\n--b\nno headers here\n--b\nContent-Type: text/plain; charset=x-nonsense\n\nok\n--b--",
                ["ok"]
            ),
            // Bad base64 in a text part.
            ("Content-Transfer-Encoding: base64\n\naGVs!!bG8\n", ["hello"]),
            // Bad quoted-printable left literal.
            ("Content-Transfer-Encoding: quoted-printable\n\na=ZZb=\n", ["a=ZZb"])
        ])
    func broken(body: String, expected: [String]) {
        let m = ParsedMessage.parse(b("From: a@b\n" + body))
        for e in expected { #expect(m.bodyText.contains(e), "\(m.bodyText)") }
    }

    @Test func deepNestingIsBounded() {
        var s = "From: a@b\n"
        for i in 0..<200 { s += "Content-Type: multipart/mixed; boundary=b\(i)\n\n--b\(i)\n" }
        s += "\ndeep text\n"
        let m = ParsedMessage.parse(b(s))
        #expect(m.mimeTypes.count <= MIMEParser.maxDepth + 2)
    }

    @Test func binaryGarbage() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let n = Int.random(in: 0..<20_000, using: &rng)
            var bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = ParsedMessage.parse(bytes)
            bytes = b("Content-Type: multipart/mixed; boundary=\"\"\n\n") + bytes
            _ = ParsedMessage.parse(bytes)
        }
    }

    @Test("5 MB base64 attachment")
    func bigAttachment() {
        let payload = [UInt8]((0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let encoded = base64Encode(payload)
        let msg =
            b(
                "From: a@b\nSubject: big\nContent-Type: multipart/mixed; boundary=zz\n\n--zz\n\nsee attached\n--zz\n"
                    + "Content-Type: application/octet-stream; name=blob.bin\nContent-Transfer-Encoding: base64\n\n")
            + encoded + b("\n--zz--\n")
        let m = ParsedMessage.parse(msg)
        #expect(m.attachments == [Attachment(filename: "blob.bin", mimeType: "application/octet-stream", size: 5 << 20)])
        #expect(m.bodyText == "see attached")
        let part = m.root.allParts.first { $0.isAttachment }!
        #expect(part.decodedBody(in: msg) == payload)
    }

    @Test func bodyTextIsCapped() {
        let m = ParsedMessage.parse(b("From: a@b\n\n") + [UInt8](repeating: UInt8(ascii: "w"), count: 3 << 20))
        #expect(m.bodyText.utf8.count <= ParsedMessage.bodyTextLimit)
    }

    @Test func htmlText() {
        let html =
            "<html><head><style>p{x}</style><script>var a='<b>';</script></head><body><p>Caf&eacute; &amp; "
            + "&#233;&#x20AC;&#150;<br>line<!-- hidden -->two</p><a href=\"x>y\">link</a>&bogus; a < b</body></html>"
        let t = HTMLText.plainText(html)
        #expect(t.contains("Café & é€–"))
        #expect(t.contains("line") && t.contains("two") && t.contains("link") && t.contains("&bogus; a < b"))
        #expect(!t.contains("var a") && !t.contains("p{x}") && !t.contains("hidden") && !t.contains("href"))
    }

    @Test(
        arguments: [
            ("iso-8859-15", [0xA4], "€"), ("windows-1252", [0x80], "€"), ("koi8-r", [0xF0], "П"),
            ("euc-jp", [0xC6, 0xFC], "日"), ("gbk", [0xD6, 0xD0], "中"), ("gb18030", [0xD6, 0xD0], "中"),
            ("big5", [0xA7, 0x4B], "免"), ("euc-kr", [0xC7, 0xD1], "한"), ("shift_jis", [0x93, 0xFA], "日"),
            ("us-ascii", [0xE9], "é"), ("utf-8", [0xC3, 0xA9], "é"), ("x-unknown", [0xFF], "ÿ"),
            ("utf-8", [0x61, 0xFF, 0x62], "a\u{FFFD}b")
        ] as [(String, [UInt8], String)])
    func charsets(label: String, bytes: [UInt8], expected: String) {
        if label == "utf-8" && bytes.contains(0xFF) {
            #expect(String(decoding: bytes, as: UTF8.self) == expected)
        } else {
            #expect(Charset.decode(bytes, label: label) == expected)
        }
    }

    @Test func invalidSequencesInIconvCharset() {
        #expect(Charset.decode([0x61, 0x81, 0x62], label: "euc-jp").contains("a"))
        #expect(Charset.decode([0xA7], label: "big5").contains("\u{FFFD}"))  // truncated
    }
}

func base64Encode(_ bytes: [UInt8]) -> [UInt8] {
    let t = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 4 / 3 + bytes.count / 57 + 8)
    var i = 0
    var col = 0
    while i < bytes.count {
        let n = min(3, bytes.count - i)
        let v = (UInt32(bytes[i]) << 16) | (n > 1 ? UInt32(bytes[i + 1]) << 8 : 0) | (n > 2 ? UInt32(bytes[i + 2]) : 0)
        out.append(t[Int(v >> 18 & 63)]); out.append(t[Int(v >> 12 & 63)])
        out.append(n > 1 ? t[Int(v >> 6 & 63)] : UInt8(ascii: "=")); out.append(n > 2 ? t[Int(v & 63)] : UInt8(ascii: "="))
        i += 3
        col += 4
        if col == 76 { out.append(0x0A); col = 0 }
    }
    return out
}
