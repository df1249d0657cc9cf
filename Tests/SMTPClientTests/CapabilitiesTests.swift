import Testing
@testable import SMTPClient

struct CapabilitiesTests {
    @Test func postfixEHLOReply() {
        let reply = SMTPReply(
            code: 250,
            lines: [
                "smtp.mo.test", "PIPELINING", "SIZE 60000000", "VRFY", "ETRN", "STARTTLS", "AUTH PLAIN LOGIN",
                "auth=LOGIN CRAM-MD5", "ENHANCEDSTATUSCODES", "8BITMIME", "DSN", "SMTPUTF8", "CHUNKING"
            ])
        let caps = SMTPCapabilities(ehloReply: reply)
        #expect(caps.greeting == "smtp.mo.test")
        #expect(caps.maxSize == 60_000_000)
        #expect(caps.sizeExtension && caps.pipelining && caps.startTLS && caps.enhancedStatusCodes)
        #expect(caps.eightBitMIME && caps.dsn && caps.smtpUTF8)
        #expect(caps.authMechanisms == ["PLAIN", "LOGIN", "CRAM-MD5"])
        #expect(caps.offers("chunking") && !caps.offers("BINARYMIME"))
    }

    @Test func sizeZeroMeansNoLimitAndMissingKeywordsAreOff() {
        let caps = SMTPCapabilities(ehloReply: SMTPReply(code: 250, lines: ["host", "SIZE 0"]))
        #expect(caps.sizeExtension && caps.maxSize == nil)
        #expect(!caps.startTLS && !caps.eightBitMIME && caps.authMechanisms.isEmpty)
        let bare = SMTPCapabilities(ehloReply: SMTPReply(code: 250, lines: ["host"]))
        #expect(!bare.sizeExtension && bare.maxSize == nil)
    }
}
