import IMAPCodec
import Testing

@Suite struct MailboxRoleTests {
    /// The first selectable mailbox with the attribute plays the role; a name alone plays none.
    @Test func rolesComeFromSelectableMailboxesWithTheAttribute() {
        let boxes = [
            ListResponse(attributes: [.noSelect, .sent], delimiter: UInt8(ascii: "/"), mailbox: MailboxName("Old")),
            ListResponse(attributes: [.sent, .hasNoChildren], delimiter: UInt8(ascii: "/"), mailbox: MailboxName("Sent Items")),
            ListResponse(attributes: [.sent], delimiter: UInt8(ascii: "/"), mailbox: MailboxName("Sent 2")),
            ListResponse(attributes: [.nonExistent, .trash], delimiter: UInt8(ascii: "/"), mailbox: MailboxName("Gone")),
            ListResponse(attributes: [], delimiter: UInt8(ascii: "/"), mailbox: MailboxName("Trash")),
            ListResponse(attributes: [.junk], delimiter: UInt8(ascii: "/"), mailbox: MailboxName("Spam"))
        ]
        let roles = MailboxRole.roles(in: boxes).map { "\($0.role.rawValue) \($0.mailbox.decoded ?? "")" }
        #expect(roles == ["sent Sent Items", "junk Spam"])
        #expect(MailboxRole.trash.mailbox(in: boxes) == nil)
    }
}
