import Testing
@testable import AccountSetup
import MoHTTP
import MoConfig

/// The autoconfig XML subset and the HTTP response parser, on text and byte fixtures.
@Suite struct AutoconfigTests {
    /// Shaped like the files in Thunderbird's ISPDB.
    static let file = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!-- a comment with <tags> in it -->
        <clientConfig version="1.1">
          <emailProvider id="example.org">
            <domain>example.org</domain>
            <displayName>Example &amp; Co</displayName>
            <incomingServer type="pop3">
              <hostname>pop.example.org</hostname><port>995</port><socketType>SSL</socketType>
            </incomingServer>
            <incomingServer type="imap">
              <hostname>imap.%EMAILDOMAIN%</hostname>
              <port>143</port>
              <socketType>plain</socketType>
              <authentication>password-cleartext</authentication>
              <username>%EMAILADDRESS%</username>
            </incomingServer>
            <incomingServer type='imap'>
              <hostname> imap.example.org </hostname>
              <port>993</port>
              <socketType>SSL</socketType>
              <authentication>password-encrypted</authentication>
              <authentication>password-cleartext</authentication>
              <username>%EMAILLOCALPART%</username>
            </incomingServer>
            <outgoingServer type="smtp">
              <hostname>smtp.example.org</hostname>
              <port>587</port>
              <socketType>STARTTLS</socketType>
              <authentication>password-cleartext</authentication>
              <username>%EMAILADDRESS%</username>
            </outgoingServer>
            <documentation url="https://example.org/help?a=1&amp;b=2"><descr lang="en">Help</descr></documentation>
          </emailProvider>
        </clientConfig>
        """

    @Test func readsTheServersItNeeds() throws {
        let parsed = try AutoconfigXML.parse(Array(Self.file.utf8))
        #expect(parsed.incoming.map(\.type) == ["pop3", "imap", "imap"])
        #expect(parsed.incoming[2].hostname == "imap.example.org" && parsed.incoming[2].authentication.count == 2)
        let s = try #require(
            AutoconfigXML.settings(
                incoming: parsed.incoming, outgoing: parsed.outgoing,
                address: "me@example.org", source: "test"))
        // The plain server is passed over; the local part is the login name.
        #expect(s.imap == ServerEndpoint(host: "imap.example.org", port: 993, tls: .implicit, auth: .auto, user: "me"))
        #expect(s.smtp == ServerEndpoint(host: "smtp.example.org", port: 587, tls: .starttls, auth: .auto, user: nil))
        #expect(s.login == .password)
    }

    @Test func oauthOnlyServer() throws {
        let xml = """
            <clientConfig><emailProvider><incomingServer type="imap"><hostname>imap.example.org</hostname><port>993</port>
            <socketType>SSL</socketType><authentication>OAuth2</authentication></incomingServer></emailProvider></clientConfig>
            """
        let parsed = try AutoconfigXML.parse(Array(xml.utf8))
        let s = try #require(
            AutoconfigXML.settings(incoming: parsed.incoming, outgoing: parsed.outgoing, address: "me@example.org", source: "t"))
        #expect(s.imap.auth == .xoauth2 && s.login == .oauth2 && s.smtp == nil)
    }

    /// Hosts that are not host names, bad ports and plain-only servers give no settings.
    @Test(arguments: [
        "<hostname>imap.example.org\u{1B}[2J</hostname><port>993</port><socketType>SSL</socketType>",
        "<hostname>imap.example.org/x</hostname><port>993</port><socketType>SSL</socketType>",
        "<hostname>imap.example.org</hostname><port>99999</port><socketType>SSL</socketType>",
        "<hostname>imap.example.org</hostname><port>143</port><socketType>plain</socketType>",
        "<port>993</port><socketType>SSL</socketType>"
    ])
    func unusableServers(inner: String) throws {
        let xml = "<clientConfig><emailProvider><incomingServer type=\"imap\">\(inner)</incomingServer></emailProvider></clientConfig>"
        let parsed = try AutoconfigXML.parse(Array(xml.utf8))
        #expect(AutoconfigXML.settings(incoming: parsed.incoming, outgoing: parsed.outgoing, address: "me@example.org", source: "t") == nil)
    }

    @Test(arguments: [
        ("a DOCTYPE (entities)", "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><clientConfig>&e;</clientConfig>"),
        ("an unknown entity", "<clientConfig>&e;</clientConfig>"),
        ("CDATA", "<clientConfig><![CDATA[x]]></clientConfig>"),
        ("a mismatched end tag", "<clientConfig><a></b></clientConfig>"),
        ("an element left open", "<clientConfig><a>"),
        ("an unterminated comment", "<clientConfig><!-- x"),
        ("an unterminated tag", "<clientConfig"),
        ("an attribute without quotes", "<clientConfig version=1.1></clientConfig>"),
        ("a bare &", "<clientConfig>a & b</clientConfig>"),
        ("NUL by reference", "<clientConfig>&#0;</clientConfig>"),
        ("deep nesting", String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40)),
        ("long text", "<a>" + String(repeating: "x", count: 2000) + "</a>"),
        ("too many elements", "<a>" + String(repeating: "<b/>", count: 5000) + "</a>"),
        ("too large", "<a>" + String(repeating: " ", count: 70_000) + "</a>")
    ])
    func refused(label: String, xml: String) {
        #expect(throws: (any Error).self, "\(label)") { try AutoconfigXML.parse(Array(xml.utf8)) }
    }

    // MARK: - HTTP responses

    static func parse(_ text: String, chunkSize: Int = 1 << 30, maxBody: Int = 1000, end: Bool = true) throws -> (Int, String) {
        var p = HTTPResponseParser(maxBody: maxBody)
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count, !p.isComplete {
            try p.append(bytes[i..<min(bytes.count, i + chunkSize)])
            i += chunkSize
        }
        if end { try p.finish() }
        return (p.status, String(decoding: p.body, as: UTF8.self))
    }

    @Test(arguments: [1, 2, 7, 1 << 30])
    func responsesInAnyPieces(chunkSize: Int) throws {
        #expect(try Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", chunkSize: chunkSize) == (200, "hello"))
        #expect(
            try Self.parse(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nX: y\r\n\r\n",
                chunkSize: chunkSize) == (200, "hello world"))
        #expect(try Self.parse("HTTP/1.0 404 Not Found\nServer: x\n\nnot here", chunkSize: chunkSize) == (404, "not here"))
        #expect(
            try Self.parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", chunkSize: chunkSize) == (
                200, "ok"
            ))
    }

    @Test(arguments: [
        ("not HTTP", "SSH-2.0-OpenSSH\r\n\r\n"),
        ("a status that is not 3 digits", "HTTP/1.1 2000 OK\r\n\r\n"),
        ("a body over the limit", "HTTP/1.1 200 OK\r\nContent-Length: 1001\r\n\r\n"),
        ("chunks over the limit", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n"),
        ("a body to the end over the limit", "HTTP/1.1 200 OK\r\n\r\n" + String(repeating: "x", count: 1001)),
        ("a bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        ("a chunk longer than its size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n0\r\n\r\n"),
        ("another transfer coding", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n"),
        ("two Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
        ("a header line without a colon", "HTTP/1.1 200 OK\r\nbroken\r\n\r\n"),
        ("a header too large", "HTTP/1.1 200 OK\r\n" + String(repeating: "X: y\r\n", count: 4000) + "\r\n"),
        ("a body cut short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
        ("chunks cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab")
    ])
    func refusedResponses(label: String, text: String) {
        #expect(throws: (any Error).self, "\(label)") { _ = try Self.parse(text) }
    }
}
