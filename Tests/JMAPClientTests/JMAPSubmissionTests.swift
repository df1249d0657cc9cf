import JMAPClient
import MoCore
import Testing

/// The pure parts of sending through a JMAP server (RFC 8621 §6, §7): which identity, and the bytes of the
/// `EmailSubmission/set` arguments.
@Suite struct JMAPSubmissionTests {
    static let identities = [
        JMAPIdentity(id: "i1", email: "work@example.org"), JMAPIdentity(id: "i2", email: "*@example.net"),
        JMAPIdentity(id: "i3", email: "Me@Example.com")
    ]

    @Test(arguments: [
        ("work@example.org", "i1"),  // the address itself
        ("me@example.com", "i3"),  // case ignored
        ("anyone@example.net", "i2"),  // the domain's wildcard
        ("other@elsewhere.test", "i1")  // none: the first
    ])
    func identityForTheSender(sender: String, id: String) {
        #expect(JMAPIdentity.choose(for: sender, in: Self.identities)?.id == id)
    }

    @Test func cyrusIdentityWithoutAnAddressAndNoIdentityAtAll() {
        #expect(JMAPIdentity.choose(for: "mo@example.org", in: [JMAPIdentity(id: "mo", email: "")])?.id == "mo")
        #expect(JMAPIdentity.choose(for: "mo@example.org", in: []) == nil)
    }

    @Test func submissionMovesToSentAndTakesTheEnvelopeParameters() {
        let envelope = JMAPEnvelope(
            mailFrom: "mo@example.org", rcptTo: ["a@x.test", "b@x.test"], mailParameters: [("RET", "HDRS")],
            rcptParameters: [("NOTIFY", "FAILURE,DELAY")])
        let args = JMAPClient.submission(
            account: "u1", emailID: "M1", identity: "i1", envelope: envelope, then: .moveToSent(drafts: "d", sent: "s"))
        #expect(
            args.text
                == #"{"accountId":"u1","create":{"s":{"identityId":"i1","emailId":"M1","envelope":{"mailFrom":{"email":"mo@example.org","parameters":{"RET":"HDRS"}},"#
                + #""rcptTo":[{"email":"a@x.test","parameters":{"NOTIFY":"FAILURE,DELAY"}},{"email":"b@x.test","parameters":{"NOTIFY":"FAILURE,DELAY"}}]}}},"#
                + ##""onSuccessUpdateEmail":{"#s":{"mailboxIds/d":null,"mailboxIds/s":true,"keywords/$draft":null}}}"##)
    }

    @Test func submissionWithoutASentCopyDestroysTheEmail() {
        let args = JMAPClient.submission(
            account: "u1", emailID: "M1", identity: "i1", envelope: JMAPEnvelope(mailFrom: "", rcptTo: ["a@x.test"]), then: .destroy)
        #expect(
            args.text
                == #"{"accountId":"u1","create":{"s":{"identityId":"i1","emailId":"M1","envelope":{"mailFrom":{"email":""},"rcptTo":[{"email":"a@x.test"}]}}},"#
                + ##""onSuccessDestroyEmail":["#s"]}"##)
    }

    @Test(arguments: [("invalidRecipients", ErrorKind.unavailable), ("forbiddenFrom", .unavailable), ("rateLimit", .temporary)])
    func refusalsFailForGoodExceptRateLimits(type: String, kind: ErrorKind) {
        #expect(SubmissionRefused(type: type, detail: nil).kind == kind)
    }
}
