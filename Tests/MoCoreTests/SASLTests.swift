import Testing
import MoCore

/// The one SASL and Base64 (IMAP AUTHENTICATE and SMTP AUTH both use them).
@Suite struct SASLTests {
    @Test func passwordPayloads() {
        #expect(Base64.encode(SASL.plain(user: "mo", password: "secret")) == "AG1vAHNlY3JldA==")  // \0mo\0secret
        #expect(SASL.login(user: "mo", password: "secret").map { Base64.encode($0) } == ["bW8=", "c2VjcmV0"])
        #expect(SASL.xoauth2(user: "u@mo.test", token: "TOKEN") == Array("user=u@mo.test\u{1}auth=Bearer TOKEN\u{1}\u{1}".utf8))
    }

    /// RFC 7628 with RFC 5801's saslname: `,` and `=` in the authzid are escaped. The IMAP copy sent them
    /// raw (a user `a,b=c` made an unparseable GS2 header); the SMTP copy escaped them, and wins.
    @Test func oauthBearerEscapesCommaAndEqualsInTheUser() {
        #expect(SASL.oauthBearer(user: "a,b=c", token: "T") == Array("n,a=a=2Cb=3Dc,\u{1}auth=Bearer T\u{1}\u{1}".utf8))
        #expect(SASL.saslname("=,x,=") == "=3D=2Cx=2C=3D")
        #expect(SASL.saslname("plain@mo.test") == "plain@mo.test")
    }

    /// IMAP sends the optional host and port pairs, SMTP leaves them out; both forms come from here.
    @Test func oauthBearerHostAndPortWhenGiven() {
        #expect(
            SASL.oauthBearer(user: "u", token: "T", host: "imap.mo.test", port: 993)
                == Array("n,a=u,\u{1}host=imap.mo.test\u{1}port=993\u{1}auth=Bearer T\u{1}\u{1}".utf8))
        #expect(SASL.oauthBearerErrorAcknowledgement == [1])
    }

    @Test(arguments: ["", "f", "fo", "foo", "foob", "fooba", "foobar"])
    func base64RoundTrips(_ text: String) {
        // RFC 4648 §10 test vectors.
        let expected = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy"
        ]
        #expect(Base64.encode(Array(text.utf8)) == expected[text])
        #expect(Base64.decode(expected[text]!) == Array(text.utf8))
    }

    @Test func base64EncodesEveryByteAndRefusesJunk() {
        let all = (0...255).map(UInt8.init)
        #expect(Base64.decode(Base64.encode(all)) == all)
        #expect(Base64.decode("Zm9v\r\nYmFy") == Array("foobar".utf8))
        #expect(Base64.decode("Zm9v*") == nil)
    }
}
