import Testing
import MoCore
@testable import SMTPClient

struct CommandEncodingTests {
    @Test func commandsEncodeWithCRLF() {
        #expect(SMTPCommand.ehlo("client.mo.test").bytes == Array("EHLO client.mo.test\r\n".utf8))
        #expect(SMTPCommand.startTLS.text == "STARTTLS")
        #expect(SMTPCommand.data.text == "DATA")
        #expect(SMTPCommand.rset.text == "RSET")
        #expect(SMTPCommand.quit.text == "QUIT")
        #expect(SMTPCommand.mailFrom("", MailParameters()).text == "MAIL FROM:<>")
        #expect(
            SMTPCommand.mailFrom(
                "a@mo.test",
                MailParameters(
                    size: 1234, eightBitMIME: true, smtpUTF8: true,
                    ret: .headers, envelopeID: "id+1=x y")
            ).text
                == "MAIL FROM:<a@mo.test> SIZE=1234 BODY=8BITMIME SMTPUTF8 RET=HDRS ENVID=id+2B1+3Dx+20y")
        #expect(SMTPCommand.rcptTo("b@mo.test", notify: nil).text == "RCPT TO:<b@mo.test>")
        #expect(
            SMTPCommand.rcptTo("b@mo.test", notify: .on(success: true, failure: true, delay: false)).text
                == "RCPT TO:<b@mo.test> NOTIFY=SUCCESS,FAILURE")
        #expect(SMTPCommand.rcptTo("b@mo.test", notify: .never).text == "RCPT TO:<b@mo.test> NOTIFY=NEVER")
    }

    @Test func sendmailNotifyArgument() {
        #expect(DSNNotify(sendmailArgument: "never") == .never)
        #expect(DSNNotify(sendmailArgument: "failure,delay") == .on(success: false, failure: true, delay: true))
        #expect(DSNNotify(sendmailArgument: "bogus") == nil)
        #expect(DSNNotify(sendmailArgument: "") == nil)
    }

    @Test func authPayloadsAreRedactedInTheTrace() {
        let auth = SMTPCommand.auth(mechanism: "PLAIN", initialResponse: Base64.encode(SASL.plain(user: "mo", password: "secret")))
        #expect(auth.redactedText == "AUTH PLAIN <redacted>")
        #expect(SMTPCommand.auth(mechanism: "LOGIN", initialResponse: nil).redactedText == "AUTH LOGIN")
        #expect(SMTPCommand.authResponse("c2VjcmV0").redactedText == "<redacted>")
    }
}
