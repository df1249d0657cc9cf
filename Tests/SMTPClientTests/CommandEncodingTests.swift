import Testing
@testable import SMTPClient

struct CommandEncodingTests {
    @Test func commandsEncodeWithCRLF() {
        #expect(SMTPCommand.ehlo("client.mo.test").bytes == Array("EHLO client.mo.test\r\n".utf8))
        #expect(SMTPCommand.startTLS.text == "STARTTLS")
        #expect(SMTPCommand.data.text == "DATA")
        #expect(SMTPCommand.rset.text == "RSET")
        #expect(SMTPCommand.quit.text == "QUIT")
        #expect(SMTPCommand.mailFrom("", MailParameters()).text == "MAIL FROM:<>")
        #expect(SMTPCommand.mailFrom("a@mo.test", MailParameters(size: 1234, eightBitMIME: true, smtpUTF8: true,
                                                                  ret: .headers, envelopeID: "id+1=x y")).text
                == "MAIL FROM:<a@mo.test> SIZE=1234 BODY=8BITMIME SMTPUTF8 RET=HDRS ENVID=id+2B1+3Dx+20y")
        #expect(SMTPCommand.rcptTo("b@mo.test", notify: nil).text == "RCPT TO:<b@mo.test>")
        #expect(SMTPCommand.rcptTo("b@mo.test", notify: .on(success: true, failure: true, delay: false)).text
                == "RCPT TO:<b@mo.test> NOTIFY=SUCCESS,FAILURE")
        #expect(SMTPCommand.rcptTo("b@mo.test", notify: .never).text == "RCPT TO:<b@mo.test> NOTIFY=NEVER")
    }

    @Test func sendmailNotifyArgument() {
        #expect(DSNNotify(sendmailArgument: "never") == .never)
        #expect(DSNNotify(sendmailArgument: "failure,delay") == .on(success: false, failure: true, delay: true))
        #expect(DSNNotify(sendmailArgument: "bogus") == nil)
        #expect(DSNNotify(sendmailArgument: "") == nil)
    }

    @Test func saslPayloads() {
        // base64("\0mo\0secret")
        #expect(SASL.plain(user: "mo", password: "secret") == "AG1vAHNlY3JldA==")
        #expect(SASL.login(user: "mo", password: "secret") == ["bW8=", "c2VjcmV0"])
        #expect(Base64.decode(SASL.xoauth2(user: "u@mo.test", token: "TOKEN"))
                == Array("user=u@mo.test\u{1}auth=Bearer TOKEN\u{1}\u{1}".utf8))
        #expect(Base64.decode(SASL.oauthBearer(user: "a,b=c", token: "T"))
                == Array("n,a=a=2Cb=3Dc,\u{1}auth=Bearer T\u{1}\u{1}".utf8))
    }

    @Test func authPayloadsAreRedactedInTheTrace() {
        let auth = SMTPCommand.auth(mechanism: "PLAIN", initialResponse: SASL.plain(user: "mo", password: "secret"))
        #expect(auth.redactedText == "AUTH PLAIN <redacted>")
        #expect(SMTPCommand.auth(mechanism: "LOGIN", initialResponse: nil).redactedText == "AUTH LOGIN")
        #expect(SMTPCommand.authResponse("c2VjcmV0").redactedText == "<redacted>")
    }

    @Test(arguments: ["", "f", "fo", "foo", "foob", "fooba", "foobar"])
    func base64RoundTrips(_ text: String) {
        let expected = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
                        "foobar": "Zm9vYmFy"]
        #expect(Base64.encode(Array(text.utf8)) == expected[text])
        #expect(Base64.decode(expected[text]!) == Array(text.utf8))
    }
}
